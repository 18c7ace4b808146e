package reclaim_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// writeFile makes a file of n bytes under dir and returns its path.
func writeFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, n), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitIdle(t *testing.T, r *reclaim.Reclaimer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatalf("reclaimer not idle: %v (backlog %d bytes)", err, r.Backlog())
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// recorder counts the truncates and data syncs of the files it sees.
type recorder struct {
	mu        sync.Mutex
	truncates int
	syncs     int
}

func (r *recorder) inject(op vfstest.Op, path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch op {
	case vfstest.OpTruncate:
		r.truncates++
	case vfstest.OpSyncData:
		r.syncs++
	}
	return nil
}

func TestRemoveFreesAFileStepByStep(t *testing.T) {
	dir := t.TempDir()
	trash := filepath.Join(dir, "trash")
	p := writeFile(t, dir, "log", 5<<20+3)
	rec := &recorder{}
	efs := vfstest.New(vfs.Default)
	efs.SetInjector(rec.inject)
	r := reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20, Rate: 1 << 40})
	defer r.Close()

	if err := r.Remove(p, trash); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("removed path still there: %v", err)
	}
	waitIdle(t, r)
	if got := entries(t, trash); len(got) != 0 {
		t.Fatalf("trash holds %v after the reclaimer went idle", got)
	}
	// 5 MiB + 3 bytes in 1 MiB steps: six truncates, each synced.
	if rec.truncates != 6 || rec.syncs != 6 {
		t.Fatalf("%d truncates and %d data syncs, want 6 and 6", rec.truncates, rec.syncs)
	}
	if got := r.Freed(); got != 5<<20+3 {
		t.Fatalf("Freed = %d, want %d", got, 5<<20+3)
	}
	if got := r.Backlog(); got != 0 {
		t.Fatalf("Backlog = %d after idle, want 0", got)
	}
}

func TestRemoveTakesADirectoryTree(t *testing.T) {
	dir := t.TempDir()
	trash := filepath.Join(dir, "_trash")
	writeFile(t, dir, "seg/a/1.seq", 3<<20)
	writeFile(t, dir, "seg/a/2.seq", 10)
	writeFile(t, dir, "seg/b.seq", 0)
	r := reclaim.New(reclaim.Config{Step: 1 << 20})
	defer r.Close()
	if err := r.Remove(filepath.Join(dir, "seg"), trash); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "_trash" {
		t.Fatalf("dir holds %v, want only the trash", got)
	}
	waitIdle(t, r)
	if got := entries(t, trash); len(got) != 0 {
		t.Fatalf("trash holds %v", got)
	}
	if got := r.Freed(); got != 3<<20+10 {
		t.Fatalf("Freed = %d, want %d", got, 3<<20+10)
	}
}

func TestRemoveOfAMissingPathFails(t *testing.T) {
	dir := t.TempDir()
	r := reclaim.New(reclaim.Config{})
	defer r.Close()
	err := r.Remove(filepath.Join(dir, "nope"), filepath.Join(dir, "trash"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove of a missing file: %v, want os.ErrNotExist", err)
	}
	var nilR *reclaim.Reclaimer
	if err := nilR.Remove(filepath.Join(dir, "nope"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("nil Reclaimer's Remove of a missing file: %v, want os.ErrNotExist", err)
	}
}

// A symbolic link handed over is unlinked; what it points to is never
// truncated.
func TestRemoveNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	outside := writeFile(t, t.TempDir(), "precious", 2<<20)
	writeFile(t, t.TempDir(), "d/inner", 2<<20)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(tree, "dirlink")); err != nil {
		t.Fatal(err)
	}
	r := reclaim.New(reclaim.Config{Step: 1 << 20})
	defer r.Close()
	if err := r.Remove(link, filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(tree, filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, r)
	st, err := os.Stat(outside)
	if err != nil || st.Size() != 2<<20 {
		t.Fatalf("the link's target: %v, size %v; want untouched (%d bytes)", err, st, 2<<20)
	}
	if got := entries(t, filepath.Join(dir, "trash")); len(got) != 0 {
		t.Fatalf("trash holds %v", got)
	}
}

// Close stops between steps and leaves the rest in the trash; Resume, by
// the next Reclaimer, frees it.
func TestCloseLeavesTheRestForResume(t *testing.T) {
	dir := t.TempDir()
	trash := filepath.Join(dir, "trash")
	p := writeFile(t, dir, "big", 4<<20)
	r, stepped := stalledAfterAStep()
	if err := r.Remove(p, trash); err != nil {
		t.Fatal(err)
	}
	<-stepped
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	left := entries(t, trash)
	if len(left) != 1 {
		t.Fatalf("trash holds %v after Close, want the file", left)
	}
	if st, err := os.Stat(filepath.Join(trash, left[0])); err != nil || st.Size() != 3<<20 {
		t.Fatalf("the file left: %v %v, want 3 MiB (one step freed)", st, err)
	}

	r2 := reclaim.New(reclaim.Config{Step: 1 << 20})
	defer r2.Close()
	if err := r2.Resume(trash); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, r2)
	if got := entries(t, trash); len(got) != 0 {
		t.Fatalf("trash holds %v after Resume", got)
	}
	if got := r2.Freed(); got != 3<<20 {
		t.Fatalf("Freed after Resume = %d, want %d", got, 3<<20)
	}
	if err := r2.Resume(filepath.Join(dir, "no-such-trash")); err != nil {
		t.Fatalf("Resume of a missing trash: %v", err)
	}
}

