package container

import (
	"testing"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/protocol"
)

// BenchmarkAppendAsyncRates: the CPU cost of AppendAsync (the part under
// the container lock: checks, the log's queue, metadata, cache) with the
// rate meters off and on, 1-event blocks of 100 bytes; every 256 appends
// the last one is waited for, so the log's queue stays short. Compare
// off and on: the meter adds two additions per block and, once per tick,
// one fold.
func BenchmarkAppendAsyncRates(b *testing.B) {
	rc := rates.DefaultConfig()
	for _, tc := range []struct {
		name string
		cfg  *rates.Config
	}{{"off", nil}, {"on", &rc}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := Open(Config{Dir: b.TempDir(), Cache: cache.New(64 << 20), Rates: tc.cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			seg := protocol.SegmentName("bench", "r", 0, 0)
			if err := c.Create(seg, nil); err != nil {
				b.Fatal(err)
			}
			blk := protocol.AppendEvent(nil, make([]byte, 100))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p, err := c.AppendAsync(Append{Segment: seg, Data: blk, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset})
				if err != nil {
					b.Fatal(err)
				}
				if i%256 == 255 || i == b.N-1 {
					if _, err := p.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
