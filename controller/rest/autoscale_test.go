package rest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Over HTTP: a scale below the stream's minSegments is a 400 INVALID
// naming the counts and changes nothing; scaling-events carries each
// epoch's trigger.
func TestScaleBelowMinSegmentsIsInvalid(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	c := ctlclient.NewClient(ctl.URL)
	ctx := ctxT(t)
	must(t, c.CreateScope(ctx, "s"))
	_, err := c.CreateStream(ctx, api.StreamConfig{ScopeName: "s", StreamName: "m",
		ScalingPolicy: api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: 100, ScaleFactor: 2, MinSegments: 2}})
	must(t, err)
	before := resttest.Dump(t, ctl.Store)
	_, err = c.Scale(ctx, "s", "m", api.ScaleRequest{SealedSegments: []int64{0, 1}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
	var e *ctlclient.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != api.CodeInvalid ||
		!strings.Contains(e.Message, "would leave 1 segments") || !strings.Contains(e.Message, "at least 2") {
		t.Fatalf("merge below the minimum: %v", err)
	}
	equal(t, "store after the refused scale", resttest.Dump(t, ctl.Store), before)
	_, err = c.Scale(ctx, "s", "m", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}})
	must(t, err)
	epochs, err := c.Epochs(ctx, "s", "m")
	must(t, err)
	if len(epochs) != 2 || epochs[0].Trigger != api.TriggerCreate || epochs[1].Trigger != api.TriggerManual {
		t.Fatalf("scaling-events %+v", epochs)
	}
}
