package client_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/protocol/api"
)

// pollFor polls cond until it holds or a minute has passed.
func pollFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // bounded polling of a condition
	}
}

// TestAutoScaleSplitsAndMergesBack: a real node and controller with
// second-scale rate windows. A writer far above the stream's target makes
// its segments split (up to the maximum); when it stops, the cold
// neighbours merge back to the minimum. A reader that reads throughout
// gets every acknowledged event exactly once, in order per key, and the
// scaling history says each scale was automatic and why.
func TestAutoScaleSplitsAndMergesBack(t *testing.T) {
	windows := [4]time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	d := clienttest.Start(t, clienttest.WithAutoScale(windows,
		controller.AutoScaleOptions{Interval: 100 * time.Millisecond, Cooldown: 300 * time.Millisecond, MaxSegments: 4}))
	ctx := testCtx(t)
	if err := d.Controller.CreateScope(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Controller.CreateStream(ctx, api.StreamConfig{ScopeName: "s", StreamName: "auto",
		ScalingPolicy: api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: 10, ScaleFactor: 2, MinSegments: 1}}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, d)
	r, err := c.NewReader(ctx, "s", "auto")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The reader reads from the start, through every scale, until the
	// stream is sealed.
	var mu sync.Mutex
	var got []string
	readDone := make(chan error, 1)
	go func() {
		for {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				readDone <- err
				return
			}
			mu.Lock()
			got = append(got, string(ev.Data))
			mu.Unlock()
		}
	}()

	w, err := c.NewWriter(ctx, "s", "auto")
	if err != nil {
		t.Fatal(err)
	}
	// About 500 events/s over 16 keys spread over the key space: 50
	// times the target.
	var written atomic.Int64
	stop := make(chan struct{})
	type result struct {
		counts map[string]int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		counts := map[string]int{}
		tick := time.NewTicker(2 * time.Millisecond) // the write rate, not synchronisation
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- result{counts, nil}
				return
			case <-tick.C:
			}
			key := fmt.Sprintf("k%d", i%16)
			if _, err := w.Write(ctx, key, fmt.Appendf(nil, "%s:%d", key, counts[key])); err != nil {
				done <- result{counts, err}
				return
			}
			counts[key]++
			written.Add(1)
		}
	}()
	segments := func() int {
		segs, err := d.Controller.CurrentSegments(ctx, "s", "auto")
		if err != nil {
			t.Fatal(err)
		}
		return len(segs)
	}
	pollFor(t, "the hot stream to split to 4 segments", func() bool { return segments() == 4 })
	at := written.Load()
	pollFor(t, "writes to go on after the splits", func() bool { return written.Load() >= at+200 })
	close(stop)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "the quiet stream to merge back to 1 segment", func() bool { return segments() == 1 })

	if err := d.Controller.SealStream(ctx, "s", "auto"); err != nil {
		t.Fatal(err)
	}
	if err := <-readDone; !errors.Is(err, client.ErrEndOfStream) {
		t.Fatalf("reader ended with %v, want the end of the stream", err)
	}
	next := map[string]int{}
	for _, ev := range got {
		key, seqText, _ := strings.Cut(ev, ":")
		seq, err := strconv.Atoi(seqText)
		if err != nil || seq != next[key] {
			t.Fatalf("key %s: read event %q where %d was due (lost, duplicated or reordered)", key, ev, next[key])
		}
		next[key]++
	}
	for key, n := range res.counts {
		if next[key] != n {
			t.Errorf("key %s: read %d events, acknowledged %d", key, next[key], n)
		}
	}

	epochs, err := d.Controller.Epochs(ctx, "s", "auto")
	if err != nil {
		t.Fatal(err)
	}
	var splits, merges int
	for _, e := range epochs[1:] {
		if e.Trigger != api.TriggerAuto {
			t.Errorf("epoch %d: trigger %q, want auto", e.Epoch, e.Trigger)
		}
		switch {
		case strings.Contains(e.Reason, "hot") && strings.Contains(e.Reason, "target 10"):
			splits++
		case strings.Contains(e.Reason, "cold"):
			merges++
		default:
			t.Errorf("epoch %d: reason %q names neither a hot nor a cold segment", e.Epoch, e.Reason)
		}
	}
	// From 1 segment up to 4 and back: at least 3 splits, and as many
	// merges as splits.
	if epochs[0].Trigger != api.TriggerCreate || splits < 3 || merges != splits {
		t.Errorf("history: epoch 0 %q, %d splits and %d merges; want create, at least 3 splits and as many merges", epochs[0].Trigger, splits, merges)
	}
}
