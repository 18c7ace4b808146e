package controller

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestTruncateInsideAnEventChangesNothing: a cut that moves one segment's
// head to a boundary and another's inside an event is refused before
// anything is recorded: the metadata and both segments on the node stay
// as they were.
func TestTruncateInsideAnEventChangesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	c := e.conn()
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 2))
	must(t, err)
	s0, s1 := protocol.SegmentName("sc", "st", 0, 0), protocol.SegmentName("sc", "st", 1, 0)
	write(t, c, s0, "aaaa", "bbbb")
	write(t, c, s1, "cccc", "dddd")
	before := dump(t, e.store)
	err = s.TruncateStream(ctx, "sc", "st", api.StreamCut{s0: 8, s1: 10})
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, protocol.ErrNotEventBoundary) ||
		!strings.Contains(err.Error(), "offset 10 of "+s1) || !strings.Contains(err.Error(), "boundaries are 8 and 16") {
		t.Fatalf("cut inside an event: %v; want ErrInvalid and ErrNotEventBoundary naming %s, 10 and the boundaries 8 and 16", err, s1)
	}
	if after := dump(t, e.store); !maps.Equal(before, after) {
		t.Fatalf("a refused cut changed the metadata:\n%v\n%v", before, after)
	}
	for _, seg := range []string{s0, s1} {
		info, err := c.GetSegmentInfo(ctx, seg)
		must(t, err)
		equal(t, "start offset of "+seg, info.StartOffset, int64(0))
	}
	must(t, s.TruncateStream(ctx, "sc", "st", api.StreamCut{s0: 8, s1: 8}))
	equal(t, "events left in "+s1, read(t, c, s1), []string{"dddd"})
}

// TestRetentionCutsAreEventBoundaries: the cuts retention records (stream
// tails from the nodes' lengths) are event boundaries, so retention's
// truncations pass the nodes' check.
func TestRetentionCutsAreEventBoundaries(t *testing.T) {
	e, s, seg := retentionEnv(t, api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 1})
	ctx := ctxT(t)
	c := e.conn()
	for i := range 12 {
		write(t, c, seg, strings.Repeat("x", i*7), fmt.Sprint("event ", i))
		must(t, s.RetentionStep(ctx))
		rec, _, err := s.loadRetention(ctx, "sc", "st")
		must(t, err)
		for _, rc := range rec.Cuts {
			for _, off := range rc.Cut {
				if err := c.CheckBoundary(ctx, seg, off); err != nil && !errors.Is(err, protocol.ErrSegmentTruncated) {
					t.Fatalf("retention recorded %d, which is not a boundary: %v", off, err)
				}
			}
		}
		e.clock.advance(5 * time.Hour) // older cuts pass the day and are truncated at
	}
	if cut, err := s.HeadCut(ctx, "sc", "st"); err != nil || cut[seg] == 0 {
		t.Fatalf("retention never truncated: head %v, %v", cut, err)
	}
}
