package diskprobe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
)

// assertEmpty fails if dir holds any file: the probes must clean up.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// probeSizes are the sizes both sequential probes are tested with: syncs
// (or reads) is how many blocks they take.
var probeSizes = []struct {
	name      string
	blockSize int
	total     int64
	syncs     int
}{
	{"exact multiple", 4096, 4 * 4096, 4},
	{"short last block", 4096, 4*4096 + 100, 5},
	{"total below block", 1 << 20, 1000, 1},
}

func TestSequentialSync(t *testing.T) {
	for _, tt := range probeSizes {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := SequentialSync(dir, tt.blockSize, tt.total)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bytes != tt.total || res.Syncs != tt.syncs || res.BlockSize != tt.blockSize {
				t.Fatalf("got %+v, want %d bytes in %d syncs", res, tt.total, tt.syncs)
			}
			if res.Elapsed <= 0 || res.BytesPerSecond() <= 0 {
				t.Fatalf("nothing timed: %+v", res)
			}
			if !strings.Contains(res.String(), "MiB/s") {
				t.Fatalf("String() = %q", res.String())
			}
			assertEmpty(t, dir)
		})
	}
}

func TestSyncLatency(t *testing.T) {
	dir := t.TempDir()
	const n = 50
	lat, err := SyncLatency(dir, DefaultSyncSize, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat.Durations) != n || lat.Size != DefaultSyncSize {
		t.Fatalf("got %d samples of %d bytes, want %d of %d", len(lat.Durations), lat.Size, n, DefaultSyncSize)
	}
	prev := lat.Percentile(0)
	for _, p := range []float64{1, 50, 90, 99, 99.9, 100} {
		cur := lat.Percentile(p)
		if cur < prev {
			t.Fatalf("percentiles not monotonic: p%v = %v < %v", p, cur, prev)
		}
		prev = cur
	}
	if lat.Percentile(100) != lat.Durations[n-1] || lat.Percentile(0) != lat.Durations[0] {
		t.Fatal("p0/p100 are not min/max")
	}
	if !strings.Contains(lat.String(), "p99.9=") {
		t.Fatalf("String() = %q", lat.String())
	}
	assertEmpty(t, dir)
}

func TestMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if _, err := SequentialSync(dir, 4096, 4096); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SequentialSync: err = %v, want ErrNotExist", err)
	}
	if _, err := SyncLatency(dir, 4096, 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SyncLatency: err = %v, want ErrNotExist", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	dir := t.TempDir()
	for _, err := range []error{
		func() error { _, err := SequentialSync(dir, 0, 1); return err }(),
		func() error { _, err := SequentialSync(dir, 1, 0); return err }(),
		func() error { _, err := SyncLatency(dir, 0, 1); return err }(),
		func() error { _, err := SyncLatency(dir, 1, -1); return err }(),
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("err = %v, want ErrInvalidArgument", err)
		}
	}
	assertEmpty(t, dir)
}

// BenchmarkDiskSequentialSync reports the disk's fsync'd sequential write
// bandwidth: one op is one 1 MiB write followed by an fsync. MB/s is in
// 10^6 bytes per second, like every Go benchmark.
func BenchmarkDiskSequentialSync(b *testing.B) {
	dir := diskprobetest.Dir(b)
	b.SetBytes(DefaultBlockSize)
	b.ResetTimer()
	res, err := SequentialSync(dir, DefaultBlockSize, int64(b.N)*DefaultBlockSize)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	// Report the probe's own timing, which leaves out creating the file.
	b.ReportMetric(res.BytesPerSecond()/1e6, "MB/s")
}

// BenchmarkDiskSyncLatency reports the latency of one 4 KiB append followed
// by an fsync; one op is one append+fsync.
func BenchmarkDiskSyncLatency(b *testing.B) {
	dir := diskprobetest.Dir(b)
	b.ResetTimer()
	lat, err := SyncLatency(dir, DefaultSyncSize, b.N)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(latency.Micros(lat.Percentile(50)), "p50-us")
	b.ReportMetric(latency.Micros(lat.Percentile(99)), "p99-us")
	b.ReportMetric(latency.Micros(lat.Percentile(99.9)), "p99.9-us")
	b.ReportMetric(latency.Micros(lat.Durations.Max()), "max-us")
	// The share of the run spent in syncs of over 10 ms: an event that
	// arrives during one waits for it, so a share above 1 % puts any p99
	// over the wait.
	var all, stalled time.Duration
	for _, d := range lat.Durations {
		all += d
		if d > 10*time.Millisecond {
			stalled += d
		}
	}
	b.ReportMetric(100*float64(stalled)/float64(max(all, 1)), "stalled-%")
}

// BenchmarkDiskGroupCommit10MBps reports an ideal log's latency on this
// disk under the benchmarks' steady load: 1 KiB events falling due at
// 10 MiB/s, each batch of due events written and fdatasynced (GroupCommit);
// one op is one event. late-% is the share of events over 3 ms.
func BenchmarkDiskGroupCommit10MBps(b *testing.B) {
	const size, rate = 1024, 10240
	dir := diskprobetest.Dir(b)
	b.SetBytes(size)
	b.ResetTimer()
	res, err := GroupCommit(dir, size, rate, time.Duration(float64(b.N)/rate*float64(time.Second)))
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	lat := res.Latencies
	b.ReportMetric(latency.Micros(lat.Percentile(50)), "p50-us")
	b.ReportMetric(latency.Micros(lat.Percentile(99)), "p99-us")
	b.ReportMetric(latency.Micros(lat.Max()), "max-us")
	b.ReportMetric(float64(res.Events)/float64(max(res.Syncs, 1)), "events/sync")
	late := 0
	for _, d := range lat {
		if d > 3*time.Millisecond {
			late++
		}
	}
	b.ReportMetric(100*float64(late)/float64(max(len(lat), 1)), "late-%")
}
