package zkstore_test

import (
	"context"
	"errors"
	"github.com/go-zookeeper/zk"
	"net"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/cluster/zkstore"
)

const waitTimeout = 15 * time.Second

func TestRegisterEphemeralGoneWithSession(t *testing.T) {
	root := testRoot(t)
	node, observer := openAt(t, root, 10*time.Second), openAt(t, root, 10*time.Second)
	ctx := t.Context()

	if err := node.Register(ctx, "nodes/n1", []byte("127.0.0.1:12345")); err != nil {
		t.Fatal(err)
	}
	if err := observer.Register(ctx, "nodes/n1", []byte("other")); !errors.Is(err, cluster.ErrExists) {
		t.Fatalf("second Register of the key: %v, want ErrExists", err)
	}
	kv, err := observer.Get(ctx, "nodes/n1")
	if err != nil || string(kv.Value) != "127.0.0.1:12345" {
		t.Fatalf("observer.Get = %+v, %v", kv, err)
	}
	// An ephemeral registration can be updated like any key.
	if _, err := node.Put(ctx, "nodes/n1", []byte("127.0.0.1:23456")); err != nil {
		t.Fatal(err)
	}
	ch, err := observer.Watch(ctx, "nodes/n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		for !ev.Deleted {
			ev = <-ch
		}
	case <-time.After(waitTimeout):
		t.Fatal("registration still there after its session was closed")
	}
	if _, err := observer.Get(ctx, "nodes/n1"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("Get after the session ended: %v", err)
	}
	// The persistent parent stays.
	if _, err := observer.Get(ctx, "nodes"); err != nil {
		t.Fatal(err)
	}
}

func wantLeaderID(t *testing.T, s *zkstore.Store, key, want string) {
	t.Helper()
	id, err := s.Leader(t.Context(), key)
	if err != nil || id != want {
		t.Fatalf("Leader = %q, %v; want %q", id, err, want)
	}
}

func TestElectResign(t *testing.T) {
	root := testRoot(t)
	sa, sb := openAt(t, root, 10*time.Second), openAt(t, root, 10*time.Second)
	ctx := t.Context()
	if _, err := sa.Leader(ctx, "election"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("Leader of no election: %v", err)
	}

	a, err := sa.Elect(ctx, "election", "A")
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsLeader() {
		t.Fatal("the first candidate does not lead")
	}
	b, err := sb.Elect(ctx, "election", "B")
	if err != nil {
		t.Fatal(err)
	}
	if b.IsLeader() {
		t.Fatal("the second candidate leads while the first is there")
	}
	wantLeaderID(t, sb, "election", "A")

	if err := a.Resign(); err != nil {
		t.Fatal(err)
	}
	if a.IsLeader() {
		t.Fatal("resigned candidate still leads")
	}
	sessiontest.WaitEnded(t, a, "A")
	sessiontest.WaitLeads(t, b, "B")
	wantLeaderID(t, sa, "election", "B")
	if err := a.Resign(); err != nil {
		t.Fatalf("second Resign: %v", err)
	}
	if err := b.Resign(); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Leader(ctx, "election"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("Leader after everyone resigned: %v", err)
	}
}

func TestElectLeaderSessionCloses(t *testing.T) {
	root := testRoot(t)
	sa, sb := openAt(t, root, 10*time.Second), openAt(t, root, 10*time.Second)
	ctx := t.Context()
	a, err := sa.Elect(ctx, "controllers/leader", "A")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sb.Elect(ctx, "controllers/leader", "B")
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsLeader() || b.IsLeader() {
		t.Fatalf("leaders: A %v, B %v", a.IsLeader(), b.IsLeader())
	}
	if err := sa.Close(); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitEnded(t, a, "A")
	sessiontest.WaitLeads(t, b, "B")
}

