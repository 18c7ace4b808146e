package container

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/protocol"
)

const (
	// benchLatencyWALFile: small log files, so the latency runs roll several
	// times; benchLatencyWarmup events (two and a half files) come before
	// the timed part. A new log's first file grows, and so does the second
	// (the first roll only asks for a spare); the third is the first
	// preallocated one, so a shorter warm-up would time appends into a
	// growing file, synced with fsync (measured: p50 ~330 µs, p99 ~1.8 ms
	// in the first 0.33 s of a run that warmed up for 1.5 files, against
	// ~100 / ~280 µs afterwards).
	benchLatencyWALFile = 8 << 20
	benchLatencyWarmup  = benchLatencyWALFile * 5 / 2 / benchEventSize
	benchEventSize      = 1024
	benchBlockEvents    = 64 // 64 KiB blocks, as a batching client sends under load
	benchWindow         = 64 // blocks in flight per writer: 4 MiB, the client library's default in-flight window (client.DefaultMaxInflight)
)

// benchRound is how many bytes of appends run between two measurements of
// the disk's own limit: this disk, like many virtual ones, changes speed
// from one second to the next, so the limit is measured in turns with the
// appends, for as many bytes, and the two totals compared.
const benchRound = 32 << 20

// BenchmarkAppendThroughput: durable appends of 1 KiB events, batched in
// 64 KiB blocks with 16 blocks (1 MiB) in flight per writer, by 1 and 8
// writers (each on its own segment of one container, so one log). Reports
// MB/s of event bytes, the disk's fsync'd sequential bandwidth (1 MiB
// writes each followed by fsync) measured in turns with the appends in the
// same directory, and the first as a percentage of the second.
func BenchmarkAppendThroughput(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := diskprobetest.Dir(b)
			c, err := Open(Config{Dir: dir, Cache: cache.New(256 << 20), WALPreallocate: true})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			event := bytes.Repeat([]byte("e"), benchEventSize)
			var blk []byte
			for i := 0; i < benchBlockEvents; i++ {
				blk = protocol.AppendEvent(blk, event)
			}
			names := make([]string, writers)
			for w := range names {
				names[w] = protocol.SegmentName("bench", "s", int64(w), 0)
				if err := c.Create(names[w], nil); err != nil {
					b.Fatal(err)
				}
			}
			blocks := (b.N + benchBlockEvents - 1) / benchBlockEvents
			eventNumber := int64(0)
			b.SetBytes(benchEventSize)
			benchtest.ThroughputInTurns(b, dir, blocks, len(blk), benchBlockEvents*benchEventSize, benchRound, func(n int) error {
				return appendBlocks(c, names, blk, n, &eventNumber)
			})
			st := c.LogStats()
			b.ReportMetric(float64(st.Records)/float64(max(st.Syncs, 1)), "records/fsync")
		})
	}
}

// appendBlocks appends n blocks spread over the segments, one writer
// goroutine per segment, each keeping benchWindow blocks in flight.
func appendBlocks(c *Container, names []string, blk []byte, n int, eventNumber *int64) error {
	writers := len(names)
	errs := make(chan error, writers)
	base := *eventNumber
	*eventNumber += int64(n)
	for w, name := range names {
		count := n / writers
		if w < n%writers {
			count++
		}
		go func(name string, count int) {
			inflight := make(chan *PendingAppend, benchWindow)
			done := make(chan error, 1)
			go func() {
				var first error
				for p := range inflight {
					if _, err := p.Wait(); err != nil && first == nil {
						first = err
					}
				}
				done <- first
			}()
			for i := 0; i < count; i++ {
				p, err := c.AppendAsync(Append{Segment: name, Writer: "w", EventNumber: base + int64(i), EventCount: benchBlockEvents,
					ExpectedOffset: protocol.NoExpectedOffset, Data: blk})
				if err != nil {
					close(inflight)
					<-done
					errs <- err
					return
				}
				inflight <- p
			}
			close(inflight)
			errs <- <-done
		}(name, count)
	}
	var first error
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// BenchmarkAppendLatency10MBps: one writer submits 1 KiB events, each as
// its own block, on a fixed schedule of 10 MB/s, pipelined; the latency of
// an event runs from its submission to its acknowledgement. (Submission
// never waits for the disk, so a stall of the node cannot hide behind a
// stalled generator. The generator's sleeps are coarse, about 1 ms here,
// so events go out in small bursts that catch up with the schedule.) Reports p50/p99/p99.9 and the
// disk's single 4 KiB write+fsync p99 measured just before, in the same
// directory, and the ratio of the two p99s.
func BenchmarkAppendLatency10MBps(b *testing.B) {
	const rate = 10e6 / benchEventSize // events per second
	interval := time.Duration(float64(time.Second) / rate)
	dir := diskprobetest.Dir(b)
	disk, err := diskprobe.SyncLatency(dir, 4096, 1000)
	if err != nil {
		b.Fatal(err)
	}
	// Small log files, so the run rolls (into preallocated files) several times.
	c, err := Open(Config{Dir: dir, Cache: cache.New(256 << 20), WALPreallocate: true, WALFileSize: benchLatencyWALFile})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	submit := latencySubmitter(b, c)
	// Warm up at the same rate until the log has rolled into a
	// preallocated file: a log in its steady state writes into those, a
	// new one does not yet. rolls and growing-rolls count the timed part's.
	warm := c.LogStats()
	b.SetBytes(benchEventSize)
	benchtest.PacedLatency(b, disk, benchLatencyWarmup, interval, func() error {
		if warm = c.LogStats(); warm.SpareRolls == 0 {
			return fmt.Errorf("the log has not rolled into a preallocated file yet (%d rolls)", warm.Rolls)
		}
		return nil
	}, submit)
	st := c.LogStats()
	b.ReportMetric(float64(st.Rolls-warm.Rolls), "rolls")
	b.ReportMetric(float64((st.Rolls-warm.Rolls)-(st.SpareRolls-warm.SpareRolls)), "growing-rolls")
	// How many events a sync covered: the group commit's batching, which
	// the generator's bursts and the transport shape.
	b.ReportMetric(float64(b.N)/float64(max(st.Syncs-warm.Syncs, 1)), "events/sync")
}

// latencySubmitter creates the latency benchmarks' segment in c and
// returns latency.RunPaced's submit: each call appends one event of
// benchEventSize as its own block and returns the wait for it.
func latencySubmitter(b *testing.B, c *Container) func(int) (func() error, error) {
	name := protocol.SegmentName("bench", "lat", 0, 0)
	if err := c.Create(name, nil); err != nil {
		b.Fatal(err)
	}
	blk := protocol.AppendEvent(nil, bytes.Repeat([]byte("e"), benchEventSize))
	eventNumber := int64(0)
	return func(int) (func() error, error) {
		eventNumber++
		p, err := c.AppendAsync(Append{Segment: name, Writer: "w", EventNumber: eventNumber, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: blk})
		if err != nil {
			return nil, err
		}
		return func() error { _, err := p.Wait(); return err }, nil
	}
}
