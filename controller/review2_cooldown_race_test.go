package controller

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReview2CooldownRecheckedWhenTheScaleStarts: the auto-scaler decides
// to split hot segment 0 of a two-segment stream; before its intent is
// recorded, an operator scales segment 1 by hand. The cooldown ("the
// least time between two scales of a stream, manual ones included") is
// checked only on the record read before, and the scale workflow's
// compare-and-set checks only that segment 0 is still active, so the
// automatic split runs at once after the manual one: two scales at the
// same instant.
func TestReview2CooldownRecheckedWhenTheScaleStarts(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	setup := e.service(nil)
	must(t, setup.CreateScope(ctx, "sc"))
	_, err := setup.CreateStream(ctx, byRate("sc", "st", 1, 2))
	must(t, err)
	makeHot(t, e, "sc/st/0.#epoch.0")
	e.clock.advance(11 * time.Minute)

	operator := e.service(nil)
	scaled := false
	s := e.autoService(func(w, step string) error {
		if w == kindScale && step == stepIntent && !scaled {
			scaled = true
			_, err := operator.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{1},
				NewRanges: []api.KeyRange{{Low: 0.5, High: 0.75}, {Low: 0.75, High: 1}}})
			must(t, err)
		}
		return nil
	})
	must(t, s.AutoScaleStep(ctx))
	r := record(t, e.store, "sc", "st")
	if len(r.Epochs) != 2 {
		t.Fatalf("%d epochs: the automatic split ran within the cooldown of the manual scale (epochs %+v)", len(r.Epochs), r.Epochs)
	}
}
