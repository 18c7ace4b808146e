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
// fsyncs it (not timed), then measures reading it as ReadFile does: the
// disk's cold sequential read speed for a file just written. The file is
// removed.
func SequentialRead(dir string, blockSize int, total int64) (Result, error) {
	if blockSize <= 0 || total <= 0 {
		return Result{}, fmt.Errorf("%w: blockSize %d, total %d", ErrInvalidArgument, blockSize, total)
	}
	var res Result
	err := withTempFile(dir, func(f *os.File) error {
		if err := writeSynced(f, blockSize, total); err != nil {
			return err
		}
		var err error
		res, err = readCold(f, blockSize)
		if err == nil && res.Bytes != total {
			err = fmt.Errorf("diskprobe: read %d bytes back, wrote %d", res.Bytes, total)
		}
		return err
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// WriteFile writes a new file of total bytes at path (not all zero) in
// writes of blockSize and fsyncs it: a reference file for ReadFile, made
// beside data that a benchmark reads later, so that both have been on the
// disk equally long.
func WriteFile(path string, blockSize int, total int64) (err error) {
	if blockSize <= 0 || total <= 0 {
		return fmt.Errorf("%w: blockSize %d, total %d", ErrInvalidArgument, blockSize, total)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("diskprobe: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("diskprobe: close: %w", cerr)
		}
	}()
	return writeSynced(f, blockSize, total)
}

// ReadFile drops the page cache of the file at path (DropCache) and times
// reading it from start to end in reads of blockSize bytes: the disk's
// cold sequential read speed. Result.Syncs is the number of reads.
func ReadFile(path string, blockSize int) (Result, error) {
	if blockSize <= 0 {
		return Result{}, fmt.Errorf("%w: blockSize %d", ErrInvalidArgument, blockSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("diskprobe: %w", err)
	}
	defer f.Close()
	return readCold(f, blockSize)
}

func writeSynced(f *os.File, blockSize int, total int64) error {
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
	return nil
}

// readCold drops f's page cache and times reading it whole from its start.
func readCold(f *os.File, blockSize int) (Result, error) {
	if err := DropCache(f.Name()); err != nil {
		return Result{}, err
	}
	res := Result{BlockSize: blockSize}
	buf := make([]byte, blockSize)
	start := time.Now()
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		res.Bytes += int64(n)
		off += int64(n)
		if n > 0 {
			res.Syncs++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("diskprobe: read: %w", err)
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
