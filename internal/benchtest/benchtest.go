// Package benchtest holds what the benchmarks of several packages share:
// the append benchmarks' measuring loops (throughput measured in turns
// with the disk, paced latency against the disk's own) and the heads'
// read benchmarks' pieces (hdfsgateway/headbench, nfsexport/nfsbench,
// s3gateway/s3bench): run shapes from the environment (EnvInt), chunks
// of random events written into tier 2 (WriteChunk), the machine's load
// (Loadavg) and min/median/max of the rounds (Spread).
package benchtest

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/cpustat"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe"
)

// maxWarmupRounds bounds how often PacedLatency extends a warm-up that
// has not reached its steady state.
const maxWarmupRounds = 4

// ThroughputInTurns runs blocks appends in rounds of roundBytes of event
// bytes and, after each round and with b's timer stopped, measures the
// disk's fsync'd sequential bandwidth in dir (1 MiB writes each followed by
// fsync) for as many bytes as the round wrote: disks, virtual ones above
// all, change speed from one second to the next, so the two are measured
// in turns and their totals compared. appendN(n) appends n blocks of
// blockBytes bytes each, eventBytes of them event data. It reports MB/s of
// event bytes (event-MB/s), the disk's bandwidth (disk-MB/s) and the first
// as a percentage of the second (%disk).
func ThroughputInTurns(b *testing.B, dir string, blocks, blockBytes, eventBytes, roundBytes int, appendN func(n int) error) {
	perRound := roundBytes / eventBytes
	var appendTime, diskTime time.Duration
	var appended, probed int64
	b.ResetTimer()
	for blocks > 0 {
		n := min(blocks, perRound)
		blocks -= n
		start := time.Now()
		if err := appendN(n); err != nil {
			b.Fatal(err)
		}
		appendTime += time.Since(start)
		appended += int64(n * eventBytes)
		b.StopTimer()
		r, err := diskprobe.SequentialSync(dir, diskprobe.DefaultBlockSize, int64(n*blockBytes))
		if err != nil {
			b.Fatal(err)
		}
		diskTime += r.Elapsed
		probed += r.Bytes
		b.StartTimer()
	}
	b.StopTimer()
	ReportAgainstDisk(b, appended, appendTime, probed, diskTime, "disk-MB/s")
}

// ReportAgainstDisk reports event-MB/s (bytes over took), the disk's
// MB/s measured in the same run (probed over probeTook) under diskMetric,
// and the first as a percentage of the second (%disk).
func ReportAgainstDisk(b *testing.B, bytes int64, took time.Duration, probed int64, probeTook time.Duration, diskMetric string) {
	mbps := float64(bytes) / took.Seconds() / 1e6
	limit := float64(probed) / probeTook.Seconds() / 1e6
	b.ReportMetric(mbps, "event-MB/s")
	b.ReportMetric(limit, diskMetric)
	b.ReportMetric(100*mbps/limit, "%disk")
}

// PacedLatency runs warmup operations, unrecorded, then b.N timed ones,
// all one every interval (latency.RunPaced), and reports the timed ones'
// p50/p99/p99.9, disk's p99 (the reference measured before the system
// under test opened), the ratio of the two p99s, and the share of the
// machine's CPU time the host took meanwhile (steal-%, internal/cpustat;
// Linux only).
//
// steady, if not nil, says whether the system reached the state the
// benchmark means to measure (nil) or not yet (an error). While it has
// not, the warm-up goes on, warmup/2 operations at a time, up to
// maxWarmupRounds more times; then its error fails b.
func PacedLatency(b *testing.B, disk diskprobe.Latencies, warmup int, interval time.Duration, steady func() error, submit func(i int) (wait func() error, err error)) {
	n := warmup
	for round := 0; ; round++ {
		if err := latency.RunPaced(n, interval, latency.NewRecorder(n), submit); err != nil {
			b.Fatal(err)
		}
		if steady == nil {
			break
		}
		err := steady()
		if err == nil {
			break
		}
		if round == maxWarmupRounds {
			b.Fatalf("not steady after the warm-up: %v", err)
		}
		n = max(warmup/2, 1)
	}
	rec := latency.NewRecorder(b.N)
	cpuBefore, cpuErr := cpustat.Read()
	b.ResetTimer()
	if err := latency.RunPaced(b.N, interval, rec, submit); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if cpuAfter, err := cpustat.Read(); cpuErr == nil && err == nil {
		// The host's share of the machine's CPUs meanwhile: what a
		// virtual machine's latency pays without its load showing it.
		b.ReportMetric(100*cpustat.Between(cpuBefore, cpuAfter).Steal, "steal-%")
	}
	s := rec.Snapshot()
	diskP99 := disk.Percentile(99)
	b.ReportMetric(latency.Micros(s.Percentile(50)), "p50-us")
	b.ReportMetric(latency.Micros(s.Percentile(99)), "p99-us")
	b.ReportMetric(latency.Micros(s.Percentile(99.9)), "p99.9-us")
	b.ReportMetric(latency.Micros(diskP99), "disk-p99-us")
	b.ReportMetric(float64(s.Percentile(99))/float64(diskP99), "p99/disk-p99")
}
