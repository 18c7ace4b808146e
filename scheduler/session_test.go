package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// sessionConfig is a driver's Config on an in-memory session and a fake
// Mesos master with no agents.
func sessionConfig(t *testing.T, id string, s *sessiontest.Session) Config {
	m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond})
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	return Config{
		Name: "sluice", Role: "sluice", User: "sluice", Master: m.URL(), ZKRoot: "/sluice", ID: id,
		OpenSession: func(context.Context) (cluster.Session, error) { return s, nil },
		Spec:        plan.Spec{Controllers: 1, Nodes: 1},
		Containers:  4, Build: standIn,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, Tick: 50 * time.Millisecond,
		Logger: log,
	}
}

// TestSessionExpiryEndsRun: a scheduler waits while another leads, leads
// when that one's session expires, and ends (rather than reconnecting)
// with ErrLeadership when its own session expires; Run closes its
// session. (Whether Run names the expiry or the lost candidacy depends
// on which of the two it notices first: both end it.)
func TestSessionExpiryEndsRun(t *testing.T) {
	srv := sessiontest.NewServer(t)
	s1, s2 := srv.Open(), srv.Open()
	run := func(id string, s *sessiontest.Session) (*Driver, chan error) {
		d, err := New(sessionConfig(t, id, s))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- d.Run(t.Context()) }()
		return d, done
	}
	d1, done1 := run("s1", s1)
	waitFor(t, "s1 loads its plan", d1.loaded.Load)
	d2, done2 := run("s2", s2)
	// s2 stands behind s1, and so must not have loaded the plan: a
	// driver loads only once it leads.
	waitFor(t, "s2 stands for election", func() bool { return len(srv.Candidates(keyLeader)) == 2 })
	if d2.loaded.Load() {
		t.Fatal("s2 loaded the plan while s1 leads")
	}

	s1.Expire()
	if err := waitErr(t, "s1's Run", done1); !errors.Is(err, ErrLeadership) {
		t.Fatalf("s1's Run after its session expired = %v, want ErrLeadership", err)
	}
	if _, err := s1.Get(t.Context(), keyLeader); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("s1's session after Run: Get = %v, want ErrClosed", err)
	}
	waitFor(t, "s2 leads and loads the plan", d2.loaded.Load)

	s2.Expire()
	if err := waitErr(t, "s2's Run", done2); !errors.Is(err, ErrLeadership) {
		t.Fatalf("s2's Run after its session expired = %v, want ErrLeadership", err)
	}
}

// waitErr returns what done delivers, failing t after 30s.
func waitErr(t *testing.T, what string, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s to end", what)
		return nil
	}
}

// waitFor polls cond until it holds, failing t after 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
}
