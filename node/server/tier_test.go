package server_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// TestTierStateOverTheWire tiers a segment and checks what GetSegmentInfo
// and GetTierStats report, then reads everything back from tier 2 with
// the cache too small to hold any of it.
func TestTierStateOverTheWire(t *testing.T) {
	store := tier2test.NewFaulty(tier2test.NewMem())
	e := startWith(t, func(c *node.Config) { c.Tier2 = store; c.CacheSize = 1 })
	e.t.Cleanup(e.stop)
	c := e.dial()
	ctx := ctxT(t)
	s := seg(0)
	want := fillSegment(t, c, s, 50)
	info, err := c.GetSegmentInfo(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if info.TieredOffset != 0 || info.UntieredBytes != int64(len(want)) || info.OldestUntieredUnixNano == 0 {
		t.Fatalf("before tiering: %+v", info)
	}
	flushTier(t, e)
	info, err = c.GetSegmentInfo(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if info.TieredOffset != int64(len(want)) || info.UntieredBytes != 0 || info.OldestUntieredUnixNano != 0 || info.Tier2Error != "" {
		t.Fatalf("after tiering: %+v", info)
	}
	if got := readAll(t, c, s, 0, int64(len(want))); !bytes.Equal(got, want) {
		t.Fatal("the segment reads back differently from tier 2")
	}
	stats, err := c.GetTierStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tiered int64
	for _, ct := range stats.Containers {
		tiered += ct.TieredBytes
	}
	if len(stats.Containers) != containers || tiered != int64(len(want)) {
		t.Fatalf("tier stats %+v: want %d containers and %d bytes tiered", stats, containers, len(want))
	}
	// A stalled tier 2 shows in the segment's info and the node's stats.
	store.Arm(tier2test.OpCreate, tier2test.Fault{Err: fmt.Errorf("disk gone: %w", tier2.ErrUnavailable)})
	if _, err := c.Append(ctx, "w", 100, 1, block("more"), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	for _, ct := range e.node.Containers() {
		e.node.TierWriter(ct.ID()).Flush(ctx)
	}
	info, _ = c.GetSegmentInfo(ctx, s)
	if !strings.Contains(info.Tier2Error, "disk gone") || info.UntieredBytes == 0 {
		t.Fatalf("while stalled: %+v", info)
	}
}

// TestTierReadsReleaseTheirBuffers: the server gives a read's tier-2
// memory back once the reply is written, so many reads of parts that the
// cache cannot hold reuse a few buffers instead of allocating one each.
func TestTierReadsReleaseTheirBuffers(t *testing.T) {
	store := tier2test.NewFaulty(tier2test.NewMem())
	e := startWith(t, func(c *node.Config) { c.Tier2 = store; c.CacheSize = 1 })
	e.t.Cleanup(e.stop)
	c := e.dial()
	ctx := ctxT(t)
	s := seg(0)
	want := fillSegment(t, c, s, 40)
	flushTier(t, e)
	made := e.node.PartPool().Made()
	reads := 0
	for range 5 {
		for off := int64(0); off < int64(len(want)); {
			r, err := c.ReadSegment(ctx, s, off, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := bytes.Join(r.Data, nil)
			if len(got) == 0 || !bytes.Equal(got, want[off:off+int64(len(got))]) {
				t.Fatalf("read at %d: %d bytes that differ from what was written", off, len(got))
			}
			off += int64(len(got))
			reads++
		}
	}
	if n := e.node.PartPool().Made() - made; n > 2 || reads < 50 {
		t.Fatalf("%d part buffers allocated for %d reads from tier 2: the server does not release them", n, reads)
	}
}

// fillSegment creates segment s and appends n events of growing size, one
// block each, as writer "w"; it returns the segment's bytes.
func fillSegment(t *testing.T, c *segclient.Conn, s string, n int) []byte {
	t.Helper()
	ctx := ctxT(t)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range n {
		b := block(fmt.Sprintf("event %d %s", i, strings.Repeat("z", i)))
		want = append(want, b...)
		if _, err := c.Append(ctx, "w", int64(i+1), 1, b, protocol.NoExpectedOffset); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// flushTier tiers everything durable in every container.
func flushTier(t *testing.T, e *env) {
	t.Helper()
	for _, ct := range e.node.Containers() {
		if err := e.node.TierWriter(ct.ID()).Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
}
