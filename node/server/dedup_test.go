package server_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// TestRefusedBlockIsNeverCountedStored: a block refused as retriable (the
// container is over its untiered bound) unbinds its writer, so a later
// block on the same connection cannot be stored behind it (a SetupAppend
// would then report the later number, and the writer would count the
// refused block as stored: acknowledged, never stored). After a new
// SetupAppend the writer resends both and the segment holds every block,
// in order.
func TestRefusedBlockIsNeverCountedStored(t *testing.T) {
	e := startWith(t, func(c *node.Config) {
		c.Tier2 = tier2test.NewMem()
		c.MaxUntieredBytes = 200
		// Nothing is tiered but by FlushTier.
		c.TierPolicy = tiering.Policy{SegmentBytes: 1 << 40, MaxLag: time.Hour}
	})
	t.Cleanup(e.stop)
	ctx := ctxT(t)
	c := e.dial()
	s := seg(1)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	blocks := [][]byte{block(string(bytes.Repeat([]byte{'a'}, 300))), block("b"), block("c")}
	if _, err := c.Append(ctx, "w", 0, 1, blocks[0], protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	_, err := c.Append(ctx, "w", 1, 1, blocks[1], protocol.NoExpectedOffset)
	if !protocol.IsRetriable(err) {
		t.Fatalf("append over the untiered bound: %v, want a retriable refusal", err)
	}
	if err := e.node.FlushTier(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.Append(ctx, "w", 2, 1, blocks[2], protocol.NoExpectedOffset)
	if !errors.Is(err, protocol.ErrWriterNotSetUp) {
		t.Fatalf("block after a retriable refusal, without a new setup: %v, want ErrWriterNotSetUp", err)
	}
	last, err := c.SetupAppend(ctx, "w", s)
	if err != nil || last != 0 {
		t.Fatalf("setup after the refusal: %d, %v; want 0 (only the first block is stored)", last, err)
	}
	for i, b := range blocks[1:] {
		if ack, err := c.Append(ctx, "w", int64(i+1), 1, b, protocol.NoExpectedOffset); err != nil || ack.PreviousEventNumber != int64(i) {
			t.Fatalf("resend %d: %+v, %v", i+1, ack, err)
		}
	}
	r, err := c.ReadSegment(ctx, s, 0, 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bytes.Join(r.Data, nil), bytes.Join(blocks, nil); !bytes.Equal(got, want) {
		t.Fatalf("segment holds %q, want %q", got, want)
	}
}

// TestEventNumbersGoingBackOnAConnectionAreRefused: within one setup, a
// writer's block numbered at or below its previous block's is refused,
// not acknowledged as a resend of something never stored.
func TestEventNumbersGoingBackOnAConnectionAreRefused(t *testing.T) {
	e := start(t, nil)
	ctx := ctxT(t)
	c := e.dial()
	s := seg(2)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "w", 10, 1, block("ten"), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	ack, err := c.Append(ctx, "w", 4, 1, block("four"), protocol.NoExpectedOffset)
	if !errors.Is(err, protocol.ErrInvalidEventNumber) {
		t.Fatalf("block numbered 4 after 10: %+v, %v; want ErrInvalidEventNumber", ack, err)
	}
	// A resend after a new setup is acknowledged as one (it is stored).
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	if ack, err := c.Append(ctx, "w", 10, 1, block("ten"), protocol.NoExpectedOffset); err != nil || ack.CurrentOffset != int64(len(block("ten"))) {
		t.Fatalf("resend after setup: %+v, %v", ack, err)
	}
}