// TestElectPredecessorLeaves checks the chain of watches: when a candidate
// in the middle leaves, the one after it waits on the one before, and
// leads only when that one leaves.
func TestElectPredecessorLeaves(t *testing.T) {
	root := testRoot(t)
	s := openAt(t, root, 10*time.Second)
	ctx := t.Context()
	var ls []cluster.Leadership
	for _, id := range []string{"1", "2", "3"} {
		l, err := s.Elect(ctx, "e", id)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	if err := ls[1].Resign(); err != nil {
		t.Fatal(err)
	}
	wantLeaderID(t, s, "e", "1")
	if ls[2].IsLeader() {
		t.Fatal("third candidate leads after the second left")
	}
	if err := ls[0].Resign(); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitLeads(t, ls[2], "3")
}

// TestExpiredWhenCutOff runs its own server and kills it: the store's
// session is then lost once its timeout has passed, which Expired and the
// end of the candidacy report.
func TestExpiredWhenCutOff(t *testing.T) {
	z, err := clustertest.NewZooKeeper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer z.Stop()
	s, err := zkstore.Open([]string{z.Addr}, "/sluice", 500*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Elect(t.Context(), "leader", "only")
	if err != nil {
		t.Fatal(err)
	}
	if !l.IsLeader() {
		t.Fatal("sole candidate does not lead")
	}
	select {
	case <-s.Expired():
		t.Fatal("expired while connected")
	default:
	}
	z.Stop()
	// With no server, ctx still bounds a call. A call issued while the
	// client is still tearing down the old connection fails with that
	// connection instead (the client's ErrConnectionClosed, or the
	// socket's own error, such as a reset, when the request was being
	// written as the server died); the next ones wait for a server and
	// must end with the context.
	for attempt := 0; attempt < 5; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err = s.Get(ctx, "leader")
		cancel()
		var netErr *net.OpError
		if !errors.Is(err, zk.ErrConnectionClosed) && !errors.As(err, &netErr) {
			break
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get with no server: %v, want the context's deadline", err)
	}
	select {
	case <-s.Expired():
	case <-time.After(waitTimeout):
		t.Fatal("Expired not closed after the server went away")
	}
	sessiontest.WaitEnded(t, l, "only")
}

// TestSessionConformance: the registration and election checks every
// cluster.Session passes (the in-memory one of package sessiontest too).
func TestSessionConformance(t *testing.T) {
	sessiontest.RunSessionTests(t, func(t *testing.T) func() cluster.Session {
		root := testRoot(t)
		return func() cluster.Session { return openAt(t, root, 10*time.Second) }
	})
}

// TestReadsRideOutAServerRestart: reads issued while the server is down
// (as a busy or restarting ZooKeeper looks to its clients) are tried
// again until it is back, and then answer; the session, its registration
// included, survives the restart.
func TestReadsRideOutAServerRestart(t *testing.T) {
	z, err := clustertest.NewZooKeeper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer z.Stop()
	s, err := zkstore.Open([]string{z.Addr}, "/sluice", 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(t.Context(), "nodes/a", []byte("a")); err != nil {
		t.Fatal(err)
	}

	z.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	type result struct {
		get  cluster.KV
		list []cluster.KV
		err  error
	}
	const readers = 4
	results := make(chan result, readers)
	for range readers {
		go func() {
			var r result
			if r.get, r.err = s.Get(ctx, "k"); r.err == nil {
				r.list, r.err = s.List(ctx, "nodes")
			}
			results <- r
		}()
	}
	if err := z.Restart(); err != nil {
		t.Fatal(err)
	}
	for range readers {
		r := <-results
		if r.err != nil {
			t.Fatalf("a read across the restart: %v", r.err)
		}
		if string(r.get.Value) != "v" || len(r.list) != 1 || string(r.list[0].Value) != "a" {
			t.Fatalf("after the restart: Get %q, List %v", r.get.Value, r.list)
		}
	}
	select {
	case <-s.Expired():
		t.Fatal("the session expired across a restart shorter than its timeout")
	default:
	}
}
