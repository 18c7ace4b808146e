package wal

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
)

// On a full disk the trash cannot be made (mkdir needs a block), yet an
// unlink still works: RemoveBefore is how a node whose disk filled up gets
// its space back once tier 2 takes the data. With a Reclaimer it fails
// instead, and the files it failed on are forgotten by the log (not tried
// again at the next checkpoint) while they stay on the full disk.
func TestRemoveBeforeFreesOnAFullDiskWithAReclaimer(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpMkdir || op == vfstest.OpRename {
			return syscall.ENOSPC
		}
		return nil
	})
	r := reclaim.New(reclaim.Config{FS: efs, Step: 1 << 20})
	defer r.Close()
	w, _ := mustOpen(t, Options{Dir: dir, FileSize: 256, Reclaim: r}, 1)
	defer w.Close()
	ps := writeN(t, w, 0, 20)
	first := filepath.Join(dir, fileName(1))
	n, err := w.RemoveBefore(ps[10].LSN)
	if err != nil {
		t.Fatalf("RemoveBefore on a full disk = %d, %v; want the files unlinked", n, err)
	}
	if _, err := os.Stat(first); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after RemoveBefore on a full disk: %v; want it gone", first, err)
	}
}
