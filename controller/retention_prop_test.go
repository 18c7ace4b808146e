package controller

import (
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestRetentionHugeLimitsKeepEverything is the reported case: a limit so
// large that converting it to milliseconds or bytes overflowed int64 made
// retention truncate a stream's data within minutes.
func TestRetentionHugeLimitsKeepEverything(t *testing.T) {
	const now = int64(1_700_000_000_000) // ms: late 2023
	head := map[int64]int64{0: 0}
	cuts := []retentionCut{{Time: now - 90_000, Size: 1 << 20, Cut: map[int64]int64{0: 1 << 20}}}
	for _, p := range []api.RetentionPolicy{
		{Type: api.RetentionLimitedDays, Value: 107_000_000_000}, // 9.2e18 ms: just past int64
		{Type: api.RetentionLimitedDays, Value: math.MaxInt64},
		{Type: api.RetentionLimitedSizeMB, Value: 1 << 43},
		{Type: api.RetentionLimitedSizeMB, Value: math.MaxInt64},
	} {
		if cut, ok := decideRetention(p, now, head, cuts, 2<<20); ok {
			t.Errorf("%+v: truncates at %v after 90 s, want no truncation", p, cut)
		}
		// The cut list must not churn either: a limit that overflows to
		// a negative grain recorded a cut at every step.
		if shouldRecord(p, now+1, cuts, 2<<20+1) {
			t.Errorf("%+v: records a new cut 1 ms and 1 byte after the last", p)
		}
	}
}

// TestRetentionNeverTruncatesMoreThanThePolicy checks decideRetention
// against the policy computed exactly (math/big), over random limits,
// clocks, cut times and sizes, the extremes of int64 included: the cut it
// picks is always old enough (LIMITED_DAYS) or leaves at least the limit
// (LIMITED_SIZE_MB), lies after the head, and is the newest such cut.
func TestRetentionNeverTruncatesMoreThanThePolicy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	// edge picks an int64 from [lo, hi], often near an end or a power of
	// two, where overflow hides.
	edge := func(lo, hi int64) int64 {
		span := uint64(hi) - uint64(lo) // hi-lo, without overflow
		switch rng.Intn(4) {
		case 0:
			return lo + int64(rng.Uint64()%min(span+1, 1000))
		case 1:
			return hi - int64(rng.Uint64()%min(span+1, 1000))
		case 2:
			v := int64(1) << uint(rng.Intn(63))
			return max(lo, min(hi, v+rng.Int63n(3)-1))
		}
		return int64(uint64(lo) + rng.Uint64()%span)
	}
	bigOf := func(v int64) *big.Int { return big.NewInt(v) }
	for n := 0; n < 20000; n++ {
		p := api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: edge(1, math.MaxInt64)}
		if rng.Intn(2) == 0 {
			p.Type = api.RetentionLimitedSizeMB
		}
		now := edge(math.MinInt64+1, math.MaxInt64)
		size := edge(0, math.MaxInt64)
		cuts := make([]retentionCut, rng.Intn(6))
		for j := range cuts {
			cuts[j] = retentionCut{Time: edge(math.MinInt64+1, math.MaxInt64), Size: edge(-1, size), Cut: map[int64]int64{0: int64(j + 1)}}
		}
		head := map[int64]int64{0: 0}
		// allowed reports whether the policy allows truncating at c,
		// computed without overflow.
		allowed := func(c retentionCut) bool {
			if c.Size <= 0 {
				return false
			}
			switch p.Type {
			case api.RetentionLimitedDays:
				age := new(big.Int).Sub(bigOf(now), bigOf(c.Time))
				limit := new(big.Int).Mul(bigOf(p.Value), bigOf(dayMillis))
				return age.Cmp(limit) >= 0
			default:
				left := new(big.Int).Sub(bigOf(size), bigOf(c.Size))
				limit := new(big.Int).Mul(bigOf(p.Value), bigOf(mib))
				return bigOf(size).Cmp(limit) > 0 && left.Cmp(limit) >= 0
			}
		}
		i := newestCandidate(p, now, head, cuts, size)
		var want []int // indexes of the cuts the policy allows
		for j, c := range cuts {
			if allowed(c) {
				want = append(want, j)
			}
		}
		if i < 0 {
			if len(want) > 0 {
				t.Fatalf("case %d: policy %+v now %d size %d cuts %+v: no truncation, but cut %d is allowed", n, p, now, size, cuts, want[0])
			}
			continue
		}
		if !allowed(cuts[i]) {
			t.Fatalf("case %d: policy %+v now %d size %d: truncates at %+v, which the policy keeps", n, p, now, size, cuts[i])
		}
		for _, j := range want {
			if older(p, cuts[i], cuts[j]) {
				t.Fatalf("case %d: policy %+v now %d size %d: truncates at %+v, not the newest allowed %+v", n, p, now, size, cuts[i], cuts[j])
			}
		}
	}
}
