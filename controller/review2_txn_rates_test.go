package controller

import (
	"fmt"
	"testing"
	"time"
)

// TestReview2CommittedTransactionsCountInRates: a BY_RATE stream written
// through transactions is as loaded as one written directly, so 600
// events committed into its only segment (about 5 events/s over the
// node's 2-minute window, against a target of 1) make it hot and it
// splits, as makeHot's direct writes do (TestAutoScaleStepSplitsAHotSegment).
// The node counts only AppendAsync's blocks: a transaction's events are
// appended to the transaction segment and reach the parent by a merge,
// which no meter sees, so a stream written only through transactions
// never splits, and its busy segments are merged down as cold.
func TestReview2CommittedTransactionsCountInRates(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(nil)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, byRate("sc", "tx", 1, 1))
	must(t, err)
	tx, err := s.CreateTxn(ctx, "sc", "tx", time.Minute)
	must(t, err)
	evs := make([]string, 600)
	for i := range evs {
		evs[i] = fmt.Sprint(i)
	}
	write(t, e.conn(), tx.Segments[0], evs...)
	must(t, s.CommitTxn(ctx, "sc", "tx", tx.ID))
	equal(t, "committed events in the parent", len(read(t, e.conn(), "sc/tx/0.#epoch.0")), 600)

	e.clock.advance(11 * time.Minute)
	must(t, s.AutoScaleStep(ctx))
	if r := record(t, e.store, "sc", "tx"); len(r.Epochs) != 2 {
		t.Fatalf("600 committed events (5 events/s, target 1) did not split the stream: %d epochs", len(r.Epochs))
	}
}
