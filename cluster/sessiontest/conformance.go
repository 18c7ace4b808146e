package sessiontest

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
)

// waitTimeout bounds each wait of the conformance checks; only a failing
// test waits that long.
const waitTimeout = 30 * time.Second

// RunSessionTests checks what the cluster roles rely on of a
// cluster.Session beyond the Store (which clustertest.RunStoreTests
// checks): registration, and elections ended by Resign or Close. Expiry
// is left to each backend's own tests (ZooKeeper's needs its server
// stopped). newBackend is called once per check and returns an opener of
// sessions that share one backend (the same keys and elections, empty at
// first); the sessions are closed when t ends (a second Close must be
// harmless).
func RunSessionTests(t *testing.T, newBackend func(t *testing.T) func() cluster.Session) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func() cluster.Session)
	}{
		{"RegisterIsExclusive", testRegisterExclusive},
		{"RegistrationGoesWithClose", testRegistrationGoesWithClose},
		{"DeleteEndsRegistration", testDeleteEndsRegistration},
		{"ElectionInOrder", testElectionInOrder},
		{"CloseEndsCandidacy", testCloseEndsCandidacy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBackend(t)) })
	}
}

func testRegisterExclusive(t *testing.T, open func() cluster.Session) {
	a, b := open(), open()
	ctx := t.Context()
	if err := a.Register(ctx, "nodes/n1", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Register(ctx, "nodes/n1", []byte("b")); !errors.Is(err, cluster.ErrExists) {
		t.Fatalf("Register of a registered key = %v, want ErrExists", err)
	}
	if _, err := a.Put(ctx, "nodes/n1", []byte("a2")); err != nil {
		t.Fatal(err)
	}
	if kv, err := b.Get(ctx, "nodes/n1"); err != nil || string(kv.Value) != "a2" {
		t.Fatalf("Get of the registration = %q, %v; want a2", kv.Value, err)
	}
}

// waitGone waits until key is deleted, as seen by s.
func waitGone(t *testing.T, s cluster.Session, key string) {
	t.Helper()
	ch, err := s.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(waitTimeout)
	for {
		if _, err := s.Get(t.Context(), key); errors.Is(err, cluster.ErrNotFound) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s still there", key)
		}
	}
}

func testRegistrationGoesWithClose(t *testing.T, open func() cluster.Session) {
	a, b := open(), open()
	ctx := t.Context()
	if err := a.Register(ctx, "nodes/n1", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, b, "nodes/n1")
	if _, err := b.Get(ctx, "nodes"); err != nil {
		t.Fatalf("the parent of a registration after its session: %v", err)
	}
	if err := b.Register(ctx, "nodes/n1", []byte("b")); err != nil {
		t.Fatalf("Register after the first session closed: %v", err)
	}
}

func testDeleteEndsRegistration(t *testing.T, open func() cluster.Session) {
	a, b := open(), open()
	ctx := t.Context()
	if err := a.Register(ctx, "nodes/n1", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, "nodes/n1", cluster.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if err := b.Register(ctx, "nodes/n1", []byte("b")); err != nil {
		t.Fatalf("Register after Delete: %v", err)
	}
	// a's session ending does not take b's registration with it.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if kv, err := b.Get(ctx, "nodes/n1"); err != nil || string(kv.Value) != "b" {
		t.Fatalf("b's registration after a closed: %q, %v", kv.Value, err)
	}
}

// WaitLeads waits until l leads, failing t if its candidacy ends first
// or after a while.
func WaitLeads(t *testing.T, l cluster.Leadership, who string) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for !l.IsLeader() {
		select {
		case _, ok := <-l.Changed():
			if !ok {
				t.Fatalf("%s: candidacy ended before it led", who)
			}
		case <-deadline:
			t.Fatalf("%s did not become leader", who)
		}
	}
}

// WaitEnded waits until l's candidacy ends (Changed is closed), failing
// t if it still leads then or after a while.
func WaitEnded(t *testing.T, l cluster.Leadership, who string) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case _, ok := <-l.Changed():
			if !ok {
				if l.IsLeader() {
					t.Fatalf("%s: ended candidacy still leads", who)
				}
				return
			}
		case <-deadline:
			t.Fatalf("%s: candidacy did not end", who)
		}
	}
}

func testElectionInOrder(t *testing.T, open func() cluster.Session) {
	a, b := open(), open()
	ctx := t.Context()
	la, err := a.Elect(ctx, "election", "A")
	if err != nil {
		t.Fatal(err)
	}
	if !la.IsLeader() {
		t.Fatal("the first candidate does not lead when Elect returns")
	}
	lb, err := b.Elect(ctx, "election", "B")
	if err != nil {
		t.Fatal(err)
	}
	if lb.IsLeader() {
		t.Fatal("the second candidate leads beside the first")
	}
	if err := la.Resign(); err != nil {
		t.Fatal(err)
	}
	if la.IsLeader() {
		t.Fatal("IsLeader after Resign")
	}
	WaitEnded(t, la, "A")
	WaitLeads(t, lb, "B")
	if err := la.Resign(); err != nil {
		t.Fatalf("second Resign: %v", err)
	}
}

func testCloseEndsCandidacy(t *testing.T, open func() cluster.Session) {
	a, b := open(), open()
	ctx := t.Context()
	la, err := a.Elect(ctx, "election", "A")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Elect(ctx, "election", "B")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	WaitEnded(t, la, "A")
	WaitLeads(t, lb, "B")
}
