package fs

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// WritebackBytes is how much a writer lets the kernel hold dirty before it
// starts writing it back (sync_file_range(2) with SYNC_FILE_RANGE_WRITE),
// and how far behind the writer the previous range may still be in
// flight: a writer waits for the range before the one it just started,
// then pauses as long as that wait took (at most maxPause). A file being
// written so has at most about twice this much dirty or under write-back
// at any time, Close's fsync finds little left to write, and a writer
// faster than the disk leaves it idle about half the time its writes
// queue, so the log's small syncs on the same disk find a short queue.
// Without it a 16 MiB chunk was written back whole by that fsync, one
// long queue of writes the log's fdatasyncs waited behind
// (docs/BENCHMARKS.md, "Background I/O"; BenchmarkSyncBesideChunks).
// 256 KiB rather than 1 MiB: a log's fdatasync that arrives behind a
// range waits for less of it; after a 2 GiB burst the 10 MiB/s writer's
// ack p99 over 5 s was about half (docs/BENCHMARKS.md). An unpaced writer
// (tier2.Paced: behind its deadline, or a flush) uses
// UnpacedWritebackBytes instead: with two ranges of 256 KiB in flight a
// flush ran at 60-67 % of the disk against 86-92 % with 1 MiB.
const WritebackBytes = 256 << 10

// UnpacedWritebackBytes is the write-back range of an unpaced writer.
const UnpacedWritebackBytes = 1 << 20

// maxPause bounds a writer's pause after a range.
const maxPause = 50 * time.Millisecond

// pace: pause after each range (a variable so that a benchmark can
// measure without).
var pace = true

// writeback starts and waits for the write-back of a file's pages behind
// its writer. It is an optimisation only: durability still comes from
// the fsync at Close.
type writeback struct {
	fd      int
	started int64 // bytes whose write-back was started: [0, started)
	waited  int64 // bytes whose write-back was waited for: [0, waited)
	off     bool  // the filesystem does not support sync_file_range
	pace    bool  // after waiting for a range, pause as long as the wait took
}

// wrote notes that the file now has size bytes. Once WritebackBytes
// beyond what was started are written, it starts their write-back and
// waits for the range before. An error is an I/O error of write-back:
// the file's data did not reach the disk.
func (wb *writeback) wrote(size int64) error {
	rangeBytes := int64(WritebackBytes)
	if !wb.pace {
		rangeBytes = UnpacedWritebackBytes
	}
	if wb.off || size-wb.started < rangeBytes {
		return nil
	}
	if err := syncFileRange(wb.fd, wb.started, size-wb.started, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		return wb.fail(err)
	}
	prev := wb.started
	wb.started = size
	if prev > wb.waited {
		flags := unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
		start := time.Now()
		if err := syncFileRange(wb.fd, wb.waited, prev-wb.waited, flags); err != nil {
			return wb.fail(err)
		}
		wb.waited = prev
		if wb.pace {
			time.Sleep(min(time.Since(start), maxPause))
		}
	}
	return nil
}

// fail turns write-back off where the filesystem does not support it
// (the fsync at Close does all the work then) and returns any other
// error.
func (wb *writeback) fail(err error) error {
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ESPIPE) {
		wb.off = true
		return nil
	}
	return err
}

// syncFileRange is unix.SyncFileRange, a variable so that a test can
// make it fail.
var syncFileRange = func(fd int, off, n int64, flags int) error {
	for {
		err := unix.SyncFileRange(fd, off, n, flags)
		if err != unix.EINTR {
			return err
		}
	}
}
