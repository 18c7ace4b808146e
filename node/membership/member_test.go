package membership_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/membership"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
)

const (
	containers     = 4
	sessionTimeout = 2 * time.Second
	waitTimeout    = 30 * time.Second
)

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// waitFor polls cond until it holds, failing t after waitTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, waitTimeout, what, cond)
}

// waitWithin is waitFor with its own bound.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// segmentIn returns a segment name of stream st that belongs to container id.
func segmentIn(t *testing.T, st string, id int) string {
	t.Helper()
	for i := int64(0); i < 100000; i++ {
		s := protocol.SegmentName("sc", st, i, 0)
		if protocol.ContainerOf(s, containers) == id {
			return s
		}
	}
	t.Fatalf("no segment for container %d", id)
	return ""
}

func openStore(t *testing.T, addr *string, mu *sync.Mutex) *zkstore.Store {
	t.Helper()
	mu.Lock()
	a := *addr
	mu.Unlock()
	s, err := zkstore.Open([]string{a}, "/sluice", sessionTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// member is one node of the test cluster: a node.Node on its own data
// directory, served on loopback, following the assignment.
type member struct {
	t      *testing.T
	id     string
	dir    string
	node   *node.Node
	srv    *server.Server
	addr   string
	served chan error
	m      *membership.Member
	once   sync.Once
}

type cluster_ struct {
	t      *testing.T
	mu     sync.Mutex
	zkAddr string
	leader *zkstore.Store
}

func newCluster(t *testing.T) *cluster_ {
	c := &cluster_{t: t, zkAddr: clustertest.StartZooKeeper(t)}
	c.leader = openStore(t, &c.zkAddr, &c.mu)
	t.Cleanup(func() { c.leader.Close() })
	return c
}

// newClusterOn runs its own ZooKeeper in dir, for a test that stops it.
func newClusterOn(t *testing.T, dir string) (*cluster_, *clustertest.ZooKeeper) {
	z, err := clustertest.NewZooKeeper(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Stop)
	c := &cluster_{t: t, zkAddr: z.Addr}
	c.leader = openStore(t, &c.zkAddr, &c.mu)
	t.Cleanup(func() { c.leader.Close() })
	return c, z
}

func (c *cluster_) start(id, dir string) *member { return c.startWith(id, dir, nil) }

// startWith starts a member whose node has tier 2 (if not nil).
func (c *cluster_) startWith(id, dir string, tier tier2.Storage) *member {
	t := c.t
	t.Helper()
	n, err := node.Open(node.Config{Dir: dir, Containers: containers, Hosted: []int{}, Logger: quiet(), Tier2: tier})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(n, server.Options{Logger: quiet()})
	mb := &member{t: t, id: id, dir: dir, node: n, srv: srv, addr: l.Addr().String(), served: make(chan error, 1)}
	go func() { mb.served <- srv.Serve(l) }()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	mb.m, err = membership.Start(ctx, membership.Config{
		Store: openStore(t, &c.zkAddr, &c.mu),
		Reopen: func(context.Context) (cluster.Session, error) {
			c.mu.Lock()
			a := c.zkAddr
			c.mu.Unlock()
			s, err := zkstore.Open([]string{a}, "/sluice", sessionTimeout, nil)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		ID: id, Addr: mb.addr, Node: n, Logger: quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mb.stop)
	return mb
}

// stop closes the membership, the server and the node.
func (mb *member) stop() {
	mb.once.Do(func() {
		if err := mb.m.Close(); err != nil {
			mb.t.Errorf("%s: membership close: %v", mb.id, err)
		}
		if err := mb.srv.Close(); err != nil {
			mb.t.Errorf("%s: server close: %v", mb.id, err)
		}
		<-mb.served
		if err := mb.node.Close(); err != nil {
			mb.t.Errorf("%s: node close: %v", mb.id, err)
		}
	})
}

func (c *cluster_) publish(m layout.Map) {
	c.t.Helper()
	if _, err := c.leader.Put(c.t.Context(), layout.AssignmentKey, m.Encode()); err != nil {
		c.t.Fatal(err)
	}
}

func hostsAt(n *node.Node, id int, epoch int64) bool {
	for _, h := range n.Hosted() {
		if h.ID == id {
			return h.Epoch == epoch && !h.Fenced
		}
	}
	return false
}

func dial(t *testing.T, addr string) *segclient.Conn {
	t.Helper()
	c, err := segclient.Dial(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func appendEvent(t *testing.T, c *segclient.Conn, seg, writer string, n int64, ev string) error {
	t.Helper()
	if _, err := c.SetupAppend(t.Context(), writer, seg); err != nil {
		return err
	}
	_, err := c.Append(t.Context(), writer, n, 1, protocol.AppendEvent(nil, []byte(ev)), protocol.NoExpectedOffset)
	return err
}

func readAll(t *testing.T, c *segclient.Conn, seg string) []byte {
	t.Helper()
	var out []byte
	for {
		r, err := c.ReadSegment(t.Context(), seg, int64(len(out)), 1<<20, 0)
		if err != nil {
			t.Fatalf("read %s: %v", seg, err)
		}
		for _, d := range r.Data {
			out = append(out, d...)
		}
		if r.AtTail || r.EndOfSegment {
			return out
		}
	}
}

func TestTwoNodesFollowTheAssignment(t *testing.T) {
	c := newCluster(t)
	a := c.start("a", t.TempDir())
	b := c.start("b", t.TempDir())

	// Registered: ephemeral znodes with id and address.
	for _, mb := range []*member{a, b} {
		kv, err := c.leader.Get(t.Context(), layout.NodeKey(mb.id))
		if err != nil {
			t.Fatalf("registration of %s: %v", mb.id, err)
		}
		r, err := layout.ParseNodeRegistration(kv.Value)
		if err != nil || r.ID != mb.id || r.Addr != mb.addr || r.Started.IsZero() {
			t.Fatalf("registration of %s = %s (%v)", mb.id, kv.Value, err)
		}
	}
	if len(a.node.Hosted())+len(b.node.Hosted()) != 0 {
		t.Fatal("nodes host containers before any map is published")
	}

	// The leader publishes: a gets 0 and 2, b gets 1 and 3.
	m := layout.Map{Containers: []layout.Owner{{Node: "a", Epoch: 1}, {Node: "b", Epoch: 1}, {Node: "a", Epoch: 1}, {Node: "b", Epoch: 1}}}
	c.publish(m)
	waitFor(t, "both nodes host their containers", func() bool {
		return hostsAt(a.node, 0, 1) && hostsAt(a.node, 2, 1) && hostsAt(b.node, 1, 1) && hostsAt(b.node, 3, 1)
	})
	seg := map[int]string{}
	for id := range containers {
		seg[id] = segmentIn(t, "st", id)
	}
	for id, mb := range map[int]*member{0: a, 1: b, 2: a, 3: b} {
		if _, err := mb.node.ContainerFor(seg[id]); err != nil {
			t.Fatalf("%s: ContainerFor(container %d): %v", mb.id, id, err)
		}
		other := a
		if mb == a {
			other = b
		}
		if _, err := other.node.ContainerFor(seg[id]); !errors.Is(err, protocol.ErrWrongHost) {
			t.Fatalf("%s: ContainerFor(container %d) = %v, want ErrWrongHost", other.id, id, err)
		}
	}

	// Data through a's server into container 2, and through b's into 3.
	ca, cb := dial(t, a.addr), dial(t, b.addr)
	for _, x := range []struct {
		conn *segclient.Conn
		seg  string
	}{{ca, seg[2]}, {cb, seg[3]}} {
		if err := x.conn.CreateSegment(t.Context(), x.seg); err != nil {
			t.Fatal(err)
		}
		if err := appendEvent(t, x.conn, x.seg, "w", 1, "before"); err != nil {
			t.Fatal(err)
		}
	}
	held, err := a.node.ContainerFor(seg[2])
	if err != nil {
		t.Fatal(err)
	}

	// Move container 2 from a to b under epoch 2: a is fenced, b hosts it.
	m.Containers[2] = layout.Owner{Node: "b", Epoch: 2}
	c.publish(m)
	waitFor(t, "a drops container 2", func() bool { return held.Fenced() })
	if err := appendEvent(t, ca, seg[2], "w", 2, "after"); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("append through a after the move = %v, want ErrWrongHost", err)
	}
	if _, err := held.Append(container.Append{Segment: seg[2], Writer: "w", EventNumber: 3, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: protocol.AppendEvent(nil, []byte("x"))}); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("append on a's fenced container = %v, want ErrWrongHost", err)
	}
	waitFor(t, "b hosts container 2 under epoch 2", func() bool { return hostsAt(b.node, 2, 2) })
	if e, err := container.ReadEpoch(nil, b.node.ContainerDir(2)); err != nil || e != 2 {
		t.Fatalf("b's epoch file for container 2: %d, %v", e, err)
	}
	waitFor(t, "a unhosts container 2", func() bool {
		_, err := a.node.ContainerFor(seg[2])
		return errors.Is(err, protocol.ErrWrongHost) && !hostsAt(a.node, 2, 1) && len(a.node.Hosted()) == 1
	})

	// A directory that records a higher epoch is refused: give container 1
	// to a under epoch 2 while a's directory for it says 5.
	dir1 := a.node.ContainerDir(1)
	if err := os.MkdirAll(dir1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir1, container.EpochFile), []byte("5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Containers[1] = layout.Owner{Node: "a", Epoch: 2}
	c.publish(m)
	waitFor(t, "a refuses container 1", func() bool {
		return errors.Is(a.m.Failed()[1], container.ErrStaleEpoch)
	})
	if _, err := a.node.ContainerFor(seg[1]); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("a serves container 1 despite a higher epoch on disk: %v", err)
	}
	waitFor(t, "b drops container 1", func() bool {
		_, err := b.node.ContainerFor(seg[1])
		return errors.Is(err, protocol.ErrWrongHost)
	})

	// Kill b: its session ends without unregistering; the znode goes,
	// the map keeps b's containers.
	if err := b.m.Store().Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b's registration to disappear", func() bool {
		_, err := c.leader.Get(t.Context(), layout.NodeKey("b"))
		return errors.Is(err, cluster.ErrNotFound)
	})
	kv, err := c.leader.Get(t.Context(), layout.AssignmentKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := layout.Parse(kv.Value, containers); len(got.Of("b")) != 2 {
		t.Fatalf("map after b died: %s", kv.Value)
	}
	waitFor(t, "b's node to stop taking writes", func() bool {
		for _, h := range b.node.Hosted() {
			if !h.Fenced {
				return false
			}
		}
		return true
	})
	cb.Close()
	bdir := b.dir
	b.stop()

	// b again, on its data directory: registered, serving 2 and 3 with the
	// acknowledged data.
	b2 := c.start("b", bdir)
	if _, err := c.leader.Get(t.Context(), layout.NodeKey("b")); err != nil {
		t.Fatalf("b's registration after restart: %v", err)
	}
	waitFor(t, "the restarted b hosts containers 2 and 3", func() bool {
		return hostsAt(b2.node, 2, 2) && hostsAt(b2.node, 3, 1)
	})
	cb2 := dial(t, b2.addr)
	want := protocol.AppendEvent(nil, []byte("before"))
	if got := readAll(t, cb2, seg[3]); !bytes.Equal(got, want) {
		t.Fatalf("container 3 after restart: %q, want %q", got, want)
	}
	if err := appendEvent(t, cb2, seg[3], "w", 2, "again"); err != nil {
		t.Fatalf("append after restart: %v", err)
	}
}

// TestSessionExpiryFencesThenServesAgain cuts the node off from ZooKeeper
// (the server goes away): once its session has expired it takes no more
// writes; when ZooKeeper is back (a new server on the same data) it opens a
// new session, registers again and serves its containers with their data.
func TestSessionExpiryFencesThenServesAgain(t *testing.T) {
	zkDir := t.TempDir()
	c, z := newClusterOn(t, zkDir)
	a := c.start("a", t.TempDir())
	m := layout.Map{Containers: []layout.Owner{{Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}, {Node: "a", Epoch: 1}}}
	c.publish(m)
	waitFor(t, "a hosts every container", func() bool {
		for id := range containers {
			if !hostsAt(a.node, id, 1) {
				return false
			}
		}
		return true
	})
	seg := segmentIn(t, "st", 1)
	conn := dial(t, a.addr)
	if err := conn.CreateSegment(t.Context(), seg); err != nil {
		t.Fatal(err)
	}
	if err := appendEvent(t, conn, seg, "w", 1, "before"); err != nil {
		t.Fatal(err)
	}

	c.leader.Close()
	z.Stop()
	waitFor(t, "a fences every container after its session expired", func() bool {
		for _, h := range a.node.Hosted() {
			if !h.Fenced {
				return false
			}
		}
		return true
	})
	if _, err := conn.Append(t.Context(), "w", 2, 1, protocol.AppendEvent(nil, []byte("cut off")), protocol.NoExpectedOffset); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("append while cut off = %v, want ErrWrongHost", err)
	}

	// ZooKeeper back, on its data (the map is still there).
	z2, err := clustertest.NewZooKeeper(zkDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z2.Stop)
	c.mu.Lock()
	c.zkAddr = z2.Addr
	c.mu.Unlock()
	c.leader = openStore(t, &c.zkAddr, &c.mu)
	t.Cleanup(func() { c.leader.Close() })
	// Rejoining is several waits in a row, each bounded on its own: a
	// Reopen still trying the old server (zkstore.Open gives up after
	// 10 s), the keeper's backoff, the old session's registration
	// expiring on the new server (its session timeout, counted from the
	// server's start), then the containers reopening. On a loaded 2-core
	// machine their sum has passed 30 s (a run at load 18).
	waitWithin(t, 3*waitTimeout, "a registered again and serving", func() bool {
		if _, err := c.leader.Get(t.Context(), layout.NodeKey("a")); err != nil {
			return false
		}
		return hostsAt(a.node, 1, 1)
	})
	want := protocol.AppendEvent(nil, []byte("before"))
	if got := readAll(t, conn, seg); !bytes.Equal(got, want) {
		t.Fatalf("after rejoining: %q, want %q", got, want)
	}
	if err := appendEvent(t, conn, seg, "w", 2, "after"); err != nil {
		t.Fatalf("append after rejoining: %v", err)
	}
}
