package bench

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
)

// TestSlowLogLinesAreTheTimedRunsEvents: with a threshold of 0 every event
// of the timed run gets an "ack" line and, in e2e, an "e2e" line, none of
// the burst's; each line's times fall within the run and its latency is
// the event's.
func TestSlowLogLinesAreTheTimedRunsEvents(t *testing.T) {
	d := clienttest.Start(t)
	var log bytes.Buffer
	c := Config{Controller: d.URL, Mode: E2E, Writers: 1, Readers: 1, Segments: 2, EventSize: 100, Count: 200,
		Rate: 2000, AfterBurst: 1 << 20, SlowLog: &log, SlowOver: 0}
	before := time.Now()
	r, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("line %q: want 4 fields", line)
		}
		kinds[f[0]]++
		sent, err1 := strconv.ParseFloat(f[1], 64)
		wall, err2 := strconv.ParseFloat(f[2], 64)
		ms, err3 := strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("line %q: %v %v %v", line, err1, err2, err3)
		}
		if sent < 0 || sent > r.Seconds*1000+1 {
			t.Fatalf("line %q: sent %v ms after the start of a %v s run", line, sent, r.Seconds)
		}
		if wall < float64(before.UnixMilli()) || wall > float64(after.UnixMilli()) {
			t.Fatalf("line %q: wall clock %v outside the run (%v to %v)", line, wall, before.UnixMilli(), after.UnixMilli())
		}
		if ms <= 0 || ms > float64(after.Sub(before).Milliseconds()) {
			t.Fatalf("line %q: latency %v ms", line, ms)
		}
	}
	if kinds["ack"] != 200 || kinds["e2e"] != 200 || len(kinds) != 2 {
		t.Fatalf("lines by kind %v, want 200 ack and 200 e2e (the burst's events not among them)", kinds)
	}

	// A threshold over every latency writes nothing.
	log.Reset()
	c.AfterBurst, c.SlowOver = 0, time.Hour
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Fatalf("lines over an hour: %q", log.String())
	}
}
