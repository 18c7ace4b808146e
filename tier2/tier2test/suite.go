package tier2test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

// RunStorageTests runs the conformance suite against a backend. open must
// return a new, empty storage for each call (a fresh root) and close it
// when t ends; the suite does not close it.
//
// The suite goes through the interface only, so it runs as well on a
// network backend: a few hundred calls in all, a 5 MiB file the largest.
// Beyond what storage.go says, it requires:
//
//   - ReadAt follows io.ReaderAt: a read reaching past the end returns the
//     bytes there are and io.EOF (unwrapped), a read at or past the end
//     returns 0, io.EOF;
//   - a Create on a path whose writer is still open fails with ErrExist;
//   - Write and Close on a closed Writer fail;
//   - Open of a directory fails;
//   - a directory's Size in Stat and List is not checked; RemoveAll("")
//     empties the root, which stays listable;
//   - a Reader opened before its path is replaced by Rename, or removed,
//     either goes on reading the old bytes or fails with an error; it
//     never returns bytes of the new file.
func RunStorageTests(t *testing.T, open func(t *testing.T) tier2.Storage) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s tier2.Storage)
	}{
		{"CreateWriteRead", testCreateWriteRead},
		{"EmptyFile", testEmptyFile},
		{"WriterClosed", testWriterClosed},
		{"CreateExisting", testCreateExisting},
		{"NotExist", testNotExist},
		{"Stat", testStat},
		{"List", testList},
		{"ListRoot", testListRoot},
		{"RenameReplaces", testRenameReplaces},
		{"RenameMissing", testRenameMissing},
		{"TempThenRename", testTempThenRename},
		{"Remove", testRemove},
		{"RemoveAll", testRemoveAll},
		{"RemoveAllRoot", testRemoveAllRoot},
		{"InvalidPaths", testInvalidPaths},
		{"LargeFileConcurrentReadAt", testLargeFileConcurrentReadAt},
		{"ConcurrentCreatesInNewDir", testConcurrentCreates},
		{"ReaderAcrossRenameAndRemove", testReaderAcrossRename},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// Put writes data to a new file at p of s and closes it, failing t on
// any error: a file of tier 2 as the storage writer leaves it, for the
// tests of the backends and of what reads tier 2.
func Put(t testing.TB, s tier2.Storage, p string, data []byte) {
	t.Helper()
	w, err := s.Create(p)
	if err != nil {
		t.Fatalf("Create(%q): %v", p, err)
	}
	if n, err := w.Write(data); err != nil || n != len(data) {
		t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(data))
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close(%q): %v", p, err)
	}
}

// get reads the whole file at p.
func get(t *testing.T, s tier2.Storage, p string) []byte {
	t.Helper()
	r, err := s.Open(p)
	if err != nil {
		t.Fatalf("Open(%q): %v", p, err)
	}
	defer r.Close()
	b := make([]byte, r.Size())
	if n, err := r.ReadAt(b, 0); n != len(b) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt(%q, 0) = %d, %v; want %d", p, n, err, len(b))
	}
	return b
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one matching %v", what, err, target)
	}
}

// names lists dir and returns "name" for files of a size and "name/" for
// directories, with the size for files: "a:3", "c/".
func names(t *testing.T, s tier2.Storage, dir string) []string {
	t.Helper()
	infos, err := s.List(dir)
	if err != nil {
		t.Fatalf("List(%q): %v", dir, err)
	}
	out := []string{}
	for _, fi := range infos {
		if fi.IsDir {
			out = append(out, fi.Name+"/")
		} else {
			out = append(out, fmt.Sprintf("%s:%d", fi.Name, fi.Size))
		}
	}
	return out
}

func wantNames(t *testing.T, s tier2.Storage, dir string, want ...string) {
	t.Helper()
	got := names(t, s, dir)
	if dir == "" {
		// Sluice's own directory may appear in the root at any time (a
		// local tier 2's trash, tier2/fs.TrashDir).
		got = slices.DeleteFunc(got, func(n string) bool { return n == "_sluice/" })
	}
	if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("List(%q) = %q, want %q", dir, got, want)
	}
}

