package fs_test

import (
	"bytes"
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

func newStorage(t *testing.T) *fs.Storage {
	t.Helper()
	s, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	tier2test.RunStorageTests(t, func(t *testing.T) tier2.Storage { return newStorage(t) })
}

func mode(t *testing.T, name string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Chunks land 0444 and directories 0755 whatever the umask, and the
// temporary-then-rename flow leaves only the chunk.
func TestModesAndTempFlow(t *testing.T) {
	old := unix.Umask(0o077) // would leave 0400 and 0700
	t.Cleanup(func() { unix.Umask(old) })
	s := newStorage(t)
	tmp := tier2.TempChunkPath("sc", "st", 2, 77)
	final := tier2.ChunkPath("sc", "st", 2, 77)
	tier2test.Put(t, s, tmp, []byte("chunk bytes"))
	if err := s.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	root := s.Root()
	if m := mode(t, filepath.Join(root, final)); m != 0o444 {
		t.Errorf("chunk mode %v, want 0444", m)
	}
	for _, d := range []string{"sc", "sc/st", tier2.SegmentDir("sc", "st", 2)} {
		if m := mode(t, filepath.Join(root, d)); m != 0o755 {
			t.Errorf("directory %s mode %v, want 0755", d, m)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, tier2.SegmentDir("sc", "st", 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != tier2.ChunkName(77) {
		t.Fatalf("segment directory holds %v, want the chunk alone", entries)
	}
	b, err := os.ReadFile(filepath.Join(root, final))
	if err != nil || string(b) != "chunk bytes" {
		t.Fatalf("chunk on disk = %q, %v", b, err)
	}
	// Nobody may write the chunk now, and RemoveAll still removes it.
	if f, err := os.OpenFile(filepath.Join(root, final), os.O_WRONLY, 0); err == nil && os.Geteuid() != 0 {
		f.Close()
		t.Error("a 0444 chunk opened for writing")
	}
	if err := s.RemoveAll("sc"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sc")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sc after RemoveAll: %v", err)
	}
}

// No path reaches outside the root: nothing is made or removed next to it.
func TestNoEscape(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	s, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "victim"), []byte("v"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../victim", "../escaped", "a/../../escaped", parent + "/escaped", "../root/../victim", "..", `..\victim`} {
		if _, err := s.Create(p); !errors.Is(err, tier2.ErrInvalidPath) {
			t.Errorf("Create(%q) = %v, want ErrInvalidPath", p, err)
		}
		if err := s.RemoveAll(p); !errors.Is(err, tier2.ErrInvalidPath) {
			t.Errorf("RemoveAll(%q) = %v, want ErrInvalidPath", p, err)
		}
		if err := s.Rename("../victim", "x"); !errors.Is(err, tier2.ErrInvalidPath) {
			t.Errorf("Rename from outside = %v, want ErrInvalidPath", err)
		}
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("next to the root: %v, want root and victim only", entries)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("root holds %v, want nothing", entries)
	}
}

// Errors name the storage path, never the root, and classify.
func TestErrorsNamePath(t *testing.T) {
	s := newStorage(t)
	tier2test.Put(t, s, "d/f", []byte("x"))
	_, err := s.Open("d/missing")
	if !errors.Is(err, tier2.ErrNotExist) || !strings.Contains(err.Error(), `"d/missing"`) || strings.Contains(err.Error(), s.Root()) {
		t.Fatalf("Open(missing) = %v", err)
	}
	_, err = s.Create("d/f")
	if !errors.Is(err, tier2.ErrExist) || !strings.Contains(err.Error(), `"d/f"`) {
		t.Fatalf("Create(existing) = %v", err)
	}
	err = s.Rename("d/nope", "d/g")
	if !errors.Is(err, tier2.ErrNotExist) || !strings.Contains(err.Error(), `"d/nope"`) {
		t.Fatalf("Rename(missing) = %v", err)
	}
	_, err = s.Stat("a#b")
	if !errors.Is(err, tier2.ErrInvalidPath) || !strings.Contains(err.Error(), `"a#b"`) {
		t.Fatalf("Stat(invalid) = %v", err)
	}
	// Create through a file as if it were a directory.
	if _, err := s.Create("d/f/g"); err == nil || !strings.Contains(err.Error(), `"d/f/g"`) {
		t.Fatalf("Create under a file = %v", err)
	}
}

func TestClosedWriterAndReader(t *testing.T) {
	s := newStorage(t)
	w, err := s.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, iofs.ErrClosed) || !strings.Contains(err.Error(), `"f"`) {
		t.Fatalf("Write after Close = %v, want ErrClosed naming the path", err)
	}
	if err := w.Close(); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
	r, err := s.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 1), 0); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("ReadAt after Close = %v, want ErrClosed", err)
	}
}

