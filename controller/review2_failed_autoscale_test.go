package controller

import (
	"testing"
	"time"
)

// TestReview2FailedAutoScaleIsCompletedWithoutARestart: over a store that
// elects no leader (the standalone), the Service runs the auto-scaler
// itself, and nothing resumes workflows but the next start. A step of an
// automatic split fails once after the old segment is sealed (a
// transient store or node error): AutoScaleStep logs it, and every later
// step only sees "a scale workflow is unfinished". The stream's only
// segment stays sealed with no published successor, so every writer waits
// for a successor until the controller restarts. A manual Scale's caller
// sees the error; here nobody does.
func TestReview2FailedAutoScaleIsCompletedWithoutARestart(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.autoService(crashAt(kindScale, "publishEpoch"))
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, byRate("sc", "st", 1, 1))
	must(t, err)
	makeHot(t, e, "sc/st/0.#epoch.0")
	e.clock.advance(11 * time.Minute)
	wantErr(t, "a step of the automatic split fails", s.AutoScaleStep(ctx), ErrStepFailed)
	for range 5 {
		e.clock.advance(time.Minute)
		_ = s.AutoScaleStep(ctx)
	}
	r := record(t, e.store, "sc", "st")
	if r.Workflow != nil || len(r.Epochs) != 2 {
		t.Fatalf("5 minutes later: workflow %+v still unfinished, %d epochs; node: %v", r.Workflow, len(r.Epochs),
			nodeView(t, e, []string{"sc/st/0.#epoch.0"}))
	}
}
