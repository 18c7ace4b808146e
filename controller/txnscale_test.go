package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// pendingSetup makes a BY_RATE stream sc/st (target 1, one segment) past
// its cooldown with an open transaction holding an event, makes its
// segment hot, and runs one auto-scaling step: the scale is then pending.
func pendingSetup(t *testing.T, e *env, s *Service) api.TxnInfo {
	t.Helper()
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, byRate("sc", "st", 1, 1))
	must(t, err)
	e.clock.advance(11 * time.Minute)
	tx, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	must(t, err)
	write(t, e.conn(), tx.Segments[0], "in-txn")
	makeHot(t, e, "sc/st/0.#epoch.0")
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if p := r.PendingScale; p == nil || p.Since != e.clock.now().UnixMilli() || p.Epoch != 0 ||
		!strings.Contains(p.Reason, "segment 0 hot") || len(p.NewRanges) != 2 || r.Workflow != nil || len(r.Epochs) != 1 {
		t.Fatalf("after a step with a transaction open: pending %+v, workflow %+v, %d epochs", p, r.Workflow, len(r.Epochs))
	}
	return tx
}

// A scale held up by an open transaction is recorded as pending; new
// transactions are refused meanwhile with ErrScalePending (also
// ErrConflict) and a message that says why, changing nothing; the open
// one commits as usual; the next step scales and clears the mark in the
// same write, and transactions are accepted again, in the new epoch.
func TestPendingScaleTakesPriorityOverNewTransactions(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	tx := pendingSetup(t, e, s)

	before := dump(t, e.store)
	_, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	wantErr(t, "new transaction while a scale is pending", err, ErrScalePending)
	wantErr(t, "new transaction while a scale is pending", err, ErrConflict)
	if !strings.Contains(err.Error(), "stream sc/st is waiting to scale: new transactions wait until it has") {
		t.Errorf("refusal %q does not say why", err)
	}
	equal(t, "store after the refusal", dump(t, e.store), before)

	// Still open: the step waits, the mark stays.
	e.clock.advance(3 * time.Second)
	must(t, s.AutoScaleStep(ctx))
	equal(t, "store after a step with the transaction open", dump(t, e.store), before)

	pending, _, err := s.ScaleWaits(ctx, "sc", "st")
	must(t, err)
	if pending == nil || len(pending.SealedSegments) != 1 || pending.SealedSegments[0] != 0 {
		t.Fatalf("ScaleWaits: pending %+v", pending)
	}

	e.clock.advance(2 * time.Second)
	must(t, s.CommitTxn(ctx, "sc", "st", tx.ID))
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if r.PendingScale != nil || r.Workflow != nil || len(r.Epochs) != 2 || r.Epochs[1].Trigger != api.TriggerAuto ||
		!strings.Contains(r.Epochs[1].Reason, "segment 0 hot") || !strings.Contains(r.Epochs[1].Reason, "after waiting 5s for the stream's transactions to end") {
		t.Fatalf("after the commit: pending %+v, workflow %+v, epochs %+v", r.PendingScale, r.Workflow, r.Epochs)
	}
	// The committed event is in the sealed parent, once.
	got := read(t, e.conn(), "sc/st/0.#epoch.0")
	if n := len(got); n != 601 || got[600] != "in-txn" {
		t.Fatalf("sealed parent holds %d events, last %q; want 601, the transaction's last", n, got[len(got)-1])
	}
	tx2, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	must(t, err)
	equal(t, "epoch of a transaction after the scale", tx2.Epoch, int64(1))
	equal(t, "segments of a transaction after the scale", len(tx2.Segments), 2)
	if _, given, err := s.ScaleWaits(ctx, "sc", "st"); err != nil || len(given) != 0 {
		t.Fatalf("given up: %+v, %v", given, err)
	}
}

