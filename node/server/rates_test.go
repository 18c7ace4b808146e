package server_test

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/protocol"
)

// GetSegmentRates over TCP: appended events show in every window, a
// segment with no appends has none, a missing one is marked Missing, and
// the reply keeps the order asked; a bad request is refused with one
// error and the connection goes on.
func TestGetSegmentRates(t *testing.T) {
	windows := [rates.NumWindows]time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute}
	e := startWith(t, func(c *node.Config) { c.Rates = rates.Config{Windows: windows, Tick: time.Millisecond} })
	t.Cleanup(e.stop)
	c := e.dial()
	ctx := ctxT(t)
	for _, s := range []string{seg(1), seg(2)} {
		if err := c.CreateSegment(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetupAppend(ctx, "w", seg(1)); err != nil {
		t.Fatal(err)
	}
	block := protocol.AppendEvent(protocol.AppendEvent(nil, []byte("0123456789")), []byte("abcdefghij"))
	for i := int64(0); i < 50; i++ {
		if _, err := c.Append(ctx, "w", 2*i+1, 2, block, protocol.NoExpectedOffset); err != nil {
			t.Fatal(err)
		}
	}
	missing := protocol.SegmentName("scope", "other", 0, 0)
	got, err := c.GetSegmentRates(ctx, []string{seg(2), missing, seg(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.WindowMillis) != rates.NumWindows || got.WindowMillis[0] != 60000 || got.WindowMillis[3] != 240000 {
		t.Errorf("windows %v", got.WindowMillis)
	}
	if len(got.Rates) != 3 || got.Rates[0].Segment != seg(2) || got.Rates[1].Segment != missing || got.Rates[2].Segment != seg(1) {
		t.Fatalf("entries %+v", got.Rates)
	}
	if r := got.Rates[0]; r.Missing || len(r.Events) != rates.NumWindows || r.Events[0] != 0 || r.Events[3] != 0 {
		t.Errorf("segment without appends: %+v", r)
	}
	if r := got.Rates[1]; !r.Missing || len(r.Events) != 0 {
		t.Errorf("missing segment: %+v", r)
	}
	r := got.Rates[2]
	if r.Missing || len(r.Events) != rates.NumWindows || len(r.Bytes) != rates.NumWindows {
		t.Fatalf("written segment: %+v", r)
	}
	for i := range r.Events {
		if r.Events[i] <= 0 || r.Bytes[i] <= r.Events[i] {
			t.Errorf("window %d: %v events/s, %v bytes/s; want both > 0 and 14 bytes per event", i, r.Events[i], r.Bytes[i])
		}
	}
	if _, err := c.GetSegmentRates(ctx, nil); err == nil {
		t.Fatal("an empty request was answered")
	}
	if _, err := c.GetSegmentRates(ctx, []string{seg(1)}); err != nil {
		t.Fatalf("the connection did not go on after a refused request: %v", err)
	}
}
