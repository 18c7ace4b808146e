package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestBenchAfterBurst runs bench write and e2e with --after-burst against
// a real standalone (tier 2 on, its default) and checks the report's
// shape and that its numbers agree with each other: the burst's bytes,
// the per-second rows and the windows against the events, the tier-2
// lag against --tier-max-lag, the disk's p50 ratio.
func TestBenchAfterBurst(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "--output", "json"}
	bytes, syncs, group := diskProbeBytes, diskProbeSyncs, diskProbeGroup
	diskProbeBytes, diskProbeSyncs, diskProbeGroup = 4<<20, 50, 100*time.Millisecond
	defer func() { diskProbeBytes, diskProbeSyncs, diskProbeGroup = bytes, syncs, group }()

	for _, mode := range []string{"write", "e2e"} {
		r := benchJSON(t, append(c, "bench", mode, "--count", "2000", "--rate", "4000", "--after-burst", "3MiB",
			"--tier-max-lag", "20s", "--measure-disk", "--disk-dir", t.TempDir(), "--disk-canary")...)
		checkReport(t, r, 2000, 1024)

		b, ok := r["burst"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no burst in %v", mode, r)
		}
		// 3 MiB in 64 KiB events: 48 events by 8 writers.
		if b["bytes"] != float64(3<<20) || b["events"] != 48.0 || b["writers"] != 8.0 || b["seconds"].(float64) <= 0 {
			t.Fatalf("%s: burst %v", mode, b)
		}

		rows, ok := r["perSecond"].([]any)
		if !ok || len(rows) == 0 {
			t.Fatalf("%s: perSecond %v", mode, r["perSecond"])
		}
		var events float64
		for i, x := range rows {
			row := x.(map[string]any)
			if row["second"] != float64(i) {
				t.Fatalf("%s: row %d is second %v", mode, i, row["second"])
			}
			events += row["events"].(float64)
			if row["events"].(float64) > 0 && !(row["p50Ms"].(float64) <= row["p99Ms"].(float64) && row["p99Ms"].(float64) <= row["maxMs"].(float64)) {
				t.Fatalf("%s: row %v: want p50 <= p99 <= max", mode, row)
			}
		}
		if events != 2000 {
			t.Fatalf("%s: the rows hold %v events, want 2000", mode, events)
		}
		w := r["windows"].(map[string]any)
		first, after := w["first2s"].(map[string]any), w["after2s"].(map[string]any)
		if first["events"].(float64)+after["events"].(float64) != 2000 {
			t.Fatalf("%s: windows %v", mode, w)
		}
		checkLatency(t, first["latencyMs"])
		// The slowest event is in one of the windows and in one row.
		maxAll := r["latencyMs"].(map[string]any)["max"].(float64)
		maxWin := first["latencyMs"].(map[string]any)["max"].(float64)
		if a := after["latencyMs"].(map[string]any)["max"].(float64); a > maxWin {
			maxWin = a
		}
		if maxWin != maxAll {
			t.Fatalf("%s: the windows' max %v, the run's %v", mode, maxWin, maxAll)
		}

		tl, ok := r["tierLag"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no tierLag (the standalone tiers by default): %v", mode, r)
		}
		if tl["polls"].(float64) < 1 || tl["boundMs"] != 20000.0 || tl["maxLagMs"].(float64) < 0 ||
			math.Abs(tl["lagBoundRatio"].(float64)-tl["maxLagMs"].(float64)/20000) > 1e-9 {
			t.Fatalf("%s: tierLag %v", mode, tl)
		}

		p50, dp50 := r["latencyMs"].(map[string]any)["p50"].(float64), r["diskP50Ms"].(float64)
		if dp50 <= 0 || math.Abs(r["p50DiskRatio"].(float64)-p50/dp50) > 1e-9 {
			t.Fatalf("%s: p50 %v, disk p50 %v, ratio %v", mode, p50, dp50, r["p50DiskRatio"])
		}
		probes := r["diskProbes"].([]any)
		if len(probes) != 2 {
			t.Fatalf("%s: diskProbes %v, want before and after", mode, probes)
		}
		// With --rate, each probe runs an ideal log at the run's load; the
		// report sets the run's p99 against both probes' events together.
		for _, p := range probes {
			if g := p.(map[string]any); !(g["groupP50Ms"].(float64) > 0 && g["groupP50Ms"].(float64) <= g["groupP99Ms"].(float64) && g["groupP99Ms"].(float64) <= g["groupMaxMs"].(float64)) {
				t.Fatalf("%s: probe %v: want 0 < ideal log p50 <= p99 <= max", mode, g)
			}
		}
		// --disk-canary: its syncs during the run, each second's slowest
		// in the rows; the run lasts 0.5 s, its canary syncs every 10 ms.
		dc, ok := r["diskCanaryMs"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no diskCanaryMs in %v", mode, r)
		}
		checkLatency(t, dc)
		if m, ok := rows[0].(map[string]any)["diskMaxMs"].(float64); !ok || m <= 0 || m > dc["max"].(float64) {
			t.Fatalf("%s: second 0's disk max %v, the canary's max %v", mode, rows[0].(map[string]any)["diskMaxMs"], dc["max"])
		}
		p99, gp99 := r["latencyMs"].(map[string]any)["p99"].(float64), r["diskGroupP99Ms"].(float64)
		if gp99 <= 0 || r["diskGroupP50Ms"].(float64) <= 0 || math.Abs(r["p99GroupRatio"].(float64)-p99/gp99) > 1e-9 {
			t.Fatalf("%s: p99 %v, ideal log p99 %v, ratio %v", mode, p99, gp99, r["p99GroupRatio"])
		}
	}
	// The bursts' streams and the runs' streams are gone.
	if out := mustRun(t, "--controller", rs.URL, "stream", "list", "bench"); strings.Contains(out, "bench-") {
		t.Fatalf("bench left streams:\n%s", out)
	}

	// The table shows the windows, the ratios against the targets and the
	// rows.
	code, stdout, stderr := runArgs(t, "--controller", rs.URL, "bench", "write", "--count", "300", "--rate", "3000", "--after-burst", "1MiB")
	if code != 0 {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"burst", "ms, first 2 s", "ms, after 2 s", "second 0", "tier 2", "of --tier-max-lag 30000 ms"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("table lacks %q:\n%s", want, stdout)
		}
	}
	mustFail(t, "--after-burst 0: want more than 0", append([]string{"--controller", rs.URL}, "bench", "write", "--after-burst", "0")...)
	mustFail(t, "with bench write or e2e", append([]string{"--controller", rs.URL}, "bench", "read", "--after-burst", "1MiB")...)
}
