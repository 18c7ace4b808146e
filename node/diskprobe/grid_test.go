package diskprobe

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// syncsEndingAt makes one stall of 10 ms per end time, and a quick sync
// between each pair, which the grid must not count.
func syncsEndingAt(ends ...time.Time) []CanarySync {
	var out []CanarySync
	for _, e := range ends {
		out = append(out, CanarySync{At: e, Took: 10 * time.Millisecond},
			CanarySync{At: e.Add(3 * time.Millisecond), Took: 200 * time.Microsecond})
	}
	return out
}

func TestStallGridOnAHostGrid(t *testing.T) {
	// Stalls ending at 71 ms past each 100 ms, give or take half a
	// millisecond, and at 99.5 and 0.5 ms, which straddle the period's
	// wrap and must count as one phase.
	base := time.Unix(1_800_000_000, 0)
	var ends []time.Time
	for i := 0; i < 20; i++ {
		jitter := time.Duration(i%3-1) * 500 * time.Microsecond
		ends = append(ends, base.Add(time.Duration(i)*100*time.Millisecond+71*time.Millisecond+jitter))
	}
	g, err := StallGrid(syncsEndingAt(ends...), time.Millisecond, 100*time.Millisecond, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if g.Stalls != 20 || g.OnGrid != 20 || g.Phase < 69*time.Millisecond || g.Phase > 73*time.Millisecond {
		t.Fatalf("stalls on a grid at 71 ms: %+v", g)
	}
	wrap := syncsEndingAt(base.Add(99500*time.Microsecond), base.Add(100500*time.Microsecond), base.Add(50*time.Millisecond))
	if g, _ := StallGrid(wrap, time.Millisecond, 100*time.Millisecond, 2*time.Millisecond); g.Stalls != 3 || g.OnGrid != 2 {
		t.Fatalf("stalls either side of the wrap: %+v", g)
	}
}

func TestStallGridSpread(t *testing.T) {
	// Stalls at random phases: the best phase holds about 2*width/period
	// of them, far from all.
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(1_800_000_000, 0)
	var ends []time.Time
	for i := 0; i < 400; i++ {
		ends = append(ends, base.Add(time.Duration(rng.Int64N(int64(10*time.Second)))))
	}
	g, err := StallGrid(syncsEndingAt(ends...), time.Millisecond, 100*time.Millisecond, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if g.Stalls != 400 || g.Share() > 0.2 || g.Share() < 0.04 {
		t.Fatalf("random stalls: %+v, share %.3f", g, g.Share())
	}
	if g, _ := StallGrid(nil, time.Millisecond, 100*time.Millisecond, 2*time.Millisecond); g.Stalls != 0 || g.Share() != 0 {
		t.Fatalf("no syncs: %+v", g)
	}
}

func TestStallGridBadArguments(t *testing.T) {
	for _, c := range []struct{ slow, period, width time.Duration }{
		{time.Millisecond, 0, time.Millisecond},
		{time.Millisecond, 100 * time.Millisecond, 0},
		{time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond},
		{-time.Millisecond, 100 * time.Millisecond, 2 * time.Millisecond},
	} {
		if _, err := StallGrid(nil, c.slow, c.period, c.width); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
