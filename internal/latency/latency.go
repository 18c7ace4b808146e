package latency

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Recorder collects durations. It is safe for concurrent use; the zero value
// is ready to use.
type Recorder struct {
	mu struct {
		sync.Mutex
		samples []time.Duration
	}
}

// NewRecorder returns a Recorder with room for capacity samples, so that
// recording on a hot path does not grow the slice.
func NewRecorder(capacity int) *Recorder {
	r := &Recorder{}
	r.mu.samples = make([]time.Duration, 0, max(capacity, 0))
	return r
}

// Record adds one duration.
func (r *Recorder) Record(d time.Duration) {
	r.mu.Lock()
	r.mu.samples = append(r.mu.samples, d)
	r.mu.Unlock()
}

// Since records the time elapsed since start and returns it.
func (r *Recorder) Since(start time.Time) time.Duration {
	d := time.Since(start)
	r.Record(d)
	return d
}

// Len returns the number of recorded durations.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mu.samples)
}

// Reset forgets every recorded duration and keeps the allocated room.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.mu.samples = r.mu.samples[:0]
	r.mu.Unlock()
}

// Snapshot returns a sorted copy of the recorded durations. The caller owns
// the returned slice; later Record calls do not change it.
func (r *Recorder) Snapshot() Sorted {
	r.mu.Lock()
	s := slices.Clone(r.mu.samples)
	r.mu.Unlock()
	return Sort(s)
}

// Percentile returns the p-th percentile (p in [0, 100]) of the durations
// recorded so far. It sorts a copy each call; take a Snapshot to ask for
// several percentiles.
func (r *Recorder) Percentile(p float64) time.Duration {
	return r.Snapshot().Percentile(p)
}

// Sorted is a slice of durations in ascending order.
type Sorted []time.Duration

// Sort sorts d in place and returns it as Sorted.
func Sort(d []time.Duration) Sorted {
	slices.Sort(d)
	return Sorted(d)
}

// Percentile returns the p-th percentile by nearest rank; p is clamped to
// [0, 100]. Percentile(0) is the minimum, Percentile(100) the maximum.
func (s Sorted) Percentile(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	if math.IsNaN(p) || p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Min returns the smallest duration, or 0 if s is empty.
func (s Sorted) Min() time.Duration { return s.Percentile(0) }

// Max returns the largest duration, or 0 if s is empty.
func (s Sorted) Max() time.Duration { return s.Percentile(100) }

// Mean returns the arithmetic mean, or 0 if s is empty.
func (s Sorted) Mean() time.Duration {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	return time.Duration(sum / float64(len(s)))
}

// String summarises s for logs, for example
// "n=1000 min=1.1ms p50=1.9ms p99=3.2ms p99.9=7ms max=9.1ms".
func (s Sorted) String() string {
	return fmt.Sprintf("n=%d min=%v p50=%v p99=%v p99.9=%v max=%v",
		len(s), s.Min(), s.Percentile(50), s.Percentile(99), s.Percentile(99.9), s.Max())
}

// Micros converts d to microseconds as a float, the unit benchmarks report
// with testing.B.ReportMetric ("p99-us").
func Micros(d time.Duration) float64 {
	return float64(d) / float64(time.Microsecond)
}
