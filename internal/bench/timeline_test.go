package bench

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/cpustat"
)

func TestTimelineRowsAndWindows(t *testing.T) {
	ms := time.Millisecond
	tl := newTimeline(0)
	// Second 0: latencies 1..100 ms (p50 50, p99 99, max 100); second 1:
	// nothing; second 2: one event of 7 ms; one event before the start
	// (a writer's clock read just before) counts in second 0.
	for i := 1; i <= 100; i++ {
		tl.record(time.Duration(i)*5*ms, time.Duration(i)*ms)
	}
	tl.record(2500*ms, 7*ms)
	tl.record(-ms, 3*ms)
	tiers := []tierSample{
		{at: 100 * ms, untiered: 10, lag: 5 * ms},
		{at: 900 * ms, untiered: 30, lag: 2 * ms},
		{at: 2100 * ms, untiered: 4, lag: 40 * ms},
		{at: 9 * time.Second, untiered: 99, lag: time.Second}, // after the last event's second: no row
	}
	rows := tl.rows(tiers)
	if len(rows) != 3 {
		t.Fatalf("rows %+v: want 3 (seconds 0, 1, 2)", rows)
	}
	if r := rows[0]; r.Second != 0 || r.Events != 101 || r.P50 != 50 || r.P99 != 99 || r.Max != 100 ||
		r.UntieredBytes == nil || *r.UntieredBytes != 30 || *r.TierLagMS != 5 {
		t.Errorf("second 0: %+v", r)
	}
	if r := rows[1]; r.Second != 1 || r.Events != 0 || r.P99 != 0 || r.UntieredBytes != nil || r.TierLagMS != nil {
		t.Errorf("second 1: %+v; want an empty row", r)
	}
	if r := rows[2]; r.Second != 2 || r.Events != 1 || r.P50 != 7 || r.Max != 7 || *r.UntieredBytes != 4 || *r.TierLagMS != 40 {
		t.Errorf("second 2: %+v", r)
	}

	w := tl.windows(2 * time.Second)
	if w.First.Events != 101 || w.After.Events != 1 || w.First.Latency.P99 != 99 || w.After.Latency.Max != 7 {
		t.Errorf("windows %+v", w)
	}
	var events int64
	for _, r := range rows {
		events += r.Events
	}
	if events != w.First.Events+w.After.Events {
		t.Errorf("rows hold %d events, windows %d", events, w.First.Events+w.After.Events)
	}

	lag := tierLag(tiers, 2*time.Second)
	if lag.Polls != 4 || lag.MaxUntieredBytes != 99 || lag.MaxLagMS != 1000 || lag.BoundMS != 2000 || lag.LagBoundRatio != 0.5 {
		t.Errorf("tier lag %+v", lag)
	}
	if l := tierLag(nil, 0); l.Polls != 0 || l.BoundMS != 0 || l.LagBoundRatio != 0 {
		t.Errorf("no samples, no bound: %+v", l)
	}

	// An empty timeline has no rows and empty windows.
	empty := newTimeline(0)
	if r := empty.rows(tiers); len(r) != 0 {
		t.Errorf("empty timeline rows %+v", r)
	}
	if w := empty.windows(WindowSplit); w.First.Events != 0 || w.After.Events != 0 {
		t.Errorf("empty timeline windows %+v", w)
	}
}

// TestTimelineJSONKeys pins the keys of the per-second rows, windows,
// burst and tier lag, which scripts/bench-tail.sh reads.
func TestTimelineJSONKeys(t *testing.T) {
	one, n := 1.0, int64(1)
	r := Report{
		DiskP50MS: &one, P50DiskRate: &one, DiskProbes: []DiskProbe{{}},
		PerSecond: []SecondRow{{UntieredBytes: &n, TierLagMS: &n, BusyPct: &one, StealPct: &one}},
		HostCPU:   &HostCPU{},
		Windows:   &Windows{}, Burst: &BurstReport{}, TierLag: &TierLag{BoundMS: 1, LagBoundRatio: 1},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any, want ...string) {
		t.Helper()
		o, ok := v.(map[string]any)
		if !ok || len(o) != len(want) {
			t.Errorf("%v: want keys %q", v, want)
			return
		}
		for _, k := range want {
			if _, ok := o[k]; !ok {
				t.Errorf("%v lacks %q", v, k)
			}
		}
	}
	for _, k := range []string{"diskP50Ms", "p50DiskRatio"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	keys(m["diskProbes"].([]any)[0], "mbPerSec", "p50Ms", "p99Ms")
	keys(m["perSecond"].([]any)[0], "second", "events", "p50Ms", "p99Ms", "maxMs", "untieredBytes", "tierLagMs", "busyPct", "stealPct")
	keys(m["hostCpu"], "busyPct", "iowaitPct", "idlePct", "stealPct")
	keys(m["windows"], "first2s", "after2s")
	keys(m["windows"].(map[string]any)["first2s"], "events", "latencyMs")
	keys(m["burst"], "stream", "writers", "events", "bytes", "seconds", "mbPerSec", "deleteMs")
	keys(m["tierLag"], "polls", "maxUntieredBytes", "maxLagMs", "boundMs", "lagBoundRatio")
}

// TestFoldCPU folds CPU samples into the seconds they fall in: each row
// gets the shares from its first sample to its last; a second with one
// sample, or none, gets nothing.
func TestFoldCPU(t *testing.T) {
	rows := []SecondRow{{Second: 0}, {Second: 1}, {Second: 2}}
	ms := time.Millisecond
	at := func(d time.Duration, busy, idle, steal uint64) cpuSample {
		return cpuSample{at: d, t: cpustat.Times{User: busy, Idle: idle, Steal: steal}}
	}
	samples := []cpuSample{
		at(-50*ms, 0, 0, 0),        // before second 0: ignored
		at(0, 100, 100, 10),        // second 0 from here
		at(900*ms, 150, 130, 30),   // to here: busy 50, idle 30, steal 20
		at(1500*ms, 200, 200, 100), // second 1's only sample: nothing
		at(2100*ms, 300, 300, 100), // second 2 from here
		at(2999*ms, 300, 400, 100), // to here: idle 100
	}
	foldCPU(rows, samples)
	if r := rows[0]; r.BusyPct == nil || *r.BusyPct != 50 || *r.StealPct != 20 {
		t.Fatalf("second 0: busy %v steal %v, want 50 and 20", r.BusyPct, r.StealPct)
	}
	if r := rows[1]; r.BusyPct != nil || r.StealPct != nil {
		t.Fatalf("second 1 (one sample): busy %v steal %v, want none", r.BusyPct, r.StealPct)
	}
	if r := rows[2]; r.BusyPct == nil || *r.BusyPct != 0 || *r.StealPct != 0 {
		t.Fatalf("second 2: busy %v steal %v, want 0 and 0", r.BusyPct, r.StealPct)
	}
	if h := hostCPUOf(samples); h == nil || h.BusyPct != 100.0*300/800 || h.IdlePct != 100.0*400/800 || h.StealPct != 100.0*100/800 {
		t.Fatalf("hostCPUOf = %+v, want busy 37.5, idle 50, steal 12.5 (of 800 ticks)", h)
	}
	if h := hostCPUOf(samples[:1]); h != nil {
		t.Fatalf("hostCPUOf of one sample = %+v, want nil", h)
	}
}
