package node

import (
	"bytes"
	"testing"

	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// A move cancelled after the owner wrote its hand-over (the target died
// before the release was confirmed and no other target was left: the
// controller clears MoveTo and keeps Node and Epoch, assignment.go) leaves
// the hand-over of epoch E in tier 2 while the owner goes on under E. Its
// later records are of E too, and restore orders a hand-over of E after
// every record of E: after a disk loss (or a failover to another node),
// the stale hand-over wins over the newer records, losing everything
// tiered since.
func TestRestoreAfterCancelledMove(t *testing.T) {
	r := restoreRig{t: t, store: tier2test.NewMem()}
	dir := t.TempDir()
	a := r.node(dir, 1)
	c := ctr(t, a)
	c.Create(seg(0), nil)
	want := appendEvents(t, c, seg(0), "w", 1, 11)
	if err := a.Release(t.Context(), 0); err != nil { // hand-over of epoch 1 written
		t.Fatal(err)
	}
	// The move is cancelled: the map keeps the container on a under epoch 1.
	if err := a.Host(0, 1); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendEvents(t, ctr(t, a), seg(0), "w", 11, 21)...)
	if err := a.FlushTier(t.Context()); err != nil { // tiered and in a record of epoch 1
		t.Fatal(err)
	}
	loseDisk(t, a, dir)
	a = r.open(dir, nil)
	if err := a.Host(0, 1); err != nil {
		t.Fatal(err)
	}
	if got := readFrom(t, ctr(t, a), seg(0), 0); !bytes.Equal(got, want) {
		t.Fatalf("after the disk loss: %d bytes, want %d (everything was tiered and recorded)", len(got), len(want))
	}
}
