package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// autoService is env.service with the auto-scaler's loop off (tests call
// AutoScaleStep) and the default cooldown (10 min of the test clock).
func (e *env) autoService(hook func(workflow, step string) error) *Service {
	segs := NewNodeSegments(StaticLocator(e.addr))
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), StepHook: hook, TxnSweepInterval: -1,
		AutoScale: AutoScaleOptions{Interval: -1}})
	e.t.Cleanup(func() {
		s.Close()
		segs.Close()
	})
	return s
}

func byRate(scope, stream string, target int64, minSegments int32) api.StreamConfig {
	return api.StreamConfig{ScopeName: scope, StreamName: stream, ScalingPolicy: api.ScalingPolicy{
		Type: api.ByRateInEventsPerSec, TargetRate: target, ScaleFactor: 2, MinSegments: minSegments}}
}

// makeHot writes 600 events to a segment of the real node: with the node's
// default windows (2 min the shortest) its rate is then about 5 events/s,
// above a target of 1 for minutes.
func makeHot(t *testing.T, e *env, seg string) {
	t.Helper()
	evs := make([]string, 600)
	for i := range evs {
		evs[i] = fmt.Sprint(i)
	}
	write(t, e.conn(), seg, evs...)
}

// A stream whose only segment is hot splits in two, once: the scale's
// epoch says it was automatic and why; the cooldown then holds further
// scales off; a FIXED stream as hot is left alone.
func TestAutoScaleStepSplitsAHotSegment(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, byRate("sc", "hot", 1, 1))
	must(t, err)
	_, err = s.CreateStream(ctx, fixed("sc", "fixed", 1))
	must(t, err)
	makeHot(t, e, "sc/hot/0.#epoch.0")
	makeHot(t, e, "sc/fixed/0.#epoch.0")

	must(t, s.AutoScaleStep(ctx))
	if n := len(record(t, e.store, "sc", "hot").Epochs); n != 1 {
		t.Fatalf("scaled within the cooldown after creation: %d epochs", n)
	}
	e.clock.advance(11 * time.Minute)
	must(t, s.AutoScaleStep(ctx))
	must(t, s.AutoScaleStep(ctx)) // within the cooldown of the split: nothing
	epochs, err := s.Epochs(ctx, "sc", "hot")
	must(t, err)
	if len(epochs) != 2 {
		t.Fatalf("%d epochs, want 2: %+v", len(epochs), epochs)
	}
	e1 := epochs[1]
	if e1.Trigger != api.TriggerAuto || !strings.Contains(e1.Reason, "segment 0 hot") || !strings.Contains(e1.Reason, "target 1; split into 2") {
		t.Errorf("epoch 1: trigger %q reason %q", e1.Trigger, e1.Reason)
	}
	if epochs[0].Trigger != api.TriggerCreate || len(e1.Segments) != 2 || e1.Segments[0].KeyHigh != 0.5 || e1.Segments[1].KeyLow != 0.5 {
		t.Errorf("history %+v", epochs)
	}
	if n := len(record(t, e.store, "sc", "fixed").Epochs); n != 1 {
		t.Errorf("a FIXED_NUM_SEGMENTS stream was scaled: %d epochs", n)
	}
}

// A controller that stops before any step of an automatic scale leaves it
// unfinished; the next AutoScaleStep (or Resume) completes it exactly
// once: one new epoch, the node's segments as after an uninterrupted
// scale, and no second scale meanwhile.
func TestAutoScaleCrashMidScaleCompletesOnce(t *testing.T) {
	for _, step := range []string{"createSegments", "sealSegments", "publishEpoch", "cleanup"} {
		t.Run(step, func(t *testing.T) {
			e := newEnv(t)
			ctx := ctxT(t)
			s1 := e.autoService(crashAt(kindScale, step))
			must(t, s1.CreateScope(ctx, "sc"))
			_, err := s1.CreateStream(ctx, byRate("sc", "st", 1, 1))
			must(t, err)
			makeHot(t, e, "sc/st/0.#epoch.0")
			e.clock.advance(11 * time.Minute)
			wantErr(t, "auto-scale stopped before "+step, s1.AutoScaleStep(ctx), ErrStepFailed)
			if w := record(t, e.store, "sc", "st").Workflow; w == nil || w.Trigger != api.TriggerAuto {
				t.Fatalf("workflow after the stop: %+v", w)
			}
			// A step once the workflow is older than stuckScaleAfter
			// completes the unfinished automatic scale (and starts no
			// other).
			e.clock.advance(stuckScaleAfter(s1.AutoScaleInterval()) + time.Second)
			must(t, s1.AutoScaleStep(ctx))
			if r := record(t, e.store, "sc", "st"); r.Workflow != nil || len(r.Epochs) != 2 {
				t.Fatalf("after the next step: workflow %+v, %d epochs", r.Workflow, len(r.Epochs))
			}
			s1.Close()

			s2 := e.autoService(nil)
			must(t, s2.Resume(ctx))
			must(t, s2.AutoScaleStep(ctx))
			r := record(t, e.store, "sc", "st")
			if r.Workflow != nil || len(r.Epochs) != 2 || r.Epochs[1].Trigger != api.TriggerAuto || !strings.Contains(r.Epochs[1].Reason, "segment 0 hot") {
				t.Fatalf("after Resume: workflow %+v, epochs %+v", r.Workflow, r.Epochs)
			}
			equal(t, "node", nodeView(t, e, allSegmentNames(r)), map[string]string{
				"sc/st/0.#epoch.0": "sealed", "sc/st/1.#epoch.1": "open", "sc/st/2.#epoch.1": "open"})
		})
	}
}

