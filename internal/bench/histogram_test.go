package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
)

// TestHistogramAgainstSorted: the histogram's percentile is the upper
// bound of the bucket holding the exact nearest-rank percentile of the
// same samples, so never below it and at most 1/16 above (+1 ns of
// rounding).
func TestHistogramAgainstSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 100, 10000} {
		h := &histogram{}
		var samples []time.Duration
		for range n {
			// 1 ns to ~0.5 s, log-uniform: every bucket size is exercised.
			d := time.Duration(math.Exp(rng.Float64() * 20))
			samples = append(samples, d)
			h.record(d)
		}
		sorted := latency.Sort(slices.Clone(samples))
		for _, p := range []float64{1, 25, 50, 90, 95, 99, 99.9, 100} {
			exact, got := sorted.Percentile(p), h.percentile(p)
			if got < exact || float64(got-exact) > float64(exact)/16+1 {
				t.Errorf("n=%d p%v: histogram %v, exact %v: want within [exact, exact*17/16+1ns]", n, p, got, exact)
			}
		}
	}
}

func TestHistogramEmptyAndSmall(t *testing.T) {
	h := &histogram{}
	if got := h.percentile(99); got != 0 {
		t.Fatalf("empty histogram's p99 = %v, want 0", got)
	}
	// Below 16 ns every value has a bucket of its own: exact.
	for d := time.Duration(1); d < 16; d++ {
		h := &histogram{}
		h.record(d)
		if got := h.percentile(50); got != d {
			t.Errorf("one sample of %v: p50 = %v, want it exactly", d, got)
		}
	}
	// Zero and negative durations count as 1 ns.
	h.record(0)
	h.record(-5)
	if got := h.percentile(100); got != 1 {
		t.Errorf("p100 of 0 and -5 = %v, want 1ns", got)
	}
}
