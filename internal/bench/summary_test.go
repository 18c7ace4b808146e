package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	report := func(p50, p99, diskP50, diskP99, firstP99 float64, peakRSS int64) string {
		r := Report{Mode: Write, Latency: LatencyMS{P50: p50, P99: p99}, DiskP50MS: &diskP50, DiskP99MS: &diskP99,
			Windows: &Windows{First: Window{Events: 10, Latency: LatencyMS{P50: p50, P99: firstP99}},
				After: Window{Events: 20, Latency: LatencyMS{P50: p50, P99: p99 / 2}}},
			TierLag: &TierLag{Polls: 3, MaxLagMS: 300, BoundMS: 30000, LagBoundRatio: 0.01},
			Server:  &ServerMemory{PeakRSSBytes: peakRSS}, MBPerS: 10, AckWake: &LatencyMS{P50: 0.1, P99: p99 / 10},
			HostCPU: &HostCPU{StealPct: p50 * 10}}
		idealP99 := p99 / 2 // the ideal log at the same load
		r.DiskGroupP99MS = &idealP99
		// Two seconds; the second's slowest event is the run's. The disk's
		// canary was quick in second 0 only.
		steal0, steal1 := p99, p99*2
		quick, slow := 0.5, 20.0
		r.PerSecond = []SecondRow{{Second: 0, Events: 5, P99: p99 / 4, Max: p99, StealPct: &steal0, DiskMaxMS: &quick},
			{Second: 1, Events: 5, P99: firstP99, Max: firstP99, StealPct: &steal1, DiskMaxMS: &slow},
			{Second: 2, Max: 100, DiskMaxMS: &quick}} // no events: its max is not one
		r.DiskCanary = &LatencyMS{P99: slow}
		r.DiskCanaryGrid = &CanaryGrid{Stalls: 10, OnGrid: 9, Share: 0.9}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	in := strings.Join([]string{
		"# round 1: write-burst",
		"# run: write-burst",
		"# load: 0.50 0.40 0.30 1/90 100",
		report(0.5, 3, 0.25, 1, 9, 300<<20),
		"# load after: 1.50 0.40 0.30 1/90 100",
		"# run: write-burst",
		"# load: 0.70 0.40 0.30 1/90 100",
		report(0.4, 2, 0.25, 1, 2, 400<<20),
		"# run: write-burst",
		"# load: 0.60 0.40 0.30 1/90 100",
		report(0.6, 2.5, 0.25, 1, 2.5, 350<<20),
		"",
	}, "\n")
	rows, err := Summarize(strings.NewReader(in), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SummaryRow{}
	for _, r := range rows {
		if r.Run != "write-burst" {
			t.Errorf("row of run %q", r.Run)
		}
		got[r.Measure] = r
	}
	check := func(m string, n int, min, med, max float64, target string, met *bool) {
		t.Helper()
		r, ok := got[m]
		if !ok {
			t.Fatalf("no %q in %+v", m, rows)
		}
		if r.N != n || r.Min != min || r.Median != med || r.Max != max || r.Target != target || (met == nil) != (r.Met == nil) ||
			(met != nil && *met != *r.Met) {
			t.Errorf("%s: %+v; want n %d min %v median %v max %v target %q met %v", m, r, n, min, med, max, target, met)
		}
	}
	yes, no := true, false
	check("load (1 min)", 3, 0.5, 0.6, 0.7, "", nil)
	check("load (1 min) after", 1, 1.5, 1.5, 1.5, "", nil)
	check("ack p50 / disk p50", 3, 1.6, 2, 2.4, "<= 2", &no)
	check("ack p99 / disk p99", 3, 2, 2.5, 3, "<= 3", &yes)
	check("first 2 s: ack p99 / disk p99", 3, 2, 2.5, 9, "<= 3", &no)
	check("from 2 s: ack p99 / disk p99", 3, 1, 1.25, 1.5, "<= 3", &yes)
	check("tier-2 lag / --tier-max-lag", 3, 0.01, 0.01, 0.01, "<= 1", &yes)
	check("server peak RSS MiB", 3, 300, 350, 400, "<= 384", &no)
	check("ack wake-up p99 ms (the benchmark's)", 3, 0.2, 0.25, 0.3, "", nil)
	check("host cpu stolen %", 3, 4, 5, 6, "", nil)
	check("ideal log p99 ms", 3, 1, 1.25, 1.5, "", nil)
	check("disk canary p99 ms", 3, 20, 20, 20, "", nil)
	check("seconds with the disk canary under 1 ms", 3, 1, 1, 1, "", nil)
	check("disk canary stalls on a 100 ms grid, share", 3, 0.9, 0.9, 0.9, "", nil)
	check("those seconds: worst p99 ms", 3, 0.5, 0.625, 0.75, "", nil)
	check("ack p99 / ideal log p99", 3, 2, 2, 2, "", nil)
	check("worst second: max ms", 3, 2, 2.5, 9, "", nil)
	check("worst second: host cpu stolen %", 3, 4, 5, 6, "", nil)

	if _, err := Summarize(strings.NewReader("# run: x\n{not json\n"), 0); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken report: %v, want an error naming line 2", err)
	}
}