func testCreateWriteRead(t *testing.T, s tier2.Storage) {
	const p = "sc/st/segment=0/00000000000000000000.seq"
	w, err := s.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"hello ", "", "world"} {
		if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
			t.Fatalf("Write(%q) = %d, %v", part, n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != 11 {
		t.Fatalf("Size = %d, want 11", r.Size())
	}
	cases := []struct {
		off     int64
		len     int
		want    string
		wantEOF bool
	}{
		{0, 11, "hello world", false},
		{6, 5, "world", false},
		{3, 4, "lo w", false},
		{6, 10, "world", true}, // runs past the end
		{10, 1, "d", false},    // the last byte
		{11, 1, "", true},      // at the end
		{1000, 4, "", true},    // far past it
		{0, 0, "", false},      // nothing asked
	}
	for _, c := range cases {
		b := make([]byte, c.len)
		n, err := r.ReadAt(b, c.off)
		if string(b[:n]) != c.want {
			t.Errorf("ReadAt(len %d, off %d) = %q, want %q", c.len, c.off, b[:n], c.want)
		}
		switch {
		case c.wantEOF && err != io.EOF:
			t.Errorf("ReadAt(len %d, off %d) error = %v, want io.EOF", c.len, c.off, err)
		case !c.wantEOF && err != nil && !(err == io.EOF && n == c.len && c.off+int64(n) == r.Size()):
			t.Errorf("ReadAt(len %d, off %d) error = %v, want nil", c.len, c.off, err)
		}
	}
}

func testEmptyFile(t *testing.T, s tier2.Storage) {
	Put(t, s, "e/empty", nil)
	r, err := s.Open("e/empty")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != 0 {
		t.Fatalf("Size = %d, want 0", r.Size())
	}
	if n, err := r.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt = %d, %v; want 0, io.EOF", n, err)
	}
	fi, err := s.Stat("e/empty")
	if err != nil || fi.Size != 0 || fi.IsDir {
		t.Fatalf("Stat = %+v, %v; want an empty file", fi, err)
	}
}

func testWriterClosed(t *testing.T, s tier2.Storage) {
	w, err := s.Create("w/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("def")); err == nil {
		t.Fatalf("Write after Close = %d, nil; want an error", n)
	}
	if err := w.Close(); err == nil {
		t.Fatal("second Close = nil, want an error")
	}
	if got := get(t, s, "w/f"); string(got) != "abc" {
		t.Fatalf("content = %q, want %q", got, "abc")
	}
}

func testCreateExisting(t *testing.T, s tier2.Storage) {
	Put(t, s, "x/f", []byte("first"))
	_, err := s.Create("x/f")
	wantErr(t, "Create of an existing file", err, tier2.ErrExist)
	if got := get(t, s, "x/f"); string(got) != "first" {
		t.Fatalf("content = %q after a refused Create, want %q", got, "first")
	}

	w, err := s.Create("x/open")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Create("x/open")
	wantErr(t, "Create of a file being written", err, tier2.ErrExist)
	if _, err := w.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "x/open"); string(got) != "mine" {
		t.Fatalf("content = %q, want %q", got, "mine")
	}
}

func testNotExist(t *testing.T, s tier2.Storage) {
	Put(t, s, "a/f", []byte("1"))
	for _, p := range []string{"missing", "a/missing", "b/c/d"} {
		_, err := s.Open(p)
		wantErr(t, "Open("+p+")", err, tier2.ErrNotExist)
		_, err = s.Stat(p)
		wantErr(t, "Stat("+p+")", err, tier2.ErrNotExist)
		_, err = s.List(p)
		wantErr(t, "List("+p+")", err, tier2.ErrNotExist)
		wantErr(t, "Remove("+p+")", s.Remove(p), tier2.ErrNotExist)
	}
	if _, err := s.Open("a"); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
}

func testStat(t *testing.T, s tier2.Storage) {
	Put(t, s, "d/e/f.seq", []byte("12345"))
	fi, err := s.Stat("d/e/f.seq")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Name != "f.seq" || fi.Size != 5 || fi.IsDir || fi.ModTime.IsZero() {
		t.Fatalf("Stat(file) = %+v", fi)
	}
	for _, d := range []string{"d", "d/e"} {
		fi, err := s.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Name != path.Base(d) || !fi.IsDir {
			t.Fatalf("Stat(%q) = %+v, want directory %q", d, fi, path.Base(d))
		}
	}
	fi, err = s.Stat("")
	if err != nil || !fi.IsDir {
		t.Fatalf("Stat(root) = %+v, %v; want a directory", fi, err)
	}
}

func testList(t *testing.T, s tier2.Storage) {
	Put(t, s, "d/b", []byte("bbb"))
	Put(t, s, "d/a", []byte("a"))
	Put(t, s, "d/c/x", []byte("xx"))
	Put(t, s, "d/B", []byte("BB")) // sorts before lower case
	wantNames(t, s, "d", "B:2", "a:1", "b:3", "c/")
	wantNames(t, s, "d/c", "x:2")
	if err := s.Remove("d/c/x"); err != nil {
		t.Fatal(err)
	}
	wantNames(t, s, "d/c")
}

func testListRoot(t *testing.T, s tier2.Storage) {
	wantNames(t, s, "")
	Put(t, s, "top", []byte("t"))
	Put(t, s, "scope/stream/segment=1/00000000000000000007.seq", []byte("seven"))
	wantNames(t, s, "", "scope/", "top:1")
	wantNames(t, s, "scope/stream", "segment=1/")
}

