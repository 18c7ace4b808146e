package controller

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/controller/autoscale"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReview2StreamRecordGrowsWithEveryAutoScale: every epoch (its whole
// segment list, its trigger and reason) and every segment ever created stay
// in the stream's one metadata record, which every workflow, transaction
// and scale rewrites whole, and which ZooKeeper refuses above 1 MB per
// znode (jute.maxbuffer). Manual scales were rare; the auto-scaler scales
// a BY_RATE stream on its own as its load rises and falls. A stream whose
// load goes from 1 to 16 segments and back once a day (30 automatic scales
// a day, the controller's defaults: 10 min cooldown, up to 64 segments)
// passes 1 MB within a year; from then on no compare-and-set of its
// record succeeds (no scale, transaction, truncation or seal).
func TestReview2StreamRecordGrowsWithEveryAutoScale(t *testing.T) {
	r := &streamRec{Config: byRate("sc", "st", 1000, 1), Segments: []segmentRec{{Number: 0, Low: 0, High: 1}},
		Epochs: []epochRec{{Epoch: 0, Segments: []int64{0}}}, NextSegment: 1}
	windows := []time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 20 * time.Minute}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	scales := 0
	scale := func(rate float64) bool {
		in := autoscale.Stream{Policy: autoscale.Policy{TargetRate: 1000, Unit: "events/s", ScaleFactor: 2, MinSegments: 1, MaxSegments: 16},
			Windows: windows, LastScale: time.UnixMilli(r.current().CreationTime)}
		for _, n := range r.current().Segments {
			sg := r.Segments[n]
			in.Segments = append(in.Segments, autoscale.Segment{Number: n, Low: sg.Low, High: sg.High, Known: true, Age: time.Hour,
				Rates: []float64{rate, rate, rate, rate}})
		}
		now = now.Add(11 * time.Minute)
		d := autoscale.Decide(autoscale.Config{Cooldown: 10 * time.Minute}, in, now)
		if d.Action == autoscale.None {
			return false
		}
		req := api.ScaleRequest{SealedSegments: d.Seal}
		for _, kr := range d.NewRanges {
			req.NewRanges = append(req.NewRanges, api.KeyRange{Low: kr.Low, High: kr.High})
		}
		w, err := planScale(r, req, now.UnixMilli())
		must(t, err)
		w.Trigger, w.Reason = api.TriggerAuto, d.Reason
		r.NextSegment += int64(len(w.New))
		applyScale(r, w, now.UnixMilli())
		scales++
		return true
	}
	for day := 1; day <= 365; day++ {
		for scale(5000) { // every segment hot: split up to the maximum
		}
		for scale(10) { // every segment cold: merge back to one
		}
		b, err := json.Marshal(r)
		must(t, err)
		if len(b) >= 1<<20 {
			t.Fatalf("day %d, after %d automatic scales (%d epochs, %d segments): the stream record is %d bytes, above ZooKeeper's 1 MB per znode",
				day, scales, len(r.Epochs), len(r.Segments), len(b))
		}
	}
}
