package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReview2ConflictWithAWorkflowIsNotAWaitForTransactions: the
// auto-scaler decides a split of a stream that has no transaction; before
// its intent is recorded, a truncation (retention's workflow) starts on
// the stream and stops half-way (its controller crashed). The scale is
// refused as a conflict with that workflow, but the driver, looking at
// the record it read before (no transaction, no workflow), notes the
// stream as waiting for its transactions. Once the truncation is
// resumed, the split runs, and the scaling history says it waited for
// the stream's transactions, which never existed.
func TestReview2ConflictWithAWorkflowIsNotAWaitForTransactions(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	setup := e.service(nil)
	must(t, setup.CreateScope(ctx, "sc"))
	_, err := setup.CreateStream(ctx, byRate("sc", "st", 1, 1))
	must(t, err)
	seg := "sc/st/0.#epoch.0"
	makeHot(t, e, seg)
	info, err := e.conn().GetSegmentInfo(ctx, seg)
	must(t, err)
	e.clock.advance(11 * time.Minute)

	crashing := e.service(crashAt(kindTruncate, "truncateSegments"))
	truncated := false
	s := e.autoService(func(w, step string) error {
		if w == kindScale && step == stepIntent && !truncated {
			truncated = true
			wantErr(t, "truncation stopped half-way", crashing.TruncateStream(ctx, "sc", "st", api.StreamCut{seg: info.Length}), ErrStepFailed)
		}
		return nil
	})
	must(t, s.AutoScaleStep(ctx)) // the split is refused: a truncate workflow is in progress
	if n := len(record(t, e.store, "sc", "st").Epochs); n != 1 {
		t.Fatalf("%d epochs, want 1", n)
	}
	must(t, e.service(nil).Resume(ctx))
	e.clock.advance(5 * time.Second)
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if len(r.Epochs) != 2 {
		t.Fatalf("%d epochs after the truncation ended, want 2", len(r.Epochs))
	}
	if reason := r.Epochs[1].Reason; strings.Contains(reason, "transactions") {
		t.Fatalf("the stream never had a transaction, but the split's reason is %q", reason)
	}
}
