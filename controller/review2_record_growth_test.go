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
//
// The fix is the bounded variant: the record drops the epochs and
// segments wholly before the truncation head (compact, at the end of
// each truncation), and a reason is at most MaxReasonLen bytes. So the
// test truncates the stream daily at a week ago, as retention of 7 days
// would, and checks that the record stays bounded (well below 1 MB) and
// stops growing after the first weeks (compact keeps a week before the
// head: KeepDeletedHistory). Without truncation the record
// still grows with every scale: that bound is documented.
func TestReview2StreamRecordGrowsWithEveryAutoScale(t *testing.T) {
	r := &streamRec{Config: byRate("sc", "st", 1000, 1), Segments: []segmentRec{{Number: 0, Low: 0, High: 1}},
		Epochs: []epochRec{{Epoch: 0, Segments: []int64{0}}}, NextSegment: 1}
	windows := []time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 20 * time.Minute}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
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
	week2 := 0
	for day := 1; day <= 365; day++ {
		for scale(5000) { // every segment hot: split up to the maximum
		}
		for scale(10) { // every segment cold: merge back to one
		}
		now = start.Add(time.Duration(day) * 24 * time.Hour)
		r.Head = r.cutAt(now.Add(-7 * 24 * time.Hour).UnixMilli()) // retention: 7 days
		r.compact(now.UnixMilli())
		b, err := json.Marshal(r)
		must(t, err)
		if day == 21 {
			week2 = len(b)
		}
		if day > 21 && len(b) > week2*3/2 {
			t.Fatalf("day %d: the stream record is %d bytes, %d on day 21: it grows though the stream is truncated daily at a week ago", day, len(b), week2)
		}
		if day == 365 {
			t.Logf("after a year, %d automatic scales: the record is %d bytes (%d epochs and %d segments kept)", scales, len(b),
				int64(len(r.Epochs))-r.FirstEpoch, int64(len(r.Segments))-r.FirstSegment)
		}
		if len(b) >= 1<<20 {
			t.Fatalf("day %d, after %d automatic scales (%d epochs, %d segments): the stream record is %d bytes, above ZooKeeper's 1 MB per znode",
				day, scales, len(r.Epochs), len(r.Segments), len(b))
		}
	}
}

// A compacted record reads back as it was written (placeholders for the
// dropped segments and epochs), and the history queries see only what is
// kept.
func TestReview2CompactedRecordRoundTrip(t *testing.T) {
	r := &streamRec{Config: byRate("sc", "st", 1000, 1), Segments: []segmentRec{{Number: 0, Low: 0, High: 1}},
		Epochs: []epochRec{{Epoch: 0, Segments: []int64{0}}}, NextSegment: 1}
	for i := range 4 {
		cur := r.current().Segments[0]
		w, err := planScale(r, api.ScaleRequest{SealedSegments: []int64{cur}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}}, int64(i+1)*1000)
		must(t, err)
		r.NextSegment += int64(len(w.New))
		applyScale(r, w, int64(i+1)*1000)
	}
	r.Head = map[int64]int64{3: 10}
	r.compact(1000 + KeepDeletedHistory.Milliseconds() - 1) // epoch 0 ended at 1000
	equal(t, "nothing dropped within KeepDeletedHistory", r.FirstEpoch, int64(0))
	r.compact(4000 + KeepDeletedHistory.Milliseconds())
	equal(t, "first epoch kept", r.FirstEpoch, int64(3))
	equal(t, "first segment kept", r.FirstSegment, int64(3))
	b, err := json.Marshal(r)
	must(t, err)
	var back streamRec
	must(t, json.Unmarshal(b, &back))
	equal(t, "segments read back", len(back.Segments), 5)
	equal(t, "epochs read back", len(back.Epochs), 5)
	if _, ok := back.seg(1); ok || !back.deleted(1) {
		t.Fatalf("dropped segment 1 still known")
	}
	equal(t, "history", len(back.epochs()), 2)
	equal(t, "cut before the head is the head", len(back.cutAt(0)), 1)
	equal(t, "between from the head", len(back.between(back.headCut(), nil)), 2)
	b2, err := json.Marshal(&back)
	must(t, err)
	equal(t, "stored form", string(b2), string(b))
}
