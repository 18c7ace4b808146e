package leader_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/controller/leader"
)

const (
	containers     = 4
	sessionTimeout = 1 * time.Second
	// nodeSessionTimeout is the session of a test's node registrations.
	nodeSessionTimeout = 20 * time.Second
	waitTimeout        = 30 * time.Second
)

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
}

// resumer counts Resume calls.
type resumer struct{ calls atomic.Int64 }

func (r *resumer) Resume(context.Context) error { r.calls.Add(1); return nil }

// zk is a ZooKeeper whose address may change (restarted on its data).
type zk struct {
	mu   sync.Mutex
	addr string
	// up, if not nil, is closed once the server serves at addr: Reopen
	// waits for it rather than dialling a stopped server.
	up chan struct{}
}

func (z *zk) open(t *testing.T) *zkstore.Store {
	t.Helper()
	s, err := z.tryOpen()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (z *zk) tryOpen() (*zkstore.Store, error) { return z.tryOpenFor(sessionTimeout) }

func (z *zk) tryOpenFor(session time.Duration) (*zkstore.Store, error) {
	z.mu.Lock()
	a := z.addr
	z.mu.Unlock()
	return zkstore.Open([]string{a}, "/sluice", session, nil)
}

// openNode opens a session for a node's registration: nodes in these tests
// die by Close, never by expiry, so their sessions are long enough that a
// loaded machine cannot expire them mid-test (which would take a node's
// registration away under the test's feet).
func (z *zk) openNode(t *testing.T) *zkstore.Store {
	t.Helper()
	s, err := z.tryOpenFor(nodeSessionTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func start(t *testing.T, z *zk, id string, r leader.Resumer) *leader.Member {
	t.Helper()
	m, err := leader.Start(t.Context(), leader.Config{
		Store: z.open(t),
		Reopen: func(ctx context.Context) (cluster.Session, error) {
			z.mu.Lock()
			up := z.up
			z.mu.Unlock()
			if up != nil {
				select {
				case <-up:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			s, err := z.tryOpen()
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		ID: id, Addr: "127.0.0.1:80" + id[len(id)-1:], Containers: containers, Service: r,
		ReconcileInterval: 50 * time.Millisecond, ResumeInterval: time.Hour, Logger: quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func registerNode(t *testing.T, s cluster.Session, id string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"id": id, "addr": "127.0.0.1:1" + id})
	if err := s.Register(t.Context(), layout.NodesKey+"/"+id, b); err != nil {
		t.Fatal(err)
	}
}

func published(t *testing.T, s cluster.Store) (layout.Map, bool) {
	t.Helper()
	kv, err := s.Get(t.Context(), layout.AssignmentKey)
	if errors.Is(err, cluster.ErrNotFound) {
		return layout.Map{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := layout.Parse(kv.Value, containers)
	if err != nil {
		t.Fatal(err)
	}
	return m, true
}

// TestLeaderAssignsAndResumes: the first controller leads, resumes at
// once, registers, and assigns containers to the nodes as they come; when
// it leaves, the second leads and resumes; a dead node keeps its
// containers.
func TestLeaderAssignsAndResumes(t *testing.T) {
	z := &zk{addr: clustertest.StartZooKeeper(t)}
	obs := z.open(t)
	defer obs.Close()

	var r1, r2 resumer
	c1 := start(t, z, "c1", &r1)
	waitFor(t, "c1 leads and resumes", func() bool { return c1.IsLeader() && r1.calls.Load() > 0 })
	c2 := start(t, z, "c2", &r2)
	if id, err := obs.Leader(t.Context(), layout.ElectionKey); err != nil || id != "c1" {
		t.Fatalf("Leader = %q, %v; want c1", id, err)
	}
	for _, id := range []string{"c1", "c2"} {
		kv, err := obs.Get(t.Context(), layout.ControllerKey(id))
		if err != nil {
			t.Fatalf("registration of %s: %v", id, err)
		}
		reg, err := layout.ParseControllerRegistration(kv.Value)
		if err != nil || reg.ID != id || reg.Addr == "" {
			t.Fatalf("registration of %s: %s (%v)", id, kv.Value, err)
		}
	}
	if _, ok := published(t, obs); ok {
		t.Fatal("a map was published with no node")
	}

	// Nodes: a first node gets everything; a second one finds nothing
	// unassigned (moves need a hand-over).
	nodeA := z.openNode(t)
	registerNode(t, nodeA, "a")
	waitFor(t, "every container assigned to a", func() bool {
		m, ok := published(t, obs)
		return ok && len(m.Of("a")) == containers
	})
	nodeB := z.openNode(t)
	defer nodeB.Close()
	registerNode(t, nodeB, "b")

	// Someone clears a container's owner: the leader assigns it at once
	// (the watch), to the least loaded live node, b.
	kv, err := obs.Get(t.Context(), layout.AssignmentKey)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := layout.Parse(kv.Value, containers)
	m.Containers[2] = layout.Owner{Epoch: m.Containers[2].Epoch}
	if _, err := obs.CompareAndSet(t.Context(), layout.AssignmentKey, m.Encode(), kv.Version); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "container 2 reassigned to b under the next epoch", func() bool {
		m, _ := published(t, obs)
		return m.Containers[2] == layout.Owner{Node: "b", Epoch: 2}
	})

	// A dead node keeps its containers.
	nodeA.Close()
	before, _ := published(t, obs)
	if err := c1.Reconcile(t.Context(), obs); err != nil {
		t.Fatal(err)
	}
	if after, _ := published(t, obs); len(after.Of("a")) != 3 || len(before.Of("a")) != 3 {
		t.Fatalf("a's containers: before %v, after %v; want 3 kept", before.Of("a"), after.Of("a"))
	}

	// The leader leaves: c2 takes over and resumes.
	if r2.calls.Load() != 0 {
		t.Fatal("a follower resumed workflows")
	}
	c1.Close()
	if c1.IsLeader() {
		t.Fatal("closed member still leads")
	}
	waitFor(t, "c2 leads and resumes", func() bool { return c2.IsLeader() && r2.calls.Load() > 0 })
	if _, err := obs.Get(t.Context(), layout.ControllerKey("c1")); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("c1's registration after Close: %v", err)
	}
}

// TestSessionExpiryStopsLeading: a leader cut off from ZooKeeper stops
// its loops when the session expires, and leads again on a new session
// once ZooKeeper is back.
func TestSessionExpiryStopsLeading(t *testing.T) {
	zkDir := t.TempDir()
	server, err := clustertest.NewZooKeeper(zkDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Stop() })
	z := &zk{addr: server.Addr}
	var r resumer
	c := start(t, z, "c1", &r)
	waitFor(t, "c1 leads", c.IsLeader)
	z.mu.Lock()
	z.up = make(chan struct{})
	z.mu.Unlock()
	server.Stop()
	waitFor(t, "c1 stops leading after its session expired", func() bool { return !c.IsLeader() })

	server2, err := clustertest.NewZooKeeper(zkDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server2.Stop() })
	z.mu.Lock()
	z.addr = server2.Addr
	close(z.up)
	z.mu.Unlock()
	calls := r.calls.Load()
	waitFor(t, "c1 leads again on a new session and resumes", func() bool { return c.IsLeader() && r.calls.Load() > calls })
	obs := z.open(t)
	defer obs.Close()
	if _, err := obs.Get(t.Context(), layout.ControllerKey("c1")); err != nil {
		t.Fatalf("registration on the new session: %v", err)
	}
}
