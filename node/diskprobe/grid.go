package diskprobe

import (
	"fmt"
	"time"
)

// A Grid tells whether a disk's stalls end at fixed points of the wall
// clock: a virtual disk throttled by its host (a budget, of requests or of
// the host's CPU, refilled every period) holds every request it is given
// while its budget is spent and releases them all at the next refill, so
// the stalls of any request (a canary's sync among them) end on one phase
// of a grid of that period, whatever the guest does. Stalls of the
// guest's own making (its filesystem's journal, writeback) end at phases
// spread over the period.
type Grid struct {
	Period time.Duration // the grid's period
	Slow   time.Duration // a sync slower than this is a stall
	Stalls int           // the stalls
	// OnGrid of them ended within Width of Phase (mod Period); Phase is
	// the phase that holds the most.
	OnGrid int
	Phase  time.Duration
	Width  time.Duration
}

// Share is OnGrid over Stalls, 0 without stalls. Spread at random over the
// period, the share is about 2*Width/Period (4 % for 2 ms of 100 ms).
func (g Grid) Share() float64 {
	if g.Stalls == 0 {
		return 0
	}
	return float64(g.OnGrid) / float64(g.Stalls)
}

// StallGrid finds, among the syncs slower than slow, the phase of the
// wall clock modulo period within width of which the most of them ended:
// the phase is tried in steps of a millisecond (or of width, if smaller).
func StallGrid(syncs []CanarySync, slow, period, width time.Duration) (Grid, error) {
	if period <= 0 || width <= 0 || 2*width >= period || slow < 0 {
		return Grid{}, fmt.Errorf("%w: stall grid period %v, width %v, slow %v", ErrInvalidArgument, period, width, slow)
	}
	g := Grid{Period: period, Slow: slow, Width: width}
	var phases []time.Duration
	for _, s := range syncs {
		if s.Took > slow {
			phases = append(phases, time.Duration(s.At.UnixNano()%int64(period)))
		}
	}
	g.Stalls = len(phases)
	step := min(time.Millisecond, width)
	for p := time.Duration(0); p < period; p += step {
		n := 0
		for _, q := range phases {
			if d := circularDistance(p, q, period); d <= width {
				n++
			}
		}
		if n > g.OnGrid {
			g.OnGrid, g.Phase = n, p
		}
	}
	return g, nil
}

// circularDistance is the distance between phases a and b on a circle of
// the given period.
func circularDistance(a, b, period time.Duration) time.Duration {
	d := (a - b) % period
	if d < 0 {
		d += period
	}
	return min(d, period-d)
}
