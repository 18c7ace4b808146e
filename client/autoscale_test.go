package client_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// autoScaleDeployment is a real node and controller with second-scale
// rate windows and a BY_RATE stream s/<name> (target 10 events/s).
func autoScaleDeployment(t *testing.T, name string) *clienttest.Deployment {
	t.Helper()
	windows := [4]time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	d := clienttest.Start(t, clienttest.WithAutoScale(windows,
		controller.AutoScaleOptions{Interval: 100 * time.Millisecond, Cooldown: 300 * time.Millisecond, MaxSegments: 4}))
	ctx := testCtx(t)
	if err := d.Controller.CreateScope(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Controller.CreateStream(ctx, api.StreamConfig{ScopeName: "s", StreamName: name,
		ScalingPolicy: api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: 10, ScaleFactor: 2, MinSegments: 1}}); err != nil {
		t.Fatal(err)
	}
	return d
}

// readUntilEnd reads r from a goroutine until a read fails (at the end of
// a sealed stream, with client.ErrEndOfStream). The channel then gives the
// data of the events read, in order, and the error.
func readUntilEnd(ctx context.Context, r *client.Reader) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		var got []string
		for {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				done <- readResult{got, err}
				return
			}
			got = append(got, string(ev.Data))
		}
	}()
	return done
}

// readResult is what readUntilEnd read.
type readResult struct {
	got []string
	err error
}

// wantEndOfStream waits for readUntilEnd's result, which must end with
// the end of the stream, and returns the data read.
func wantEndOfStream(t *testing.T, read <-chan readResult) []string {
	t.Helper()
	res := <-read
	if !errors.Is(res.err, client.ErrEndOfStream) {
		t.Fatalf("reader ended with %v, want the end of the stream", res.err)
	}
	return res.got
}

// checkKeySeqs checks that got holds each key's events "key:0", "key:1",
// ... exactly once and in order, as many as counts says were written
// (what: "acknowledged", "committed").
func checkKeySeqs(t *testing.T, got []string, counts map[string]int, what string) {
	t.Helper()
	next := map[string]int{}
	for _, ev := range got {
		key, seqText, _ := strings.Cut(ev, ":")
		seq, err := strconv.Atoi(seqText)
		if err != nil || seq != next[key] {
			t.Fatalf("key %s: read event %q where %d was due (lost, duplicated or reordered)", key, ev, next[key])
		}
		next[key]++
	}
	for key, n := range counts {
		if next[key] != n {
			t.Errorf("key %s: read %d events, %s %d", key, next[key], what, n)
		}
	}
}

// segmentCount returns how many segments s/stream has now.
func segmentCount(t *testing.T, ctx context.Context, d *clienttest.Deployment, stream string) int {
	t.Helper()
	segs, err := d.Controller.CurrentSegments(ctx, "s", stream)
	if err != nil {
		t.Fatal(err)
	}
	return len(segs)
}

// TestAutoScaleSplitsAndMergesBack: a real node and controller with
// second-scale rate windows. A writer far above the stream's target makes
// its segments split (up to the maximum); when it stops, the cold
// neighbours merge back to the minimum. A reader that reads throughout
// gets every acknowledged event exactly once, in order per key, and the
// scaling history says each scale was automatic and why.
func TestAutoScaleSplitsAndMergesBack(t *testing.T) {
	d := autoScaleDeployment(t, "auto")
	ctx := testCtx(t)
	c := newClient(t, d)
	r, err := c.NewReader(ctx, "s", "auto")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The reader reads from the start, through every scale, until the
	// stream is sealed.
	read := readUntilEnd(ctx, r)

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
	segments := func() int { return segmentCount(t, ctx, d, "auto") }
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

	d.SealWhenIdle(ctx, "s", "auto")
	checkKeySeqs(t, wantEndOfStream(t, read), res.counts, "acknowledged")

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
