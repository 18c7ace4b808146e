package bench

import (
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/node/diskprobe"
)

// CanaryInterval is how often Config.DiskCanary's canary syncs.
const CanaryInterval = 10 * time.Millisecond

// canary runs a diskprobe.Canary in Config.DiskDir while a write or e2e
// run is timed: what the disk did in each second of the run, beside the
// events of that second.
type canary struct {
	base time.Time
	c    *diskprobe.Canary
}

// startCanary starts one when c asks for it; nil otherwise.
func startCanary(c Config, base time.Time) (*canary, error) {
	if !c.DiskCanary {
		return nil, nil
	}
	dc, err := diskprobe.StartCanary(c.DiskDir, CanaryInterval)
	if err != nil {
		return nil, err
	}
	return &canary{base: base, c: dc}, nil
}

// canarySync is one of the canary's syncs, at (when it ended) since the
// load's base; wall is the same end on the wall clock (for canaryGrid).
type canarySync struct {
	at, took time.Duration
	wall     time.Time
}

// stop stops the canary and returns its syncs; nil for a nil canary.
func (k *canary) stop() ([]canarySync, error) {
	if k == nil {
		return nil, nil
	}
	syncs, err := k.c.Stop()
	out := make([]canarySync, len(syncs))
	for i, s := range syncs {
		out[i] = canarySync{at: s.At.Sub(k.base), took: s.Took, wall: s.At}
	}
	return out, err
}

// foldCanary sets each row's DiskMaxMS, the slowest canary sync that ended
// in its second (times from the rows' second 0), and returns the latency
// of all the canary's syncs; nil without any.
func foldCanary(rows []SecondRow, syncs []canarySync) *LatencyMS {
	if len(syncs) == 0 {
		return nil
	}
	byRow := rowIndex(rows)
	all := make([]time.Duration, 0, len(syncs))
	for _, s := range syncs {
		all = append(all, s.took)
		if s.at < 0 {
			continue
		}
		if i, ok := byRow[int(s.at/time.Second)]; ok {
			if ms := millis(s.took); rows[i].DiskMaxMS == nil || ms > *rows[i].DiskMaxMS {
				rows[i].DiskMaxMS = &ms
			}
		}
	}
	l := latencyMillis(latency.Sort(all))
	return &l
}

// The canary's stalls against a host's throttle (diskprobe.StallGrid): a
// sync over CanaryStallMS is a stall; CanaryGridPeriod is the refill
// period of the throttle measured on the machines of docs/BENCHMARKS.md
// (another host may refill at another period, and then shows no grid).
const (
	CanaryStallMS    = QuietCanaryMS
	CanaryGridPeriod = 100 * time.Millisecond
	CanaryGridWidth  = 2 * time.Millisecond
)

// canaryGrid reports whether the canary's stalls ended on one phase of a
// CanaryGridPeriod grid; nil without a stall.
func canaryGrid(syncs []canarySync) *CanaryGrid {
	ps := make([]diskprobe.CanarySync, len(syncs))
	for i, s := range syncs {
		ps[i] = diskprobe.CanarySync{At: s.wall, Took: s.took}
	}
	g, err := diskprobe.StallGrid(ps, time.Duration(CanaryStallMS*float64(time.Millisecond)), CanaryGridPeriod, CanaryGridWidth)
	if err != nil || g.Stalls == 0 { // the arguments are constants: err is a bug caught by the tests
		return nil
	}
	return &CanaryGrid{PeriodMS: millis(g.Period), WidthMS: millis(g.Width), Stalls: g.Stalls, OnGrid: g.OnGrid,
		PhaseMS: millis(g.Phase), Share: g.Share()}
}
