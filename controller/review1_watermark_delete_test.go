package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// hookStore runs before once, just before the first Create of a key
// ending in suffix.
type hookStore struct {
	cluster.Store
	suffix string
	before func()
}

func (h *hookStore) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	if h.before != nil && strings.HasSuffix(key, h.suffix) {
		f := h.before
		h.before = nil
		f()
	}
	return h.Store.Create(ctx, key, value)
}

// TestReviewWatermarkStepRacingDelete: a watermark step that read a
// stream's writer reports before the stream's delete removed its records
// writes the stream's first watermark after the delete: the record
// outlives the stream, and a new stream of the same name starts with the
// old stream's watermarks (cuts of segments it does not have): here one
// of epoch 1, which the new stream lacks.
func TestReviewWatermarkStepRacingDelete(t *testing.T) {
	e := newEnv(t)
	hs := &hookStore{Store: e.store, suffix: "/watermarks"}
	s, ctx := wmStream(e, hs)
	// The old stream scaled once: its watermark's cut is in epoch 1.
	_, err := s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
	must(t, err)
	seg := protocol.SegmentName("sc", "st", 1, 1)
	must(t, s.NoteWriterTime(ctx, "sc", "st", "w", api.WriterTime{Time: 100, Position: api.StreamCut{seg: 0}}))

	hs.before = func() {
		must(t, s.SealStream(ctx, "sc", "st"))
		must(t, s.DeleteStream(ctx, "sc", "st"))
	}
	stepErr := s.WatermarkStep(ctx)
	t.Logf("step: %v", stepErr)

	_, err = s.CreateStream(ctx, fixed("sc", "st", 1))
	must(t, err)
	var ws []api.Watermark
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Watermarks of the new stream sc/st panics: %v", p)
			}
		}()
		ws, err = s.Watermarks(ctx, "sc", "st", 0)
	}()
	if err != nil || len(ws) > 0 {
		t.Fatalf("a new stream sc/st after the old one's delete raced a watermark step: watermarks %+v, %v; want none", ws, err)
	}
}
