package membership_test

import (
	"time"

	"context"
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/membership"
)

// These tests drive a node's membership on in-memory sessions (package
// cluster/sessiontest): a real node on a temp directory, no ZooKeeper
// server and no network.

// memNode is a node following the assignment on in-memory sessions; each
// new session opens only once the test lets it.
type memNode struct {
	node   *node.Node
	m      *membership.Member
	allow  chan struct{}
	opened chan *sessiontest.Session
	// reopening gets a value each time the loop asks for a new session.
	reopening chan struct{}
}

func startMem(t *testing.T, srv *sessiontest.Server, s *sessiontest.Session, id string) *memNode {
	t.Helper()
	mn, err := tryStartMem(t, srv, s, id)
	if err != nil {
		t.Fatal(err)
	}
	return mn
}

// tryStartMem is startMem for a goroutine of the test: it reports errors
// rather than failing t.
func tryStartMem(t *testing.T, srv *sessiontest.Server, s *sessiontest.Session, id string) (*memNode, error) {
	n, err := node.Open(node.Config{Dir: t.TempDir(), Containers: containers, Hosted: []int{}, Logger: quiet()})
	if err != nil {
		return nil, err
	}
	mn := &memNode{node: n, allow: make(chan struct{}, 8), opened: make(chan *sessiontest.Session, 8), reopening: make(chan struct{}, 8)}
	mn.m, err = membership.Start(t.Context(), membership.Config{
		Store: s,
		Reopen: func(ctx context.Context) (cluster.Session, error) {
			mn.reopening <- struct{}{}
			select {
			case <-mn.allow:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			s := srv.Open()
			mn.opened <- s
			return s, nil
		},
		ID: id, Addr: "127.0.0.1:1", Node: n, Logger: quiet(),
	})
	if err != nil {
		n.Close()
		return nil, err
	}
	t.Cleanup(func() {
		if err := mn.m.Close(); err != nil {
			t.Errorf("membership close: %v", err)
		}
		if err := n.Close(); err != nil {
			t.Errorf("node close: %v", err)
		}
	})
	return mn, nil
}

func publishOn(t *testing.T, s cluster.Session, m layout.Map) {
	t.Helper()
	if _, err := s.Put(t.Context(), layout.AssignmentKey, m.Encode()); err != nil {
		t.Fatal(err)
	}
}

func allFenced(n *node.Node) bool {
	for _, h := range n.Hosted() {
		if !h.Fenced {
			return false
		}
	}
	return true
}

// TestExpiryFencesThenRejoinReconciles: the node follows the assignment;
// when its session expires it fences every container and stays fenced
// while no new session opens; on the new session it registers again and
// reconciles with the map as it is then.
func TestExpiryFencesThenRejoinReconciles(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	first := srv.Open()
	a := startMem(t, srv, first, "a")
	if kv, err := obs.Get(t.Context(), layout.NodeKey("a")); err != nil || len(kv.Value) == 0 {
		t.Fatalf("registration: %q, %v", kv.Value, err)
	}

	// Follows the assignment: every container, then one moved away.
	m := layout.Map{Containers: []layout.Owner{{Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}}}
	publishOn(t, obs, m)
	waitFor(t, "a hosts every container", func() bool {
		for id := range containers {
			if !hostsAt(a.node, id, 1) {
				return false
			}
		}
		return true
	})
	m.Containers[3] = layout.Owner{Node: "b", Epoch: 2}
	publishOn(t, obs, m)
	waitFor(t, "a unhosts container 3", func() bool { return len(a.node.Hosted()) == 3 && !hostsAt(a.node, 3, 1) })

	// Expiry: fenced, unregistered, and so it stays without a session.
	first.Expire()
	waitFor(t, "a fences every container after its session expired", func() bool { return allFenced(a.node) })
	if _, err := obs.Get(t.Context(), layout.NodeKey("a")); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("registration after expiry: %v", err)
	}
	// The loop now waits for a new session (in Reopen); meanwhile the
	// leader moves container 0 away too, and a, without a session, sees
	// none of it and serves nothing.
	select {
	case <-a.reopening:
	case <-time.After(30 * time.Second):
		t.Fatal("a does not open a new session after expiry")
	}
	m.Containers[0] = layout.Owner{Node: "b", Epoch: 2}
	publishOn(t, obs, m)
	if !allFenced(a.node) {
		t.Fatal("a serves a container without a session")
	}

	a.allow <- struct{}{}
	second := <-a.opened
	waitFor(t, "a registered again and serving containers 1 and 2", func() bool {
		if _, err := obs.Get(t.Context(), layout.NodeKey("a")); err != nil {
			return false
		}
		return hostsAt(a.node, 1, 1) && hostsAt(a.node, 2, 1)
	})
	waitFor(t, "a serves nothing else", func() bool { return len(a.node.Hosted()) == 2 })
	if a.m.Store() != cluster.Session(second) {
		t.Fatal("Store is not the new session")
	}
	if _, err := first.Get(t.Context(), layout.NodesKey); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("the expired session: Get = %v, want ErrClosed", err)
	}

	// And it follows the map on the new session.
	m.Containers[0] = layout.Owner{Node: "a", Epoch: 3}
	publishOn(t, obs, m)
	waitFor(t, "a hosts container 0 under epoch 3", func() bool { return hostsAt(a.node, 0, 3) })
}

// TestCloseFencesAndUnregisters: Close fences every container and deletes
// the registration; the node stays open.
func TestCloseFencesAndUnregisters(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	a := startMem(t, srv, srv.Open(), "a")
	publishOn(t, obs, layout.Map{Containers: []layout.Owner{{Node: "a", Epoch: 1}, {}, {}, {}}})
	waitFor(t, "a hosts container 0", func() bool { return hostsAt(a.node, 0, 1) })
	if err := a.m.Close(); err != nil {
		t.Fatal(err)
	}
	if !allFenced(a.node) || len(a.node.Hosted()) != 1 {
		t.Fatalf("after Close: %+v, want container 0 hosted and fenced", a.node.Hosted())
	}
	if _, err := obs.Get(t.Context(), layout.NodeKey("a")); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("registration after Close: %v", err)
	}
}

// TestStartWaitsForAnEarlierRegistration: a node restarted while its
// previous session's registration exists registers once that session
// has ended.
func TestStartWaitsForAnEarlierRegistration(t *testing.T) {
	srv := sessiontest.NewServer(t)
	old := srv.Open()
	if err := old.Register(t.Context(), layout.NodeKey("a"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	s := srv.Open()
	started := make(chan error, 1)
	go func() {
		_, err := tryStartMem(t, srv, s, "a")
		started <- err
	}()
	waitFor(t, "Start to retry the registration", func() bool {
		_, exists := s.Registers()
		return exists >= 2
	})
	select {
	case err := <-started:
		t.Fatalf("Start returned (%v) while the earlier registration exists", err)
	default:
	}
	old.Expire()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if kv, err := s.Get(t.Context(), layout.NodeKey("a")); err != nil || string(kv.Value) == "old" {
		t.Fatalf("registration = %q, %v; want the new one", kv.Value, err)
	}
}
