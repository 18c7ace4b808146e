package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// retentionEnv creates sc/st (one segment) with policy p and returns the
// Service, a connection to the node and the segment's name.
func retentionEnv(t *testing.T, p api.RetentionPolicy) (*env, *Service, string) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	cfg := fixed("sc", "st", 1)
	cfg.RetentionPolicy = &p
	_, err := s.CreateStream(ctx, cfg)
	must(t, err)
	return e, s, protocol.SegmentName("sc", "st", 0, 0)
}

func segLength(t *testing.T, e *env, seg string) int64 {
	t.Helper()
	info, err := e.conn().GetSegmentInfo(ctxT(t), seg)
	must(t, err)
	return info.Length
}

// wantTruncatedBelow checks the head cut and that a read below it fails
// with the node's "truncated" error.
func wantTruncatedBelow(t *testing.T, e *env, s *Service, seg string, head int64) {
	t.Helper()
	cut, err := s.HeadCut(ctxT(t), "sc", "st")
	must(t, err)
	equal(t, "head cut", cut, api.StreamCut{seg: head})
	_, err = e.conn().ReadSegment(ctxT(t), seg, head-1, 1<<10, 0)
	if !errors.Is(err, protocol.ErrSegmentTruncated) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("read below the head: err = %v, want %v", err, protocol.ErrSegmentTruncated)
	}
}

func TestRetentionByTime(t *testing.T) {
	e, s, seg := retentionEnv(t, api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 1})
	ctx := ctxT(t)
	c := e.conn()

	must(t, s.RetentionStep(ctx)) // empty stream: nothing recorded
	write(t, c, seg, "a", "b")
	first := segLength(t, e, seg)
	must(t, s.RetentionStep(ctx)) // records the cut at `first`, now
	e.clock.advance(12 * time.Hour)
	write(t, c, seg, "c")
	second := segLength(t, e, seg)
	must(t, s.RetentionStep(ctx)) // records the cut at `second`, 12 h later
	cut, err := s.HeadCut(ctx, "sc", "st")
	must(t, err)
	equal(t, "head before a day passed", cut, api.StreamCut{seg: 0})

	e.clock.advance(13 * time.Hour) // the first cut is 25 h old, the second 13 h
	must(t, s.RetentionStep(ctx))
	wantTruncatedBelow(t, e, s, seg, first)
	equal(t, "events left", read(t, c, seg), []string{"c"})

	e.clock.advance(12 * time.Hour) // the second cut is a day old
	must(t, s.RetentionStep(ctx))
	wantTruncatedBelow(t, e, s, seg, second)
	equal(t, "events left", read(t, c, seg), []string{})

	// Nothing more to do: the head stays, and the kept cuts are bounded.
	e.clock.advance(72 * time.Hour)
	must(t, s.RetentionStep(ctx))
	wantTruncatedBelow(t, e, s, seg, second)
	rec, _, err := s.loadRetention(ctx, "sc", "st")
	must(t, err)
	if len(rec.Cuts) != 0 {
		t.Fatalf("kept cuts %+v, want none (all at the head)", rec.Cuts)
	}
}

func TestRetentionBySize(t *testing.T) {
	e, s, seg := retentionEnv(t, api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: 1})
	ctx := ctxT(t)
	c := e.conn()
	half := strings.Repeat("x", mib/2)

	write(t, c, seg, half)
	must(t, s.RetentionStep(ctx))
	first := segLength(t, e, seg)
	write(t, c, seg, half)
	must(t, s.RetentionStep(ctx)) // ~1 MiB plus framing: over the limit, but no cut leaves 1 MiB
	cut, err := s.HeadCut(ctx, "sc", "st")
	must(t, err)
	equal(t, "head at 1 MiB", cut, api.StreamCut{seg: 0})

	write(t, c, seg, half)
	must(t, s.RetentionStep(ctx)) // the first cut leaves ~1 MiB plus framing
	wantTruncatedBelow(t, e, s, seg, first)
	if left := segLength(t, e, seg) - first; left < mib {
		t.Fatalf("%d bytes left, below the 1 MiB limit", left)
	}
	equal(t, "events left", len(read(t, c, seg)), 2)
}

func TestRetentionSkipsSealedAndDeleted(t *testing.T) {
	e, s, seg := retentionEnv(t, api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 1})
	ctx := ctxT(t)
	write(t, e.conn(), seg, "a")
	must(t, s.RetentionStep(ctx))
	must(t, s.SealStream(ctx, "sc", "st"))
	e.clock.advance(48 * time.Hour)
	must(t, s.RetentionStep(ctx))
	cut, err := s.HeadCut(ctx, "sc", "st")
	must(t, err)
	equal(t, "sealed stream's head", cut, api.StreamCut{seg: 0})

	must(t, s.DeleteStream(ctx, "sc", "st"))
	must(t, s.RetentionStep(ctx))
	for k := range dump(t, e.store) {
		if strings.HasPrefix(k, streamKey("sc", "st")) {
			t.Fatalf("key %s left after the delete", k)
		}
	}
}