// A controller that stops after recording the mark, or before any step
// of the pending scale's workflow, leaves a state the next controller
// completes exactly once: one new epoch, the node's segments as after an
// uninterrupted scale, no mark left; new transactions are refused until
// then.
func TestPendingScaleCrashAtEveryStep(t *testing.T) {
	for _, step := range []string{"", stepIntent, "createSegments", "sealSegments", "publishEpoch", "cleanup"} {
		name := step
		if name == "" {
			name = "afterMark"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := ctxT(t)
			var hook func(string, string) error
			if step != "" {
				hook = crashAt(kindScale, step)
			}
			s1 := e.autoService(hook)
			tx := pendingSetup(t, e, s1)
			must(t, s1.AbortTxn(ctx, "sc", "st", tx.ID))
			if step != "" {
				wantErr(t, "pending scale stopped before "+step, s1.AutoScaleStep(ctx), ErrStepFailed)
				r := record(t, e.store, "sc", "st")
				if step == stepIntent {
					if r.PendingScale == nil || r.Workflow != nil {
						t.Fatalf("stopped before the intent: pending %+v, workflow %+v", r.PendingScale, r.Workflow)
					}
				} else if r.PendingScale != nil || r.Workflow == nil || r.Workflow.Trigger != api.TriggerAuto {
					t.Fatalf("stopped in the workflow: pending %+v, workflow %+v", r.PendingScale, r.Workflow)
				}
			}
			_, err := s1.CreateTxn(ctx, "sc", "st", time.Minute)
			wantErr(t, "new transaction before the scale is done", err, ErrScalePending)
			s1.Close()

			s2 := e.autoService(nil)
			must(t, s2.Resume(ctx))
			must(t, s2.AutoScaleStep(ctx))
			must(t, s2.AutoScaleStep(ctx))
			r := record(t, e.store, "sc", "st")
			if r.PendingScale != nil || r.Workflow != nil || len(r.Epochs) != 2 || r.Epochs[1].Trigger != api.TriggerAuto ||
				!strings.Contains(r.Epochs[1].Reason, "after waiting") || len(r.GivenUp) != 0 {
				t.Fatalf("after the restart: pending %+v, workflow %+v, epochs %+v, given up %+v", r.PendingScale, r.Workflow, r.Epochs, r.GivenUp)
			}
			equal(t, "node", nodeView(t, e, allSegmentNames(r)), map[string]string{
				"sc/st/0.#epoch.0": "sealed", "sc/st/1.#epoch.1": "open", "sc/st/2.#epoch.1": "open"})
			tx2, err := s2.CreateTxn(ctx, "sc", "st", time.Minute)
			must(t, err)
			equal(t, "epoch of a transaction after the scale", tx2.Epoch, int64(1))
		})
	}
}

// A pending scale whose transaction is kept open (pinged) longer than the
// bound is given up and recorded as such; new transactions are accepted
// again, and the stream is not marked again before the cooldown has
// passed since the give-up.
func TestPendingScaleGivenUpAfterBound(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	segs := NewNodeSegments(StaticLocator(e.addr))
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), TxnSweepInterval: -1,
		AutoScale: AutoScaleOptions{Interval: -1, PendingTimeout: 90 * time.Second}})
	t.Cleanup(func() {
		s.Close()
		segs.Close()
	})
	equal(t, "bound", s.PendingScaleTimeout(), 90*time.Second)
	tx := pendingSetup(t, e, s)
	since := e.clock.now().UnixMilli()
	for i := 0; i < 3; i++ { // 90 s: still within the bound
		e.clock.advance(30 * time.Second)
		_, err := s.PingTxn(ctx, "sc", "st", tx.ID, 2*time.Minute)
		must(t, err)
		must(t, s.AutoScaleStep(ctx))
		if r := record(t, e.store, "sc", "st"); r.PendingScale == nil {
			t.Fatalf("pending scale dropped after %v, within the bound", time.Duration(i+1)*30*time.Second)
		}
	}
	e.clock.advance(time.Second)
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if r.PendingScale != nil || len(r.Epochs) != 1 || len(r.GivenUp) != 1 {
		t.Fatalf("past the bound: pending %+v, %d epochs, given up %+v", r.PendingScale, len(r.Epochs), r.GivenUp)
	}
	_, given, err := s.ScaleWaits(ctx, "sc", "st")
	must(t, err)
	if len(given) != 1 || given[0].Since != since || given[0].GivenUpTime != e.clock.now().UnixMilli() ||
		!strings.Contains(given[0].GivenUpReason, "waited 1m31s for 1 unfinished transactions, longer than 1m30s") {
		t.Fatalf("given up: %+v", given)
	}
	tx2, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	must(t, err)
	must(t, s.AbortTxn(ctx, "sc", "st", tx2.ID))

	// Still hot, the first transaction still open: no new mark within the
	// cooldown (10 min) of the give-up, a new one after it.
	for i := 0; i < 9; i++ {
		e.clock.advance(time.Minute)
		_, err = s.PingTxn(ctx, "sc", "st", tx.ID, 2*time.Minute)
		must(t, err)
	}
	makeHot(t, e, "sc/st/0.#epoch.0")
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "st"); r.PendingScale != nil {
		t.Fatalf("marked again within the cooldown of the give-up")
	}
	e.clock.advance(2 * time.Minute)
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "st"); r.PendingScale == nil || len(r.GivenUp) != 1 {
		t.Fatalf("not marked again after the cooldown: pending %+v given up %+v", r.PendingScale, r.GivenUp)
	}
}

