package node

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// TestReleaseAndHostFrom moves a container between two nodes that share a
// tier 2, and back.
func TestReleaseAndHostFrom(t *testing.T) {
	store := tier2test.NewMem()
	open := func() *Node {
		n, err := Open(Config{Dir: t.TempDir(), Containers: 2, Hosted: []int{}, Tier2: store, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a, b := open(), open()
	seg := segmentIn(t, 1, 2)
	if err := a.Host(1, 1); err != nil {
		t.Fatal(err)
	}
	c, _ := a.ContainerFor(seg)
	c.Create(seg, nil)
	var want []byte
	for i := range 50 {
		ev := protocol.AppendEvent(nil, []byte(fmt.Sprint("event ", i)))
		want = append(want, ev...)
		if _, err := c.Append(container.Append{Segment: seg, Writer: "w", EventNumber: int64(i + 1), EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: ev}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Release(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ContainerFor(seg); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("the old owner still routes to the container: %v", err)
	}
	if _, err := store.Stat(tier2.HandoverPath(1, 1)); err != nil {
		t.Fatalf("no hand-over in tier 2: %v", err)
	}
	if err := b.HostFrom(1, 2, 1); err != nil {
		t.Fatal(err)
	}
	read := func(n *Node) []byte {
		t.Helper()
		c, err := n.ContainerFor(seg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Read(t.Context(), seg, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Join(r.Data, nil)
	}
	if got := read(b); !bytes.Equal(got, want) {
		t.Fatal("the new owner reads back differently")
	}
	// Hosting again under the same epoch (a restart) opens what is there.
	if err := b.Unhost(1); err != nil {
		t.Fatal(err)
	}
	if err := b.HostFrom(1, 2, 1); err != nil {
		t.Fatal(err)
	}
	// And back to the first node, whose own directory is stale.
	if err := b.Release(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := a.HostFrom(1, 3, 2); err != nil {
		t.Fatal(err)
	}
	if got := read(a); !bytes.Equal(got, want) {
		t.Fatal("the first node reads back differently after the return")
	}
	// Without tier 2 there is nothing to hand over through.
	n, _ := Open(Config{Dir: t.TempDir(), Containers: 2, Logger: quiet()})
	defer n.Close()
	if err := n.Release(t.Context(), 0); err == nil {
		t.Fatal("a release without tier 2 succeeded")
	}
}

func TestFlushTierTiersEveryContainer(t *testing.T) {
	store := tier2test.NewMem()
	n, err := Open(Config{Dir: t.TempDir(), Containers: 3, Tier2: store, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var segs []string
	for id := range 3 {
		seg := segmentIn(t, id, 3)
		segs = append(segs, seg)
		c, _ := n.ContainerFor(seg)
		c.Create(seg, nil)
		if _, err := c.Append(container.Append{Segment: seg, EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset,
			Data: protocol.AppendEvent(nil, []byte("x"))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, seg := range segs {
		c, _ := n.ContainerFor(seg)
		if ts, _ := c.TierState(seg); ts.Untiered != 0 || ts.Tiered == 0 {
			t.Fatalf("%s after FlushTier: %+v", seg, ts)
		}
	}
}
