package bench

import (
	"sync"
	"time"

	"github.com/sluice-streams/sluice/internal/latency"
)

// WindowSplit is where Report.Windows splits a run: the issue's "within 2
// s after a burst" is the first window.
const WindowSplit = 2 * time.Second

// SecondRow is one second of a run: the events written in it (by the time
// of their Write call, from the start of the timed run) and their
// latencies; with tier polling, the most untiered bytes and the oldest
// untiered event the node reported in it.
type SecondRow struct {
	Second int     `json:"second"` // 0 is [0 s, 1 s)
	Events int64   `json:"events"`
	P50    float64 `json:"p50Ms"`
	P99    float64 `json:"p99Ms"`
	Max    float64 `json:"maxMs"`
	// Tier 2, from the polls in this second (absent without a poll).
	UntieredBytes *int64 `json:"untieredBytes,omitempty"`
	TierLagMS     *int64 `json:"tierLagMs,omitempty"`
	// The machine's CPUs in this second, in percent of their time
	// (HostCPU; absent where they cannot be read).
	BusyPct  *float64 `json:"busyPct,omitempty"`
	StealPct *float64 `json:"stealPct,omitempty"`
	// With Config.DiskCanary: the slowest of the canary's syncs that
	// ended in this second (absent where none did).
	DiskMaxMS *float64 `json:"diskMaxMs,omitempty"`
}

// Window is the latency of the events written in part of a run.
type Window struct {
	Events  int64     `json:"events"`
	Latency LatencyMS `json:"latencyMs"`
}

// Windows splits a run at WindowSplit.
type Windows struct {
	First Window `json:"first2s"`
	After Window `json:"after2s"`
}

// timeline collects every timed event's start (from the timed run's start)
// and latency, for the per-second rows and the windows. It is safe for
// concurrent use.
type timeline struct {
	mu  sync.Mutex
	pts []point
}

type point struct{ at, lat time.Duration }

func newTimeline(capacity int) *timeline { return &timeline{pts: make([]point, 0, capacity)} }

// record adds an event that started at at (from the timed run's start)
// and took lat.
func (t *timeline) record(at, lat time.Duration) {
	t.mu.Lock()
	t.pts = append(t.pts, point{at, lat})
	t.mu.Unlock()
}

// tierSample is one poll of the node's tier-2 state, at (from the timed
// run's start).
type tierSample struct {
	at       time.Duration
	untiered int64
	lag      time.Duration
}

// rows returns one row per second from 0 to the last event's second
// (seconds without an event have Events 0), with the tier samples of each
// second folded in (the largest of each).
func (t *timeline) rows(tier []tierSample) []SecondRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	var per [][]time.Duration
	for _, p := range t.pts {
		s := int(max(p.at, 0) / time.Second)
		for len(per) <= s {
			per = append(per, nil)
		}
		per[s] = append(per[s], p.lat)
	}
	out := make([]SecondRow, len(per))
	for s, lats := range per {
		l := latency.Sort(lats)
		out[s] = SecondRow{Second: s, Events: int64(len(l)), P50: millis(l.Percentile(50)), P99: millis(l.Percentile(99)), Max: millis(l.Max())}
	}
	for _, x := range tier {
		s := int(max(x.at, 0) / time.Second)
		if s >= len(out) {
			continue
		}
		r := &out[s]
		lag := x.lag.Milliseconds()
		if r.UntieredBytes == nil || x.untiered > *r.UntieredBytes {
			r.UntieredBytes = &x.untiered
		}
		if r.TierLagMS == nil || lag > *r.TierLagMS {
			r.TierLagMS = &lag
		}
	}
	return out
}

// windows splits the events at split: those started before it and the
// rest.
func (t *timeline) windows(split time.Duration) Windows {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first, after []time.Duration
	for _, p := range t.pts {
		if p.at < split {
			first = append(first, p.lat)
		} else {
			after = append(after, p.lat)
		}
	}
	w := func(d []time.Duration) Window {
		return Window{Events: int64(len(d)), Latency: latencyMillis(latency.Sort(d))}
	}
	return Windows{First: w(first), After: w(after)}
}

// TierLag is the largest tier-2 backlog the node reported while the run
// was timed (Config.TierPoll): all its containers' untiered bytes, and the
// age of the oldest event not yet in tier 2, against the node's
// --tier-max-lag (Config.TierMaxLag).
type TierLag struct {
	Polls            int     `json:"polls"`
	MaxUntieredBytes int64   `json:"maxUntieredBytes"`
	MaxLagMS         int64   `json:"maxLagMs"`
	BoundMS          int64   `json:"boundMs,omitempty"`
	LagBoundRatio    float64 `json:"lagBoundRatio,omitempty"` // maxLagMs / boundMs
}

// tierLag sums up samples against bound (0: none).
func tierLag(samples []tierSample, bound time.Duration) *TierLag {
	t := &TierLag{Polls: len(samples), BoundMS: bound.Milliseconds()}
	for _, s := range samples {
		t.MaxUntieredBytes = max(t.MaxUntieredBytes, s.untiered)
		t.MaxLagMS = max(t.MaxLagMS, s.lag.Milliseconds())
	}
	if t.BoundMS > 0 {
		t.LagBoundRatio = float64(t.MaxLagMS) / float64(t.BoundMS)
	}
	return t
}

// The targets for acknowledgement latency at 10 MiB/s against the
// disk's 4 KiB write+fsync in the same run; the report prints its ratios
// against them.
const (
	TargetP50DiskRatio = 2
	TargetP99DiskRatio = 3
)