// Abort closes a writer without its fsync: the file can then be removed,
// and the writer is closed for Write, Close and Abort alike.
func TestAbortedWriter(t *testing.T) {
	s := newStorage(t)
	w, err := s.Create("f.tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if err := tier2.Abort(w); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("Write after Abort = %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, iofs.ErrClosed) {
		t.Fatalf("Close after Abort = %v, want ErrClosed", err)
	}
	if err := tier2.Abort(w); !errors.Is(err, iofs.ErrClosed) || !strings.Contains(err.Error(), `"f.tmp"`) {
		t.Fatalf("second Abort = %v, want ErrClosed naming the path", err)
	}
	if err := s.Remove("f.tmp"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("f.tmp"); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("Stat after Remove = %v, want ErrNotExist", err)
	}
}

func TestNewMakesRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "b")
	s, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() || s.Root() != root {
		t.Fatalf("root %q: %v, %v", s.Root(), fi, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.New(file); err == nil {
		t.Fatal("New over a file succeeded")
	}
}

// newReclaimed is a Storage whose removals go through a Reclaimer.
func newReclaimed(t *testing.T) (*fs.Storage, *reclaim.Reclaimer) {
	t.Helper()
	s := newStorage(t)
	r := reclaim.New(reclaim.Config{Step: 1 << 10})
	t.Cleanup(func() { r.Close() })
	if err := s.SetReclaimer(r, 0); err != nil {
		t.Fatal(err)
	}
	return s, r
}

func TestConformanceWithAReclaimer(t *testing.T) {
	tier2test.RunStorageTests(t, func(t *testing.T) tier2.Storage {
		s, _ := newReclaimed(t)
		return s
	})
}

// Removed chunks leave their directory at once and the trash once the
// Reclaimer has freed them; Remove still refuses a directory that is not
// empty, and SetReclaimer takes up what a crash left in the trash.
func TestRemovalThroughTheReclaimer(t *testing.T) {
	s, r := newReclaimed(t)
	tier2test.Put(t, s, "sc/st/segment=0/0.seq", bytes.Repeat([]byte("x"), 5000))
	tier2test.Put(t, s, "sc/st/segment=0/5000.seq", []byte("y"))
	tier2test.Put(t, s, "sc/st/segment=1/0.seq", []byte("z"))
	if err := s.Remove("sc/st/segment=0/0.seq"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat("sc/st/segment=0/0.seq"); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("Stat of a removed chunk: %v", err)
	}
	if err := s.Remove("sc/st/segment=1"); err == nil {
		t.Fatal("Remove of a directory that is not empty succeeded")
	}
	if err := s.RemoveAll("sc/st"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveAll("sc/none"); err != nil {
		t.Fatalf("RemoveAll of a missing path: %v", err)
	}
	if es, err := s.List("sc"); err != nil || len(es) != 0 {
		t.Fatalf("List(sc) = %v, %v; want empty", es, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(s.Root(), filepath.FromSlash(fs.TrashDir))
	if left, _ := os.ReadDir(trash); len(left) != 0 {
		t.Fatalf("trash holds %d entries after the Reclaimer went idle", len(left))
	}
	if got, want := r.Freed(), int64(5002); got != want {
		t.Fatalf("Freed = %d, want %d", got, want)
	}

	// A crash's leftovers: the next SetReclaimer frees them.
	if err := os.WriteFile(filepath.Join(trash, "left.seq"), []byte("abc"), 0o444); err != nil {
		t.Fatal(err)
	}
	s2, err := fs.New(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	r2 := reclaim.New(reclaim.Config{})
	defer r2.Close()
	if err := s2.SetReclaimer(r2, 0); err != nil {
		t.Fatal(err)
	}
	if err := r2.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(trash); len(left) != 0 {
		t.Fatalf("trash holds %d entries after SetReclaimer", len(left))
	}
}
