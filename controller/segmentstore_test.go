package controller

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// flakyLocator reports the container unavailable for its first fails
// calls, then sends everything to addr.
type flakyLocator struct {
	addr  string
	fails int
	calls atomic.Int32
	err   error
}

func (l *flakyLocator) NodeFor(context.Context, string) (string, error) {
	if n := int(l.calls.Add(1)); n <= l.fails {
		return "", fmt.Errorf("container 1 is moving: %w", l.err)
	}
	return l.addr, nil
}

// TestNodeSegmentsWaitsForAMovingContainer: an operation refused as
// retriable is located and sent again until it succeeds, for up to
// RetryFor; other errors return at once.
func TestNodeSegmentsWaitsForAMovingContainer(t *testing.T) {
	addr := startNode(t)
	ctx := ctxT(t)
	seg := protocol.SegmentName("sc", "st", 0, 0)

	loc := &flakyLocator{addr: addr, fails: 3, err: protocol.ErrContainerUnavailable}
	n := NewNodeSegments(loc)
	defer n.Close()
	must(t, n.CreateSegment(ctx, seg, nil))
	equal(t, "locations asked", int(loc.calls.Load()), 4)

	loc = &flakyLocator{addr: addr, fails: 1 << 30, err: protocol.ErrWrongHost}
	n2 := NewNodeSegments(loc)
	defer n2.Close()
	n2.RetryFor = 300 * time.Millisecond
	if _, err := n2.SealSegment(ctx, seg); !errors.Is(err, protocol.ErrWrongHost) || loc.calls.Load() < 2 {
		t.Fatalf("after RetryFor: %v after %d tries, want ErrWrongHost after several", err, loc.calls.Load())
	}

	other := errors.New("no such node")
	loc = &flakyLocator{addr: addr, fails: 1 << 30, err: other}
	n3 := NewNodeSegments(loc)
	defer n3.Close()
	if err := n3.DeleteSegment(ctx, seg); !errors.Is(err, other) || loc.calls.Load() != 1 {
		t.Fatalf("a non-retriable error: %v after %d tries, want it after one", err, loc.calls.Load())
	}
}
