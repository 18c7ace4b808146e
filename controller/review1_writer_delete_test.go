package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// putHookStore runs before once, just before the first Put of a key
// holding part.
type putHookStore struct {
	cluster.Store
	part   string
	before func()
}

func (h *putHookStore) Put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	h.hook(key)
	return h.Store.Put(ctx, key, value)
}

// Create and CompareAndSet run the hook too: the report's write is a
// compare-and-set merge now, and the race must still be exercised.
func (h *putHookStore) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	h.hook(key)
	return h.Store.Create(ctx, key, value)
}

func (h *putHookStore) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	h.hook(key)
	return h.Store.CompareAndSet(ctx, key, value, expected)
}

func (h *putHookStore) hook(key string) {
	if h.before != nil && strings.Contains(key, h.part) {
		f := h.before
		h.before = nil
		f()
	}
}

// TestReviewNoteWriterTimeRacingDelete: NoteWriterTime checks that the
// stream is not sealed, then writes the writer's report (a plain Put when
// the test was written; a compare-and-set merge now: the hook runs on
// every write).
// A seal and delete in between (the stream's records removed) leave the
// report behind: a new stream of the same name starts with a ghost
// writer, whose time (100) holds the new stream's watermarks back until
// the writer timeout.
func TestReviewNoteWriterTimeRacingDelete(t *testing.T) {
	e := newEnv(t)
	hs := &putHookStore{Store: e.store, part: "/writers/"}
	s, ctx := wmStream(e, hs)
	seg := protocol.SegmentName("sc", "st", 0, 0)
	hs.before = func() {
		must(t, s.SealStream(ctx, "sc", "st"))
		must(t, s.DeleteStream(ctx, "sc", "st"))
	}
	noteErr := s.NoteWriterTime(ctx, "sc", "st", "ghost", api.WriterTime{Time: 100, Position: api.StreamCut{seg: 0}})
	t.Logf("note racing the delete: %v", noteErr)

	_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
	must(t, err)
	must(t, s.NoteWriterTime(ctx, "sc", "st", "live", api.WriterTime{Time: 500, Position: api.StreamCut{seg: 0}}))
	must(t, s.WatermarkStep(ctx))
	ws, err := s.Watermarks(ctx, "sc", "st", 0)
	must(t, err)
	if len(ws) != 1 || ws[0].LowerTime != 500 {
		t.Fatalf("new stream sc/st, one live writer at 500: watermarks %+v; want one with lower time 500 (a writer of the deleted stream counts)", ws)
	}
}
