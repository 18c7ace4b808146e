package diskprobe

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
)

// Default sizes, the ones the benchmarks use.
const (
	DefaultBlockSize = 1 << 20 // SequentialSync write size: 1 MiB
	DefaultSyncSize  = 4 << 10 // SyncLatency write size: 4 KiB
)

// ErrInvalidArgument is returned (wrapped) for a non-positive size or count.
var ErrInvalidArgument = errors.New("diskprobe: invalid argument")

// Result is the outcome of SequentialSync.
type Result struct {
	Bytes     int64         // bytes written and fsync'd
	BlockSize int           // size of each write
	Syncs     int           // number of fsyncs (one per write)
	Elapsed   time.Duration // time spent writing and syncing, file creation excluded
}

// BytesPerSecond returns Bytes/Elapsed, or 0 if nothing was timed.
func (r Result) BytesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Elapsed.Seconds()
}

// String summarises r for logs.
func (r Result) String() string {
	return fmt.Sprintf("sequential write+fsync: %.1f MiB/s (%d bytes in %d x %d-byte writes, %v)",
		r.BytesPerSecond()/(1<<20), r.Bytes, r.Syncs, r.BlockSize, r.Elapsed)
}

// Latencies is the outcome of SyncLatency: one duration per write+fsync,
// sorted ascending.
type Latencies struct {
	Size      int            // size of each write
	Durations latency.Sorted // ascending
}

// Percentile returns the p-th percentile (p in [0, 100], e.g. 50, 99, 99.9)
// by nearest rank; 0 if there are no samples.
func (l Latencies) Percentile(p float64) time.Duration {
	return l.Durations.Percentile(p)
}

// String summarises l for logs.
func (l Latencies) String() string {
	return fmt.Sprintf("%d-byte write+fsync latency: %v", l.Size, l.Durations)
}

// SequentialSync writes total bytes to a new temporary file in dir, in writes
// of blockSize bytes (the last one shorter if total is not a multiple), each
// followed by an fsync, and reports the bandwidth. The file is removed.
func SequentialSync(dir string, blockSize int, total int64) (Result, error) {
	if blockSize <= 0 || total <= 0 {
		return Result{}, fmt.Errorf("%w: blockSize %d, total %d", ErrInvalidArgument, blockSize, total)
	}
	res := Result{BlockSize: blockSize}
	err := withTempFile(dir, func(f *os.File) error {
		buf := pattern(int(min(int64(blockSize), total)))
		start := time.Now()
		for res.Bytes < total {
			n := int(min(int64(len(buf)), total-res.Bytes))
			if _, err := f.Write(buf[:n]); err != nil {
				return fmt.Errorf("diskprobe: write: %w", err)
			}
			if err := f.Sync(); err != nil {
				return fmt.Errorf("diskprobe: fsync: %w", err)
			}
			res.Bytes += int64(n)
			res.Syncs++
		}
		res.Elapsed = time.Since(start)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// SyncLatency appends size bytes to a new temporary file in dir and fsyncs it,
// n times, and returns the duration of each write+fsync, sorted. The file is
// removed.
func SyncLatency(dir string, size int, n int) (Latencies, error) {
	if size <= 0 || n <= 0 {
		return Latencies{}, fmt.Errorf("%w: size %d, n %d", ErrInvalidArgument, size, n)
	}
	durations := make([]time.Duration, 0, n)
	err := withTempFile(dir, func(f *os.File) error {
		buf := pattern(size)
		for range n {
			start := time.Now()
			if _, err := f.Write(buf); err != nil {
				return fmt.Errorf("diskprobe: write: %w", err)
			}
			if err := f.Sync(); err != nil {
				return fmt.Errorf("diskprobe: fsync: %w", err)
			}
			durations = append(durations, time.Since(start))
		}
		return nil
	})
	if err != nil {
		return Latencies{}, err
	}
	return Latencies{Size: size, Durations: latency.Sort(durations)}, nil
}

// withTempFile creates a temporary file in dir, calls fn with it, and closes
// and removes it whatever happens. The first error wins.
func withTempFile(dir string, fn func(*os.File) error) (err error) {
	f, err := os.CreateTemp(dir, ".diskprobe-*")
	if err != nil {
		return fmt.Errorf("diskprobe: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("diskprobe: close: %w", cerr)
		}
		if rerr := os.Remove(f.Name()); rerr != nil && err == nil {
			err = fmt.Errorf("diskprobe: %w", rerr)
		}
	}()
	return fn(f)
}

// pattern returns n bytes that are not all zero, so that no layer below can
// shortcut the write (zero detection, compression).
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
