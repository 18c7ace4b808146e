package controller

import (
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// TestNodeSegments checks the idempotence NodeSegments promises and that a
// broken pooled connection is replaced.
func TestNodeSegments(t *testing.T) {
	addr := startNode(t)
	n := NewNodeSegments(StaticLocator(addr))
	defer n.Close()
	ctx := ctxT(t)
	seg := protocol.SegmentName("sc", "st", 0, 0)
	must(t, n.CreateSegment(ctx, seg, nil))
	must(t, n.CreateSegment(ctx, seg, nil)) // exists: success

	n.mu.Lock()
	n.mu.conns[addr].Close() // the pooled connection breaks
	n.mu.Unlock()
	info, err := n.GetSegmentInfo(ctx, seg)
	must(t, err)
	equal(t, "length", info.Length, int64(0))

	must(t, n.TruncateSegment(ctx, seg, 0))
	_, err = n.SealSegment(ctx, seg)
	must(t, err)
	_, err = n.SealSegment(ctx, seg) // sealed: success
	must(t, err)
	must(t, n.DeleteSegment(ctx, seg))
	must(t, n.DeleteSegment(ctx, seg)) // missing: success
	if _, err := n.GetSegmentInfo(ctx, seg); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("info of a deleted segment: %v", err)
	}
	if _, err := n.MergeSegments(ctx, seg, protocol.TransactionSegmentName(seg, newUUID())); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("merge of a missing segment: %v, want ErrNoSuchSegment (not hidden)", err)
	}
	must(t, n.Close())
	if err := n.CreateSegment(ctx, seg, nil); err == nil {
		t.Fatal("CreateSegment after Close succeeded")
	}
}
