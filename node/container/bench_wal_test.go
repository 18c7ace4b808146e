package container

import (
	"bytes"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/protocol"
)

// BenchmarkAppendLatency10MBpsNewLog is BenchmarkAppendLatency10MBps on a
// new log with no warm-up, at the node's default file size: the first
// appends go to the log's first file, which grows (synced with fsync)
// until the log has a spare to roll into. Reports p50/p99 against the
// disk's 4 KiB write+fsync p50/p99 measured just before in the same
// directory, how many of the timed appends' rolls were early ones, and
// the share of their syncs that were fsyncs of a growing file.
// Run it with a benchtime of several seconds (-benchtime=50000x): the
// part in the growing file is what it measures.
func BenchmarkAppendLatency10MBpsNewLog(b *testing.B) {
	benchLatencyOnLog(b, 0)
}

// BenchmarkAppendLatency10MBpsAfterBurst: as fast as 8 writers can, fill
// three files of a new log (every roll after the first goes to a growing
// file: the log writes too fast to afford spares), then at once 10 MB/s
// from one writer, timed from the first event: what a writer sees when a
// burst has just ended.
func BenchmarkAppendLatency10MBpsAfterBurst(b *testing.B) {
	benchLatencyOnLog(b, 3)
}

// benchLatencyOnLog opens a container on a new log at the default file
// size, fills burstFiles of it as fast as it can, and times 10 MB/s of
// 1 KiB events.
func benchLatencyOnLog(b *testing.B, burstFiles int) {
	const rate = 10e6 / benchEventSize // events per second
	interval := time.Duration(float64(time.Second) / rate)
	dir := diskprobetest.Dir(b)
	disk, err := diskprobe.SyncLatency(dir, 4096, 1000)
	if err != nil {
		b.Fatal(err)
	}
	c, err := Open(Config{Dir: dir, Cache: cache.New(256 << 20), WALPreallocate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if burstFiles > 0 {
		names := make([]string, 8)
		for w := range names {
			names[w] = protocol.SegmentName("bench", "burst", int64(w), 0)
			if err := c.Create(names[w], nil); err != nil {
				b.Fatal(err)
			}
		}
		var blk []byte
		for i := 0; i < benchBlockEvents; i++ {
			blk = protocol.AppendEvent(blk, bytes.Repeat([]byte("e"), benchEventSize))
		}
		var eventNumber int64
		blocks := burstFiles * (64 << 20) / len(blk)
		if err := appendBlocks(c, names, blk, blocks, &eventNumber); err != nil {
			b.Fatal(err)
		}
	}
	submit := latencySubmitter(b, c)
	before := c.LogStats()
	b.SetBytes(benchEventSize)
	rec := latency.NewRecorder(b.N)
	b.ResetTimer()
	if err := latency.RunPaced(b.N, interval, rec, submit); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	st := c.LogStats()
	s := rec.Snapshot()
	b.ReportMetric(latency.Micros(s.Percentile(50)), "p50-us")
	b.ReportMetric(latency.Micros(s.Percentile(99)), "p99-us")
	b.ReportMetric(latency.Micros(disk.Percentile(50)), "disk-p50-us")
	b.ReportMetric(latency.Micros(disk.Percentile(99)), "disk-p99-us")
	b.ReportMetric(float64(s.Percentile(50))/float64(disk.Percentile(50)), "p50/disk-p50")
	b.ReportMetric(float64(s.Percentile(99))/float64(disk.Percentile(99)), "p99/disk-p99")
	b.ReportMetric(float64(st.Rolls-before.Rolls), "rolls")
	b.ReportMetric(float64(st.EarlyRolls-before.EarlyRolls), "early-rolls")
	// The share of the timed part's syncs that were fsyncs of a growing
	// file: what the early roll is for, and less noisy than the latencies
	// on a busy machine.
	b.ReportMetric(float64(st.GrowSyncs-before.GrowSyncs)/float64(max(st.Syncs-before.Syncs, 1)), "grow-sync-share")
	b.Logf("load %s; log before the timed part %+v, after %+v", benchtest.Loadavg(), before, st)
}