// stalledAfterAStep is a Reclaimer of 1 MiB steps at one byte a second:
// after its first step it pauses until Close. stepped receives a value at
// each step's sync.
func stalledAfterAStep() (r *reclaim.Reclaimer, stepped <-chan struct{}) {
	ch := make(chan struct{}, 16)
	efs := vfstest.New(vfs.Default)
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpSyncData {
			ch <- struct{}{}
		}
		return nil
	})
	return reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20, Rate: 1, MaxBacklog: 1 << 40}), ch
}

// Over MaxBacklog the reclaimer does not pause: a rate of one byte a
// second would otherwise never finish.
func TestOverTheBacklogBoundNoPauses(t *testing.T) {
	dir := t.TempDir()
	r := reclaim.New(reclaim.Config{Step: 1 << 20, Rate: 1, MaxBacklog: 1})
	defer r.Close()
	for _, n := range []string{"a", "b"} {
		if err := r.Remove(writeFile(t, dir, n, 3<<20), filepath.Join(dir, "trash")); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, r)
	if got := r.Freed(); got != 6<<20 {
		t.Fatalf("Freed = %d, want %d", got, 6<<20)
	}
}

// A step that fails falls back to unlinking the file whole.
func TestAFailedStepUnlinksTheFile(t *testing.T) {
	dir := t.TempDir()
	trash := filepath.Join(dir, "trash")
	efs := vfstest.New(vfs.Default)
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpTruncate {
			return vfstest.ErrInjected
		}
		return nil
	})
	r := reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20})
	defer r.Close()
	if err := r.Remove(writeFile(t, dir, "f", 2<<20), trash); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, r)
	if got := entries(t, trash); len(got) != 0 {
		t.Fatalf("trash holds %v", got)
	}
	if got, want := r.Freed(), int64(2<<20); got != want {
		t.Fatalf("Freed = %d, want %d", got, want)
	}
}

// A nil Reclaimer removes at once.
func TestNilReclaimerRemovesAtOnce(t *testing.T) {
	dir := t.TempDir()
	var r *reclaim.Reclaimer
	p := writeFile(t, dir, "t/f", 10)
	if err := r.Remove(filepath.Join(dir, "t"), filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove: %v", err)
	}
	writeFile(t, dir, "trash/left", 10)
	if err := r.Resume(filepath.Join(dir, "trash")); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("dir holds %v, want nothing", got)
	}
	if err := r.WaitIdle(context.Background()); err != nil || r.Close() != nil || r.Backlog() != 0 {
		t.Fatal("a nil Reclaimer's WaitIdle, Close and Backlog are no-ops")
	}
}

// A dangling symbolic link is a path like any other: Remove takes it
// away (a nil Reclaimer too), and what it named is never made.
func TestRemoveTakesADanglingLink(t *testing.T) {
	for _, r := range []*reclaim.Reclaimer{nil, reclaim.New(reclaim.Config{})} {
		dir := t.TempDir()
		link := filepath.Join(dir, "link")
		if err := os.Symlink(filepath.Join(dir, "gone"), link); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove(link, filepath.Join(dir, "trash")); err != nil {
			t.Fatalf("Remove of a dangling link (nil Reclaimer %v): %v", r == nil, err)
		}
		waitIdle(t, r)
		if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the link after Remove: %v", err)
		}
		if got := entries(t, filepath.Join(dir, "trash")); len(got) != 0 {
			t.Fatalf("trash holds %v", got)
		}
		r.Close()
	}
}