// The default bound is the longest lease plus two auto-scale intervals.
func TestPendingScaleTimeoutDefault(t *testing.T) {
	s := New(openStore(t), nil, Options{Logger: quietLog(), TxnSweepInterval: -1, MaxTxnLease: 5 * time.Minute,
		AutoScale: AutoScaleOptions{Off: true, Interval: 7 * time.Second}})
	t.Cleanup(func() { s.Close() })
	equal(t, "default bound without a loop", s.PendingScaleTimeout(), 5*time.Minute)
	s2 := New(openStore(t), nil, Options{Logger: quietLog(), TxnSweepInterval: -1, MaxTxnLease: 5 * time.Minute,
		AutoScale: AutoScaleOptions{Interval: time.Hour}})
	t.Cleanup(func() { s2.Close() })
	equal(t, "default bound", s2.PendingScaleTimeout(), 5*time.Minute+2*time.Hour)
	err := AutoScaleOptions{PendingTimeout: -time.Second}.Validate()
	wantErr(t, "negative pending timeout", err, ErrInvalid)
}

// A manual scale overtakes a pending automatic one (recorded as given
// up); sealing the stream gives one up too; so does a policy changed to a
// fixed number of segments.
func TestPendingScaleOvertaken(t *testing.T) {
	t.Run("manual", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.autoService(nil)
		tx := pendingSetup(t, e, s)
		must(t, s.AbortTxn(ctx, "sc", "st", tx.ID))
		_, err := s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0},
			NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 1}}})
		must(t, err)
		must(t, s.AutoScaleStep(ctx))
		r := record(t, e.store, "sc", "st")
		if r.PendingScale != nil || len(r.Epochs) != 2 || r.Epochs[1].Trigger != api.TriggerManual ||
			len(r.GivenUp) != 1 || r.GivenUp[0].GivenUpReason != "overtaken by a manual scale" {
			t.Fatalf("pending %+v, epochs %+v, given up %+v", r.PendingScale, r.Epochs, r.GivenUp)
		}
	})
	t.Run("seal", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.autoService(nil)
		pendingSetup(t, e, s)
		must(t, s.SealStream(ctx, "sc", "st"))
		r := record(t, e.store, "sc", "st")
		if !r.Sealed || r.PendingScale != nil || len(r.Txns) != 0 || len(r.GivenUp) != 1 || r.GivenUp[0].GivenUpReason != "the stream was sealed" {
			t.Fatalf("sealed %v, pending %+v, txns %v, given up %+v", r.Sealed, r.PendingScale, r.Txns, r.GivenUp)
		}
	})
	t.Run("policy", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.autoService(nil)
		pendingSetup(t, e, s)
		_, err := s.UpdateStream(ctx, "sc", "st", fixed("sc", "st", 1))
		must(t, err)
		must(t, s.AutoScaleStep(ctx))
		r := record(t, e.store, "sc", "st")
		if r.PendingScale != nil || len(r.Epochs) != 1 || len(r.GivenUp) != 1 || !strings.Contains(r.GivenUp[0].GivenUpReason, "no longer by rate") {
			t.Fatalf("pending %+v, %d epochs, given up %+v", r.PendingScale, len(r.Epochs), r.GivenUp)
		}
		_, err = s.CreateTxn(ctx, "sc", "st", time.Minute)
		must(t, err)
	})
}

