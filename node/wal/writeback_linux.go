package wal

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/node/vfs"
)

// writeback writes the file's dirty pages in [off, off+n) to the disk and
// waits for them, without the metadata: sync_file_range, which commits no
// journal transaction, where fdatasync of a file that grew commits one per
// call (and every commit waits for the log's own). It makes nothing
// durable; a zero-filled spare is made durable by one fsync at its end.
// Files that are not the operating system's (test filesystems) get
// fdatasync.
func writeback(f vfs.File, off, n int64) error {
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return f.SyncData()
	}
	err := unix.SyncFileRange(int(fd.Fd()), off, n,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	if err != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: err}
	}
	return nil
}
