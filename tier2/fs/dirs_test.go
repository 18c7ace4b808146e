package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

func TestKnownDirs(t *testing.T) {
	var k knownDirs
	k.add("a/b/c")
	k.add("a/b/d")
	k.add("x/y")
	for _, d := range []string{"a", "a/b", "a/b/c", "a/b/d", "x", "x/y"} {
		if !k.has(d) {
			t.Errorf("%s not known after add", d)
		}
	}
	k.forget("a/b/c/file.seq") // a file: nothing
	k.forget("a/b/c")
	if k.has("a/b/c") || !k.has("a/b/d") || !k.has("a/b") {
		t.Errorf("forget(a/b/c): c %v (want false), d %v, b %v (want true)", k.has("a/b/c"), k.has("a/b/d"), k.has("a/b"))
	}
	k.forget("a/b/d")
	k.add("a/b/e")
	k.forget("a") // has known children: all of them go
	for _, d := range []string{"a", "a/b", "a/b/e"} {
		if k.has(d) {
			t.Errorf("%s still known after forget(a)", d)
		}
	}
	if !k.has("x/y") {
		t.Error("x/y forgotten with a")
	}
	k.forget("")
	if k.has("x") || k.has("x/y") {
		t.Error("forget(\"\") left directories known")
	}
}

// A segment's directory is made once: later chunks in it cost no mkdir,
// and a directory removed through the Storage or behind its back is made
// again by the next Create.
func TestCreateRemembersDirectories(t *testing.T) {
	s := newTestStorage(t)
	put := func(p string) {
		t.Helper()
		w, err := s.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	dir := tier2.SegmentDir("sc", "st", 3)
	put(tier2.ChunkPath("sc", "st", 3, 0))
	if !s.dirs.has(dir) || !s.dirs.has("sc") {
		t.Fatalf("%s not remembered after Create", dir)
	}
	put(tier2.ChunkPath("sc", "st", 3, 100))

	if err := s.RemoveAll(tier2.StreamDir("sc", "st")); err != nil {
		t.Fatal(err)
	}
	if s.dirs.has(dir) || !s.dirs.has("sc") {
		t.Fatalf("after RemoveAll of the stream: segment dir known %v, scope known %v", s.dirs.has(dir), s.dirs.has("sc"))
	}
	put(tier2.ChunkPath("sc", "st", 3, 200))

	// Behind the Storage's back: Create finds the directory gone and
	// makes it again.
	if err := os.RemoveAll(filepath.Join(s.Root(), "sc")); err != nil {
		t.Fatal(err)
	}
	if !s.dirs.has(dir) {
		t.Fatal("the test needs the directory still remembered")
	}
	put(tier2.ChunkPath("sc", "st", 3, 300))
	got, err := os.ReadFile(filepath.Join(s.Root(), tier2.ChunkPath("sc", "st", 3, 300)))
	if err != nil || string(got) != tier2.ChunkPath("sc", "st", 3, 300) {
		t.Fatalf("chunk after the directory was removed: %q, %v", got, err)
	}

	// A new segment's directory under a remembered parent removed behind
	// the Storage's back (another container emptied the stream).
	if err := os.RemoveAll(filepath.Join(s.Root(), "sc")); err != nil {
		t.Fatal(err)
	}
	if !s.dirs.has("sc/st") || s.dirs.has(tier2.SegmentDir("sc", "st", 4)) {
		t.Fatal("the test needs the stream's directory remembered and the segment's not")
	}
	put(tier2.ChunkPath("sc", "st", 4, 0))
	if _, err := os.Stat(filepath.Join(s.Root(), tier2.ChunkPath("sc", "st", 4, 0))); err != nil {
		t.Fatal(err)
	}
}