func testRenameReplaces(t *testing.T, s tier2.Storage) {
	Put(t, s, "r/x", []byte("old content"))
	Put(t, s, "r/y", []byte("new"))
	if err := s.Rename("r/y", "r/x"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "r/x"); string(got) != "new" {
		t.Fatalf("after Rename, r/x = %q, want %q", got, "new")
	}
	_, err := s.Stat("r/y")
	wantErr(t, "Stat of the renamed-away path", err, tier2.ErrNotExist)
	wantNames(t, s, "r", "x:3")

	// Into another existing directory, to a new name.
	Put(t, s, "other/z", nil)
	if err := s.Rename("r/x", "other/moved"); err != nil {
		t.Fatal(err)
	}
	wantNames(t, s, "r")
	wantNames(t, s, "other", "moved:3", "z:0")
}

func testRenameMissing(t *testing.T, s tier2.Storage) {
	Put(t, s, "m/keep", []byte("keep"))
	wantErr(t, "Rename of a missing file", s.Rename("m/missing", "m/keep"), tier2.ErrNotExist)
	if got := get(t, s, "m/keep"); string(got) != "keep" {
		t.Fatalf("destination = %q after a failed Rename, want %q", got, "keep")
	}
	if err := s.Rename("m/keep", "nodir/keep"); err == nil {
		t.Fatal("Rename into a missing directory succeeded")
	}
	if got := get(t, s, "m/keep"); string(got) != "keep" {
		t.Fatalf("source = %q after a failed Rename, want %q", got, "keep")
	}
}

