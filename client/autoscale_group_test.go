package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestAutoScaleReaderGroupExactlyOnce: a reader group of two readers
// reads a stream while the auto-scaler splits it under a writer's load and
// merges it back when the writer stops: every acknowledged event is read
// once, in order per key, and successors only after their predecessors.
func TestAutoScaleReaderGroupExactlyOnce(t *testing.T) {
	windows := [4]time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	d := clienttest.Start(t, clienttest.WithAutoScale(windows,
		controller.AutoScaleOptions{Interval: 100 * time.Millisecond, Cooldown: 300 * time.Millisecond, MaxSegments: 4}))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := d.Controller.CreateScope(ctx, "sc"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Controller.CreateStream(ctx, api.StreamConfig{ScopeName: "sc", StreamName: "ag",
		ScalingPolicy: api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: 10, ScaleFactor: 2, MinSegments: 1}}); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, d)
	if _, err := c.NewReaderGroup(ctx, "sc", "g", "ag"); err != nil {
		t.Fatal(err)
	}
	fast := WithCommitInterval(20 * time.Millisecond)
	col := &collector{t: t}
	col.run(ctx, joinTest(t, c, "g", "a", fast))
	col.run(ctx, joinTest(t, c, "g", "b", fast))

	w, err := c.NewWriter(ctx, "sc", "ag")
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	counts := map[string]int{}
	go func() {
		tick := time.NewTicker(2 * time.Millisecond) // the write rate, not synchronisation
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			key := string(rune('a' + i%16))
			if _, err := w.Write(ctx, key, fmt.Appendf(nil, "%s/%d", key, counts[key])); err != nil {
				done <- err
				return
			}
			counts[key]++
			written.Add(1)
		}
	}()
	segments := func() int {
		segs, err := d.Controller.CurrentSegments(ctx, "sc", "ag")
		if err != nil {
			t.Fatal(err)
		}
		return len(segs)
	}
	pollUntil(t, ctx, "the stream to split to 4 segments", func() bool { return segments() == 4 })
	at := written.Load()
	pollUntil(t, ctx, "writes after the splits", func() bool { return written.Load() >= at+200 })
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "the stream to merge back to 1 segment", func() bool { return segments() == 1 })
	d.SealWhenIdle(ctx, "sc", "ag")
	col.wg.Wait() // both readers end with ErrEndOfStream
	evs := col.events()
	if _, dups := distinct(evs); len(dups) > 0 {
		t.Fatalf("%d events read twice, the first %+v", len(dups), dups[0])
	}
	var ds []string
	for _, e := range evs {
		ds = append(ds, string(e.Data))
	}
	got := keyOrder(t, ds)
	for key, n := range counts {
		if got[key] != n {
			t.Errorf("key %s: read %d events, acknowledged %d", key, got[key], n)
		}
	}
	if len(got) != len(counts) {
		t.Errorf("read %d keys, wrote %d", len(got), len(counts))
	}
}

// pollUntil polls cond until it holds, failing when ctx ends.
func pollUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // bounded polling of a condition
	}
}
