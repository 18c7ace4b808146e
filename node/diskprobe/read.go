package diskprobe

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// DropCache asks the kernel to drop the page cache of the file at path
// (posix_fadvise POSIX_FADV_DONTNEED over the whole file), so that the next
// read of it comes from the disk. Only clean pages are dropped: write and
// fsync the file first. It drops nothing of other files, unlike writing to
// /proc/sys/vm/drop_caches, which needs root and empties the whole
// machine's cache. Below the kernel, a virtual disk may still be cached by
// its host: that cache is out of reach, and a "cold" read can be faster
// than the device.
func DropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("diskprobe: %w", err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("diskprobe: fadvise %s: %w", path, err)
	}
	if os.Getenv(DropAllEnv) == "1" {
		// The machine's whole page cache (root only): on a virtual
		// machine, fadvise may leave the file's pages where the next read
		// still finds them quickly.
		unix.Sync()
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
			return fmt.Errorf("diskprobe: %s=1: drop the page cache: %w", DropAllEnv, err)
		}
	}
	return nil
}

// DropAllEnv, set to 1, makes DropCache drop the whole machine's page
// cache too (root only; it slows every other process on the machine for a
// while, so it is for benchmark runs on a machine of one's own).
const DropAllEnv = "SLUICE_BENCH_DROP_ALL"

// SequentialRead writes total bytes to a new temporary file in dir and
// fsyncs it (not timed), drops the file's page cache (DropCache), then
// reads it from start to end in reads of blockSize bytes and reports the
// read bandwidth: the disk's cold sequential read speed. Result.Syncs is
// the number of reads. The file is removed.
func SequentialRead(dir string, blockSize int, total int64) (Result, error) {
	if blockSize <= 0 || total <= 0 {
		return Result{}, fmt.Errorf("%w: blockSize %d, total %d", ErrInvalidArgument, blockSize, total)
	}
	res := Result{BlockSize: blockSize}
	err := withTempFile(dir, func(f *os.File) error {
		buf := pattern(int(min(int64(blockSize), total)))
		for written := int64(0); written < total; {
			n := int(min(int64(len(buf)), total-written))
			if _, err := f.Write(buf[:n]); err != nil {
				return fmt.Errorf("diskprobe: write: %w", err)
			}
			written += int64(n)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("diskprobe: fsync: %w", err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("diskprobe: fadvise: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("diskprobe: seek: %w", err)
		}
		start := time.Now()
		for {
			n, err := f.Read(buf)
			res.Bytes += int64(n)
			if n > 0 {
				res.Syncs++
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("diskprobe: read: %w", err)
			}
		}
		res.Elapsed = time.Since(start)
		if res.Bytes != total {
			return fmt.Errorf("diskprobe: read %d bytes back, wrote %d", res.Bytes, total)
		}
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}
