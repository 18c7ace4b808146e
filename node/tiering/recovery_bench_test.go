package tiering_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/protocol"
	tier2fs "github.com/sluice-streams/sluice/tier2/fs"
)

// BenchmarkTierPassRecords measures what recovery records cost the
// storage writer where they cost most: many small passes. One op is a
// fresh container on the fs backend with 4 busy segments and 200 idle
// ones (so that each record holds a realistic table); 64 rounds each
// append 1 MiB of 1 KiB events to every busy segment (not timed) and run
// one Pass (timed) that tiers them: 4 chunks of 1 MiB a pass, each
// fsync'd and renamed, and with records on one record a pass besides.
// records=off is the same without records (Config.NoRecoveryRecords).
// Reports event-MB/s (event bytes tiered over pass time, Go's MB/s too)
// and, with records on, the record's size.
func BenchmarkTierPassRecords(b *testing.B) {
	const (
		busy, idle = 4, 200
		rounds     = 64
		perSegment = 1 << 20
	)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("records=%v", map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
			var passTime time.Duration
			var tiered, recBytes int64
			b.SetBytes(rounds * busy * perSegment)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := diskprobetest.Dir(b)
				store, err := tier2fs.New(filepath.Join(dir, "tier2"))
				if err != nil {
					b.Fatal(err)
				}
				c, err := container.Open(container.Config{Dir: filepath.Join(dir, "log"), Cache: cache.New(256 << 20),
					WALPreallocate: true, Chunks: tiering.Reader{Store: store}})
				if err != nil {
					b.Fatal(err)
				}
				names, err := createSegments(c, busy+idle)
				if err != nil {
					b.Fatal(err)
				}
				w := tiering.New(tiering.Config{Container: c, Store: store, NoRecoveryRecords: !on,
					Policy: tiering.Policy{SegmentBytes: 1, ChunkBytes: 2 * perSegment}})
				blk, next := benchBlock(), int64(0)
				for range rounds {
					// One writer a segment, its event numbers going on
					// from round to round.
					for range perSegment / len(blk) {
						for _, n := range names[:busy] {
							next++
							if _, err := c.Append(container.Append{Segment: n, Writer: "w-" + n, EventNumber: next,
								EventCount: benchBlockEvents, ExpectedOffset: protocol.NoExpectedOffset, Data: blk}); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StartTimer()
					start := time.Now()
					if err := w.Pass(context.Background()); err != nil {
						b.Fatal(err)
					}
					passTime += time.Since(start)
					b.StopTimer()
				}
				if st := w.Stats(); st.Untiered != 0 {
					b.Fatalf("%d bytes left untiered", st.Untiered)
				}
				tiered += rounds * busy * perSegment
				if on {
					rec, err := c.ExportRecovery(0)
					if err != nil {
						b.Fatal(err)
					}
					recBytes = int64(len(rec.Blob))
				}
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(tiered)/1e6/passTime.Seconds(), "event-MB/s")
			if on {
				b.ReportMetric(float64(recBytes), "record-bytes")
			}
		})
	}
}