// Left unfinished, a scale or a commit would hold new transactions back
// until a leader's Resume: the auto-scaler completes a scale workflow
// older than stuckScaleAfter, and the sweeper a transaction being
// committed past its lease.
func TestStuckScaleAndCommitAreCompleted(t *testing.T) {
	t.Run("scale", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.autoService(crashAt(kindScale, "sealSegments"))
		must(t, s.CreateScope(ctx, "sc"))
		_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
		must(t, err)
		_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}})
		wantErr(t, "scale stopped", err, ErrStepFailed)
		must(t, s.AutoScaleStep(ctx)) // not old enough yet
		if r := record(t, e.store, "sc", "st"); r.Workflow == nil {
			t.Fatal("a fresh scale workflow was run by the auto-scaler")
		}
		_, err = s.CreateTxn(ctx, "sc", "st", time.Minute)
		wantErr(t, "transaction while the scale is unfinished", err, ErrScalePending)
		e.clock.advance(6 * time.Second)
		must(t, s.AutoScaleStep(ctx))
		r := record(t, e.store, "sc", "st")
		if r.Workflow != nil || len(r.Epochs) != 2 {
			t.Fatalf("after the step: workflow %+v, %d epochs", r.Workflow, len(r.Epochs))
		}
		tx, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
		must(t, err)
		equal(t, "epoch", tx.Epoch, int64(1))
	})
	t.Run("truncate", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.autoService(crashAt(kindTruncate, "truncateSegments"))
		must(t, s.CreateScope(ctx, "sc"))
		_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
		must(t, err)
		seg := "sc/st/0.#epoch.0"
		write(t, e.conn(), seg, "before the cut")
		info, err := e.conn().GetSegmentInfo(ctx, seg)
		must(t, err)
		wantErr(t, "truncation stopped", s.TruncateStream(ctx, "sc", "st", api.StreamCut{seg: info.Length}), ErrStepFailed)
		e.clock.advance(6 * time.Second)
		must(t, s.AutoScaleStep(ctx))
		r := record(t, e.store, "sc", "st")
		if r.Workflow != nil || r.Head[0] != info.Length {
			t.Fatalf("after the step: workflow %+v, head %v", r.Workflow, r.Head)
		}
	})
	t.Run("commit", func(t *testing.T) {
		e := newEnv(t)
		ctx := ctxT(t)
		s := e.service(crashAt(kindCommit, "mergeTxnSegments"))
		tx, parents := txnSetup(t, e, s)
		wantErr(t, "commit stopped", s.CommitTxn(ctx, "sc", "st", tx.ID), ErrStepFailed)
		must(t, s.sweepExpiredTxns(ctx)) // within its lease: left to its run
		if r := record(t, e.store, "sc", "st"); len(r.Txns) != 1 {
			t.Fatalf("txns %v", r.Txns)
		}
		e.clock.advance(11 * time.Second)
		must(t, s.sweepExpiredTxns(ctx))
		committed(t, e, parents, tx)
		if r := record(t, e.store, "sc", "st"); len(r.Txns) != 0 {
			t.Fatalf("txns after the sweep %v", r.Txns)
		}
		info, err := s.GetTxn(ctx, "sc", "st", tx.ID)
		must(t, err)
		equal(t, "status", info.Status, api.TxnCommitted)
	})
}

// With no cooldown, a given-up mark is not made again at the next step:
// new transactions go through for as long as the mark held them back
// (PendingTimeout) before the stream is marked again.
func TestPendingScaleNotMarkedAgainAtOnceWithoutCooldown(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	segs := NewNodeSegments(StaticLocator(e.addr))
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), TxnSweepInterval: -1,
		AutoScale: AutoScaleOptions{Interval: -1, NoCooldown: true, PendingTimeout: 90 * time.Second}})
	t.Cleanup(func() {
		s.Close()
		segs.Close()
	})
	tx := pendingSetup(t, e, s)
	for i := 0; i < 4; i++ { // past the 90 s bound, the transaction pinged along
		e.clock.advance(30 * time.Second)
		_, err := s.PingTxn(ctx, "sc", "st", tx.ID, 2*time.Minute)
		must(t, err)
	}
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "st"); r.PendingScale != nil || len(r.GivenUp) != 1 {
		t.Fatalf("past the bound: pending %+v, given up %+v", r.PendingScale, r.GivenUp)
	}
	makeHot(t, e, "sc/st/0.#epoch.0")
	e.clock.advance(time.Second)
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "st"); r.PendingScale != nil {
		t.Fatalf("marked again one step after the give-up, with no cooldown")
	}
	tx2, err := s.CreateTxn(ctx, "sc", "st", time.Minute)
	must(t, err)
	must(t, s.AbortTxn(ctx, "sc", "st", tx2.ID))
	e.clock.advance(90 * time.Second)
	_, err = s.PingTxn(ctx, "sc", "st", tx.ID, 2*time.Minute)
	must(t, err)
	makeHot(t, e, "sc/st/0.#epoch.0")
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "st"); r.PendingScale == nil {
		t.Fatalf("not marked again once the give-up is older than the bound")
	}
}
