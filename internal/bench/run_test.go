package bench

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/clienttest"
)

// checkLatency fails unless every percentile is above 0 and they are
// ordered p50 <= p95 <= p99 <= p99.9 <= max.
func checkLatency(t *testing.T, what string, l LatencyMS) {
	t.Helper()
	ps := []float64{l.P50, l.P95, l.P99, l.P999, l.Max}
	for i, p := range ps {
		if p <= 0 || (i > 0 && p < ps[i-1]) {
			t.Fatalf("%s latency %+v: want every percentile > 0 and p50 <= p95 <= p99 <= p99.9 <= max", what, l)
		}
	}
}

// TestRunRoundTrip runs Write and E2E against a real node and controller
// (client/clienttest) and checks the counts and the latencies.
func TestRunRoundTrip(t *testing.T) {
	d := clienttest.Start(t)
	ctx := context.Background()
	base := Config{Controller: d.URL, Writers: 2, Readers: 2, Segments: 3, EventSize: 100, Count: 300}

	w := base
	w.Mode = Write
	r, err := Run(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != Write || r.Events != 300 || r.Bytes != 300*100 || r.Segments != 3 || r.Writers != 2 || r.Readers != 0 ||
		r.Seconds <= 0 || r.EventsPerS <= 0 || r.WriteLatency != nil || r.DiskMBPerS != nil {
		t.Fatalf("write report %+v", r)
	}
	checkLatency(t, "write", r.Latency)
	// The run's stream is gone.
	if streams, err := d.Controller.ListStreams(ctx, Scope, nil); err != nil || len(streams) != 0 {
		t.Fatalf("streams of %s after the run: %v, %v; want none", Scope, streams, err)
	}

	e := base
	e.Mode, e.Rate, e.Keep, e.FinePacing = E2E, 3000, true, true
	r, err = Run(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != E2E || r.Events != 300 || r.Bytes != 300*100 || r.Readers != 2 || r.Rate != 3000 || r.WriteLatency == nil {
		t.Fatalf("e2e report %+v", r)
	}
	checkLatency(t, "e2e", r.Latency)
	checkLatency(t, "e2e write", *r.WriteLatency)
	// The machine's CPUs over the paced run (0.1 s: clock ticks passed).
	if runtime.GOOS == "linux" {
		h := r.HostCPU
		if h == nil {
			t.Fatal("e2e report without hostCpu on Linux")
		}
		if sum := h.BusyPct + h.IOWaitPct + h.IdlePct + h.StealPct; math.Abs(sum-100) > 1e-6 || h.BusyPct <= 0 {
			t.Fatalf("hostCpu %+v: want shares adding up to 100 and some busy time", h)
		}
	}
	// Keep: the stream stays, and the reader group is gone.
	scope, name, _ := strings.Cut(r.Stream, "/")
	if _, err := d.Controller.GetStream(ctx, scope, name); err != nil {
		t.Fatalf("kept stream %s: %v", r.Stream, err)
	}
	if groups, err := d.Controller.ListReaderGroups(ctx, scope); err != nil || len(groups) != 0 {
		t.Fatalf("reader groups of %s after the run: %v, %v; want none", scope, groups, err)
	}

	// Read over the kept stream counts only its fill.
	rd := base
	rd.Mode, rd.Stream, rd.Count = Read, r.Stream, 200
	r, err = Run(ctx, rd)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != Read || r.Events != 200 || r.Bytes != 200*100 || r.Stream != rd.Stream {
		t.Fatalf("read report %+v", r)
	}
	checkLatency(t, "read", r.Latency)

	// A bad config fails before anything is asked of the controller.
	bad := base
	bad.Mode, bad.EventSize = E2E, 4
	if _, err := Run(ctx, bad); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("e2e with 4-byte events: %v, want ErrInvalidConfig", err)
	}
	missing := base
	missing.Mode, missing.Stream = Write, "bench/none"
	if _, err := Run(ctx, missing); err == nil || !strings.HasPrefix(err.Error(), "bench write: --stream: ") {
		t.Fatalf("unknown --stream: %v", err)
	}
}