func testTempThenRename(t *testing.T, s tier2.Storage) {
	tmp := tier2.TempChunkPath("sc", "st", 3, 1024)
	final := tier2.ChunkPath("sc", "st", 3, 1024)
	Put(t, s, tmp, []byte("chunk"))
	if err := s.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	infos, err := s.List(tier2.SegmentDir("sc", "st", 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || tier2.IsTemp(infos[0].Name) {
		t.Fatalf("segment directory = %+v, want the chunk alone", infos)
	}
	if off, ok := tier2.ParseChunkName(infos[0].Name); !ok || off != 1024 || infos[0].Size != 5 {
		t.Fatalf("chunk %+v parses to %d, %v; want offset 1024, 5 bytes", infos[0], off, ok)
	}
}

func testRemove(t *testing.T, s tier2.Storage) {
	Put(t, s, "rm/d/f", []byte("f"))
	if err := s.Remove("rm/d"); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
	wantNames(t, s, "rm/d", "f:1")
	if err := s.Remove("rm/d/f"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Open("rm/d/f")
	wantErr(t, "Open of a removed file", err, tier2.ErrNotExist)
	if err := s.Remove("rm/d"); err != nil {
		t.Fatalf("Remove of an empty directory: %v", err)
	}
	wantNames(t, s, "rm")
	wantErr(t, "second Remove", s.Remove("rm/d"), tier2.ErrNotExist)
}

func testRemoveAll(t *testing.T, s tier2.Storage) {
	for _, p := range []string{"t/a/b/1", "t/a/2", "t/3", "t2/4"} {
		Put(t, s, p, []byte(p))
	}
	if err := s.RemoveAll("t/a"); err != nil {
		t.Fatal(err)
	}
	wantNames(t, s, "t", "3:3")
	if err := s.RemoveAll("t"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Stat("t")
	wantErr(t, "Stat of a removed tree", err, tier2.ErrNotExist)
	wantNames(t, s, "", "t2/") // the prefix "t" did not take "t2"
	if err := s.RemoveAll("t2/4"); err != nil {
		t.Fatalf("RemoveAll of a file: %v", err)
	}
	for _, p := range []string{"t", "missing/deeper"} {
		if err := s.RemoveAll(p); err != nil {
			t.Fatalf("RemoveAll(%q) of a missing path: %v", p, err)
		}
	}
	wantNames(t, s, "", "t2/")
}

func testRemoveAllRoot(t *testing.T, s tier2.Storage) {
	Put(t, s, "a/b/c", []byte("c"))
	Put(t, s, "d", []byte("d"))
	if err := s.RemoveAll(""); err != nil {
		t.Fatal(err)
	}
	wantNames(t, s, "")
	Put(t, s, "a/again", []byte("1"))
	wantNames(t, s, "a", "again:1")
}

// badPaths are refused by every method.
var badPaths = []string{
	"/abs", "/", "..", "../x", "a/..", "a/../b", "a//b", "a/./b", "./a", ".",
	"a/", "a#b", "x/y#z", "a:b", "c:/x", `a\b`,
}

func testInvalidPaths(t *testing.T, s tier2.Storage) {
	Put(t, s, "ok", []byte("ok"))
	calls := []struct {
		name string
		fn   func(p string) error
	}{
		{"Create", func(p string) error { _, err := s.Create(p); return err }},
		{"Open", func(p string) error { _, err := s.Open(p); return err }},
		{"Stat", func(p string) error { _, err := s.Stat(p); return err }},
		{"List", func(p string) error { _, err := s.List(p); return err }},
		{"RenameFrom", func(p string) error { return s.Rename(p, "renamed") }},
		{"RenameTo", func(p string) error { return s.Rename("ok", p) }},
		{"Remove", s.Remove},
		{"RemoveAll", s.RemoveAll},
	}
	for _, p := range badPaths {
		for _, c := range calls {
			wantErr(t, fmt.Sprintf("%s(%q)", c.name, p), c.fn(p), tier2.ErrInvalidPath)
		}
	}
	// The root is no file.
	for _, c := range calls {
		switch c.name {
		case "Stat", "List", "RemoveAll":
			continue
		}
		wantErr(t, c.name+`("")`, c.fn(""), tier2.ErrInvalidPath)
	}
	wantNames(t, s, "", "ok:2")
}

// pattern is n deterministic bytes that differ at every offset modulo 251.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

func testLargeFileConcurrentReadAt(t *testing.T, s tier2.Storage) {
	const size = 5<<20 + 123
	data := pattern(size)
	w, err := s.Create("big/f")
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < size; off += 256 << 10 {
		end := min(off+256<<10, size)
		if _, err := w.Write(data[off:end]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := s.Stat("big/f")
	if err != nil || fi.Size != size {
		t.Fatalf("Stat = %+v, %v; want %d bytes", fi, err, size)
	}
	r, err := s.Open("big/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != size {
		t.Fatalf("Size = %d, want %d", r.Size(), size)
	}
	const readers, reads = 16, 4
	var wg sync.WaitGroup
	errs := make(chan error, readers*reads)
	for g := range readers {
		wg.Go(func() {
			for i := range reads {
				// Spread over the file; the last read of the last
				// goroutine runs past the end.
				off := int64((g*reads + i) * (size / (readers * reads)))
				n := 300 << 10
				b := make([]byte, n)
				got, err := r.ReadAt(b, off)
				want := data[off:min(off+int64(n), size)]
				if got != len(want) || !bytes.Equal(b[:got], want) {
					errs <- fmt.Errorf("ReadAt(off %d) = %d bytes, %v; want %d matching bytes", off, got, err, len(want))
					continue
				}
				if len(want) < n && err != io.EOF {
					errs <- fmt.Errorf("ReadAt(off %d) past the end: error %v, want io.EOF", off, err)
				}
				if len(want) == n && err != nil && err != io.EOF {
					errs <- fmt.Errorf("ReadAt(off %d): %v", off, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testConcurrentCreates(t *testing.T, s tier2.Storage) {
	const n = 16
	dir := tier2.SegmentDir("race", "stream", 9)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			p := tier2.ChunkPath("race", "stream", 9, int64(i))
			w, err := s.Create(p)
			if err != nil {
				errs <- err
				return
			}
			if _, err := w.Write(bytes.Repeat([]byte{byte(i)}, i)); err != nil {
				errs <- err
			}
			if err := w.Close(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("%s:%d", tier2.ChunkName(int64(i)), i))
	}
	wantNames(t, s, dir, want...)
}

func testReaderAcrossRename(t *testing.T, s tier2.Storage) {
	oldData := pattern(64 << 10)
	newData := bytes.Repeat([]byte{0xEE}, 80<<10)
	Put(t, s, "q/x", oldData)
	r, err := s.Open("q/x")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	Put(t, s, "q/y", newData)
	if err := s.Rename("q/y", "q/x"); err != nil {
		t.Fatal(err)
	}
	checkOld := func(when string) {
		t.Helper()
		if r.Size() != int64(len(oldData)) {
			t.Fatalf("%s: Size = %d, want the old %d", when, r.Size(), len(oldData))
		}
		b := make([]byte, len(oldData))
		n, err := r.ReadAt(b, 0)
		if err != nil && err != io.EOF {
			return // failing cleanly is allowed
		}
		if !bytes.Equal(b[:n], oldData[:n]) || n != len(oldData) {
			t.Fatalf("%s: reader opened before returned %d bytes that are not the old content", when, n)
		}
	}
	checkOld("after Rename")
	if got := get(t, s, "q/x"); !bytes.Equal(got, newData) {
		t.Fatalf("a new Open reads %d bytes, want the new %d", len(got), len(newData))
	}
	if err := s.Remove("q/x"); err != nil {
		t.Fatal(err)
	}
	checkOld("after Remove")
}
