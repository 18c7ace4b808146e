package leader_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/controller/leader"
)

// These tests drive the leader's decisions on in-memory sessions
// (package cluster/sessiontest): no ZooKeeper server.

// opener opens sessions on srv, each only once the test lets it.
type opener struct {
	srv    *sessiontest.Server
	allow  chan struct{}             // one value per Reopen the test lets through
	opened chan *sessiontest.Session // each session Reopen returned
}

func newOpener(srv *sessiontest.Server) *opener {
	return &opener{srv: srv, allow: make(chan struct{}, 8), opened: make(chan *sessiontest.Session, 8)}
}

func (o *opener) open(ctx context.Context) (cluster.Session, error) {
	select {
	case <-o.allow:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s := o.srv.Open()
	o.opened <- s
	return s, nil
}

func startOn(t *testing.T, s *sessiontest.Session, o *opener, id string, r leader.Resumer) *leader.Member {
	t.Helper()
	m, err := leader.Start(t.Context(), leader.Config{
		Store: s, Reopen: o.open,
		ID: id, Addr: "127.0.0.1:80" + id[len(id)-1:], Containers: containers, Service: r,
		ReconcileInterval: 50 * time.Millisecond, ResumeInterval: time.Hour, Logger: quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func wantLeaderID(t *testing.T, s *sessiontest.Session, want string) {
	t.Helper()
	if id, err := s.Leader(t.Context(), layout.ElectionKey); err != nil || id != want {
		t.Fatalf("Leader = %q, %v; want %q", id, err, want)
	}
}

// TestExpiryEndsLeadingUntilANewSession: the leader stops leading when its
// session expires (its registration is gone and it stays a follower while
// no new session opens), then registers on a new session, leads again
// and resumes workflows.
func TestExpiryEndsLeadingUntilANewSession(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	o := newOpener(srv)
	first := srv.Open()
	var r resumer
	c := startOn(t, first, o, "c1", &r)
	waitFor(t, "c1 leads and resumes", func() bool { return c.IsLeader() && r.calls.Load() > 0 })
	wantLeaderID(t, obs, "c1")

	first.Expire()
	waitFor(t, "c1 stops leading after its session expired", func() bool { return !c.IsLeader() })
	if _, err := obs.Get(t.Context(), layout.ControllerKey("c1")); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("registration after expiry: %v", err)
	}
	if _, err := obs.Leader(t.Context(), layout.ElectionKey); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("a candidate remains after expiry: %v", err)
	}
	if c.IsLeader() {
		t.Fatal("leads again before a new session opened")
	}

	calls := r.calls.Load()
	o.allow <- struct{}{}
	second := <-o.opened
	waitFor(t, "c1 leads again on the new session and resumes", func() bool { return c.IsLeader() && r.calls.Load() > calls })
	if c.Store() != cluster.Session(second) {
		t.Fatal("Store is not the new session")
	}
	if _, err := first.Get(t.Context(), layout.ElectionKey); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("the expired session: Get = %v, want ErrClosed", err)
	}
	if _, err := obs.Get(t.Context(), layout.ControllerKey("c1")); err != nil {
		t.Fatalf("registration on the new session: %v", err)
	}
	wantLeaderID(t, obs, "c1")
}

// TestFollowerTakesOverOnExpiry: when the leader's session expires the
// next candidate leads and assigns; the old leader comes back as a
// follower.
func TestFollowerTakesOverOnExpiry(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	o := newOpener(srv)
	s1 := srv.Open()
	var r1, r2 resumer
	c1 := startOn(t, s1, o, "c1", &r1)
	waitFor(t, "c1 leads", c1.IsLeader)
	c2 := startOn(t, srv.Open(), o, "c2", &r2)
	if c2.IsLeader() || r2.calls.Load() != 0 {
		t.Fatal("the second controller leads beside the first")
	}

	s1.Expire()
	waitFor(t, "c2 leads and resumes", func() bool { return c2.IsLeader() && r2.calls.Load() > 0 })
	node := srv.Open()
	defer node.Close()
	registerNode(t, node, "a")
	waitFor(t, "c2 assigns every container to a", func() bool {
		m, ok := published(t, obs)
		return ok && len(m.Of("a")) == containers
	})

	o.allow <- struct{}{}
	<-o.opened
	waitFor(t, "c1 registered again", func() bool {
		_, err := obs.Get(t.Context(), layout.ControllerKey("c1"))
		return err == nil
	})
	if c1.IsLeader() || !c2.IsLeader() {
		t.Fatalf("after c1 rejoined: c1 leads %v, c2 leads %v; want c2 only", c1.IsLeader(), c2.IsLeader())
	}
	wantLeaderID(t, obs, "c2")
}

// TestStartWaitsForAnEarlierRegistration: a controller restarted while
// its previous session's registration still exists waits for that
// session to end before it registers and stands for election.
func TestStartWaitsForAnEarlierRegistration(t *testing.T) {
	srv := sessiontest.NewServer(t)
	old := srv.Open()
	if err := old.Register(t.Context(), layout.ControllerKey("c1"), []byte(`{"id":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	s := srv.Open()
	var r resumer
	type result struct {
		m   *leader.Member
		err error
	}
	started := make(chan result, 1)
	go func() {
		m, err := leader.Start(t.Context(), leader.Config{
			Store: s, Reopen: newOpener(srv).open, ID: "c1", Addr: "127.0.0.1:8001",
			Containers: containers, Service: &r, Logger: quiet(),
		})
		started <- result{m, err}
	}()
	waitFor(t, "Start to retry the registration", func() bool {
		_, exists := s.Registers()
		return exists >= 2
	})
	select {
	case res := <-started:
		t.Fatalf("Start returned (%v) while the earlier registration exists", res.err)
	default:
	}
	if _, err := s.Leader(t.Context(), layout.ElectionKey); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("a candidate before the registration: %v", err)
	}
	old.Expire()
	res := <-started
	if res.err != nil {
		t.Fatal(res.err)
	}
	defer res.m.Close()
	waitFor(t, "c1 leads", res.m.IsLeader)
	if kv, err := s.Get(t.Context(), layout.ControllerKey("c1")); err != nil || string(kv.Value) == `{"id":"c1"}` {
		t.Fatalf("registration = %q, %v; want the new one", kv.Value, err)
	}
}

// TestCloseResignsAndUnregisters: Close stops leading, hands the election
// to the next candidate and deletes the registration.
func TestCloseResignsAndUnregisters(t *testing.T) {
	srv := sessiontest.NewServer(t)
	obs := srv.Open()
	defer obs.Close()
	o := newOpener(srv)
	var r1, r2 resumer
	c1 := startOn(t, srv.Open(), o, "c1", &r1)
	c2 := startOn(t, srv.Open(), o, "c2", &r2)
	waitFor(t, "c1 leads", c1.IsLeader)
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	if c1.IsLeader() {
		t.Fatal("closed member still leads")
	}
	if _, err := obs.Get(t.Context(), layout.ControllerKey("c1")); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("c1's registration after Close: %v", err)
	}
	waitFor(t, "c2 leads and resumes", func() bool { return c2.IsLeader() && r2.calls.Load() > 0 })
}