// An automatic scale waits while the stream has an unfinished
// transaction, and happens at the first step after it ends, saying how
// long it waited.
func TestAutoScaleWaitsForTransactions(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, byRate("sc", "st", 1, 1))
	must(t, err)
	e.clock.advance(11 * time.Minute)
	txn, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	must(t, err)
	makeHot(t, e, "sc/st/0.#epoch.0")
	must(t, s.AutoScaleStep(ctx))
	if n := len(record(t, e.store, "sc", "st").Epochs); n != 1 {
		t.Fatalf("scaled with a transaction open: %d epochs", n)
	}
	e.clock.advance(7 * time.Second)
	must(t, s.AbortTxn(ctx, "sc", "st", txn.ID))
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if len(r.Epochs) != 2 || !strings.Contains(r.Epochs[1].Reason, "after waiting 7s for the stream's transactions to end") {
		t.Fatalf("epochs %+v", r.Epochs)
	}
}

// A manual scale that would leave fewer segments than the policy's
// minimum is refused with one error naming the counts, and changes
// nothing; one that keeps the minimum goes through; scales are recorded
// as manual.
func TestScaleRespectsMinSegments(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 2))
	must(t, err)
	before := dump(t, e.store)
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0, 1}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
	wantErr(t, "merge below the minimum", err, ErrInvalid)
	if !strings.Contains(err.Error(), "would leave 1 segments") || !strings.Contains(err.Error(), "keeps at least 2") {
		t.Errorf("error %q does not name the counts", err)
	}
	equal(t, "store after the refused scale", dump(t, e.store), before)
	_, err = s.Scale(ctx, "sc", "st", split)
	must(t, err)
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{2, 3}, NewRanges: []api.KeyRange{{Low: 0.5, High: 1}}})
	must(t, err)
	epochs, err := s.Epochs(ctx, "sc", "st")
	must(t, err)
	if len(epochs) != 3 || epochs[1].Trigger != api.TriggerManual || epochs[2].Trigger != api.TriggerManual || epochs[1].Reason != "" {
		t.Errorf("history %+v", epochs)
	}
}

// Stream records written before epochs kept a trigger read as create
// (epoch 0) and manual (the rest).
func TestEpochsWithoutTriggerReadAsManual(t *testing.T) {
	r := &streamRec{Config: fixed("sc", "st", 1), Segments: []segmentRec{{Number: 0, Low: 0, High: 1}, {Number: 1, Epoch: 1, Low: 0, High: 1}},
		Epochs: []epochRec{{Epoch: 0, Segments: []int64{0}}, {Epoch: 1, CreationTime: 5, Segments: []int64{1}}}}
	got := r.epochs()
	if got[0].Trigger != api.TriggerCreate || got[1].Trigger != api.TriggerManual || got[1].Reason != "" {
		t.Fatalf("%+v", got)
	}
}

// A BY_RATE_IN_KBYTES_PER_SEC stream is judged on bytes, in KB/s: 600
// events of 400 bytes are about 2 KB/s over the 2-minute window, above a
// target of 1 KB/s, while the same count of 1-byte events is not.
func TestAutoScaleByKBytes(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	must(t, s.CreateScope(ctx, "sc"))
	for _, name := range []string{"big", "small"} {
		cfg := byRate("sc", name, 1, 1)
		cfg.ScalingPolicy.Type = api.ByRateInKBytesPerSec
		_, err := s.CreateStream(ctx, cfg)
		must(t, err)
	}
	big, small := make([]string, 600), make([]string, 600)
	for i := range big {
		big[i], small[i] = strings.Repeat("x", 400), "x"
	}
	write(t, e.conn(), "sc/big/0.#epoch.0", big...)
	write(t, e.conn(), "sc/small/0.#epoch.0", small...)
	e.clock.advance(11 * time.Minute)
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "big")
	if len(r.Epochs) != 2 || !strings.Contains(r.Epochs[1].Reason, "KB/s over 2m0s, target 1; split into 2") {
		t.Fatalf("big events: epochs %+v", r.Epochs)
	}
	if n := len(record(t, e.store, "sc", "small").Epochs); n != 1 {
		t.Fatalf("small events split the stream: %d epochs", n)
	}
}
