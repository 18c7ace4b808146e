package fs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// A chunk a reader opened before it was removed (a head streaming it to
// a Spark job, a catch-up read) was read whole after an unlink: the open
// file keeps its blocks. Through the Reclaimer it keeps them for the
// Storage's grace: a reader within it reads the chunk whole, and only
// then are its blocks freed.
func TestAnOpenChunkStaysWholeAfterRemove(t *testing.T) {
	s := newStorage(t)
	r := reclaim.New(reclaim.Config{Step: 4 << 10})
	t.Cleanup(func() { r.Close() })
	const grace = time.Second
	if err := s.SetReclaimer(r, grace); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 64<<10)
	tier2test.Put(t, s, "sc/st/segment=0/0.seq", data)
	f, err := s.Open("sc/st/segment=0/0.seq")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	removed := time.Now()
	if err := s.Remove("sc/st/segment=0/0.seq"); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, f.Size())
	n, err := f.ReadAt(got, 0)
	if time.Since(removed) < grace && (err != nil && err != io.EOF || n != len(data)) {
		t.Fatalf("ReadAt of an open chunk within the grace after Remove = %d bytes, %v; want all %d", n, err, len(data))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Since(removed) < grace {
		t.Fatalf("the reclaimer was idle %v after Remove, before the grace of %v", time.Since(removed), grace)
	}
	if got := r.Freed(); got != int64(len(data)) {
		t.Fatalf("Freed = %d after the grace, want %d", got, len(data))
	}
}

// Symbolic links inside the root are followed (doc.go): a scope or stream
// directory may live on another disk. The trash is on the root's
// filesystem, so a chunk there cannot be renamed into it (EXDEV), and
// Remove fails where an unlink worked: the storage writer's pass stops at
// that failure, so the container tiers nothing more.
func TestRemoveThroughALinkToAnotherFilesystem(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "sluice-review-")
	if err != nil {
		t.Skipf("no second filesystem: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	s, _ := newReclaimed(t)
	var a, b unix.Stat_t
	if unix.Stat(other, &a) != nil || unix.Stat(s.Root(), &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the root's filesystem")
	}
	if err := os.Symlink(other, filepath.Join(s.Root(), "sc")); err != nil {
		t.Fatal(err)
	}
	tier2test.Put(t, s, "sc/st/segment=0/0.seq", []byte("chunk"))
	if err := s.Remove("sc/st/segment=0/0.seq"); err != nil {
		t.Fatalf("Remove of a chunk under a linked directory: %v", err)
	}
	if err := s.RemoveAll("sc/st"); err != nil {
		t.Fatalf("RemoveAll of a stream under a linked directory: %v", err)
	}
}
