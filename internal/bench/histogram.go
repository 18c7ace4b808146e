package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram counts durations in logarithmic buckets (16 per power of two,
// so within ~6%), cheaply enough for every event, for the progress line's
// "p99 so far"; the report uses the exact latency.Recorder.
type histogram struct {
	counts [64 * 16]atomic.Int64
}

func histBucket(d time.Duration) int {
	v := uint64(max(d, 1))
	e := bits.Len64(v) - 1 // 2^e <= v < 2^(e+1)
	var m uint64
	if e >= 4 {
		m = (v >> (e - 4)) & 15
	} else {
		m = (v << (4 - e)) & 15
	}
	return e*16 + int(m)
}

func (h *histogram) record(d time.Duration) { h.counts[histBucket(d)].Add(1) }

// percentile returns the upper bound of the bucket holding the p-th
// percentile (0 with no samples).
func (h *histogram) percentile(p float64) time.Duration {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(total)))
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			e, m := i/16, uint64(i%16)
			return time.Duration((uint64(1) << e) + (m+1)*(uint64(1)<<e)/16)
		}
	}
	return 0
}
