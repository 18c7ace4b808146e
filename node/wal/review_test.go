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

// The trash holds only what the log already gave up. A file there that
// cannot be removed (an I/O error, a permission) must not keep the log
// from opening: it is garbage, and the container behind it would stay
// down. (With a Reclaimer, Resume's errors fail Open the same way.)
func TestOpenIsNotRefusedForTrashItCannotEmpty(t *testing.T) {
	dir := t.TempDir()
	w, _ := mustOpen(t, Options{Dir: dir, FileSize: 256}, 1)
	ps := writeN(t, w, 0, 5)
	w.Close()
	trash := filepath.Join(dir, trashDirName)
	if err := os.MkdirAll(trash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trash, "1-1-0000000000000001.wal"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	efs := vfstest.New(vfs.Default)
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpRemove && filepath.Dir(path) == trash {
			return syscall.EIO
		}
		return nil
	})
	w, recs, err := openCollect(Options{Dir: dir, FS: efs, FileSize: 256}, ps[0].LSN)
	if err != nil {
		t.Fatalf("Open with an undeletable file in the trash: %v; want the log open", err)
	}
	defer w.Close()
	checkRecords(t, recs, ps[0].LSN, 0, 5)
}
