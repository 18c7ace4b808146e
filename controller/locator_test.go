package controller

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/protocol"
)

func TestStaticNodeLocate(t *testing.T) {
	s := StaticNode{Addr: "127.0.0.1:1", Containers: 4}
	seg := protocol.SegmentName("sc", "st", 3, 0)
	loc, err := s.Locate(ctxT(t), seg)
	if err != nil {
		t.Fatal(err)
	}
	want := Location{Endpoint: "127.0.0.1:1", Container: protocol.ContainerOf(seg, 4)}
	if loc != want {
		t.Fatalf("Locate = %+v, want %+v", loc, want)
	}
}

// TestClusterLocator follows the assignment and the nodes' registrations
// through the store's watches: unavailable before a map and while the
// owner is not registered, the owner's current address otherwise.
func TestClusterLocator(t *testing.T) {
	const n = 4
	ctx := ctxT(t)
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := NewClusterLocator(st, n, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seg := protocol.SegmentName("sc", "st", 0, 0)
	c := protocol.ContainerOf(seg, n)

	eventually := func(what string, ok func(Location, error) bool) {
		t.Helper()
		deadline := time.Now().Add(testTimeout)
		for {
			loc, err := l.Locate(ctx, seg)
			if ok(loc, err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: last Locate = %+v, %v", what, loc, err)
			}
			time.Sleep(5 * time.Millisecond) // polling a condition
		}
	}
	unavailable := func(_ Location, err error) bool { return errors.Is(err, protocol.ErrContainerUnavailable) }

	if _, err := l.Locate(ctx, seg); !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Fatalf("no map: Locate err = %v, want ContainerUnavailable", err)
	}
	m := layout.New(n)
	for i := range m.Containers {
		m.Containers[i] = layout.Owner{Node: "a", Epoch: 3}
	}
	if _, err := st.Put(ctx, layout.AssignmentKey, m.Encode()); err != nil {
		t.Fatal(err)
	}
	eventually("owner not registered", unavailable)
	if _, err := st.Put(ctx, layout.NodesKey+"/a", []byte(`{"id":"a","addr":"127.0.0.1:7001","started":"2025-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	eventually("owner registered", func(loc Location, err error) bool {
		return err == nil && loc == Location{Endpoint: "127.0.0.1:7001", Container: c, Epoch: 3}
	})
	if err := st.Delete(ctx, layout.NodesKey+"/a", cluster.AnyVersion); err != nil {
		t.Fatal(err)
	}
	eventually("owner gone", unavailable)
	if _, err := st.Put(ctx, layout.NodesKey+"/a", []byte(`{"id":"a","addr":"127.0.0.1:7002"}`)); err != nil {
		t.Fatal(err)
	}
	eventually("owner back on a new address", func(loc Location, err error) bool {
		return err == nil && loc.Endpoint == "127.0.0.1:7002"
	})
	// A move to another node (a later hand-over) is followed too.
	m.Containers[c] = layout.Owner{Node: "b", Epoch: 4}
	if _, err := st.Put(ctx, layout.NodesKey+"/b", []byte(`{"id":"b","addr":"127.0.0.1:7003"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, layout.AssignmentKey, m.Encode()); err != nil {
		t.Fatal(err)
	}
	eventually("moved", func(loc Location, err error) bool {
		return err == nil && loc == Location{Endpoint: "127.0.0.1:7003", Container: c, Epoch: 4}
	})
	// A map of another cluster size is not used.
	if _, err := st.Put(ctx, layout.AssignmentKey, layout.New(n+1).Encode()); err != nil {
		t.Fatal(err)
	}
	eventually("wrong size", unavailable)
	addr, err := l.NodeFor(ctx, seg)
	if !errors.Is(err, protocol.ErrContainerUnavailable) || addr != "" {
		t.Fatalf("NodeFor = %q, %v", addr, err)
	}
}
