package wal

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// TestSpareDoesNotTakeTheLogsLastSpace: a new log (or any log opened with
// a growing last file) asks for a spare at Open. On a disk with little
// room, the zero-filling takes it, and the log's next append into its
// growing file fails with ENOSPC: the log fails, stickily, for an append
// that fit in the room the disk had, and the container stops. A node
// restarted on that disk asks for a spare at Open again. (doc.go: "a
// node whose disk filled up starts again once there is room for its next
// appends".)
func TestSpareDoesNotTakeTheLogsLastSpace(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	first, second := make(chan struct{}), make(chan struct{})
	var writes atomic.Int32
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op != vfstest.OpWrite || !strings.HasSuffix(path, spareTmpName) {
			return nil
		}
		if writes.Add(1) == 1 {
			close(first)
			<-second // the test limits the space first
		}
		return nil
	})
	w, _ := mustOpen(t, Options{Dir: dir, FS: efs, FileSize: 4 << 20, Preallocate: true}, 1)
	defer w.Close()
	<-first
	// The disk has room for one piece of the spare and 2 KiB more: the
	// spare must give up at its next piece and give the room back.
	efs.SetFreeSpace(spareChunk + 2<<10)
	close(second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, spareTmpName)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spare went on with %d bytes free (%d pieces written)", efs.FreeSpace(), writes.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("the spare wrote %d pieces, want 1 before it gave up", n)
	}
	if _, err := os.Stat(filepath.Join(dir, spareName)); !os.IsNotExist(err) {
		t.Errorf("a spare was made on a nearly full disk: %v", err)
	}
	// The log appends 4 KiB: it fits in the room the disk had.
	p, err := w.Append(testType, make([]byte, 4<<10))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Errorf("a 4 KiB append on a disk with %d KiB free when the spare started: %v", (spareChunk+2<<10)>>10, err)
	}
}
