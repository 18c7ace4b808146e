package sessiontest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/sessiontest"
)

func TestStoreConformance(t *testing.T) {
	clustertest.RunStoreTests(t, func(t *testing.T) cluster.Store {
		s := sessiontest.NewServer(t).Open()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestSessionConformance(t *testing.T) {
	sessiontest.RunSessionTests(t, func(t *testing.T) func() cluster.Session {
		srv := sessiontest.NewServer(t)
		return func() cluster.Session {
			s := srv.Open()
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// TestExpire: expiry deletes the session's registrations, ends its
// candidacies and closes Expired; the session then works as a new one,
// and a watch opened before it stays open.
func TestExpire(t *testing.T) {
	srv := sessiontest.NewServer(t)
	a, b := srv.Open(), srv.Open()
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	if err := a.Register(ctx, "nodes/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Register(ctx, "nodes/b", []byte("b")); err != nil {
		t.Fatal(err)
	}
	la, err := a.Elect(ctx, "election", "A")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Elect(ctx, "election", "B")
	if err != nil {
		t.Fatal(err)
	}
	watch, err := a.Watch(ctx, "nodes/b")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Expired():
		t.Fatal("Expired closed before Expire")
	default:
	}

	a.Expire()
	select {
	case <-a.Expired():
	default:
		t.Fatal("Expired not closed after Expire")
	}
	if _, err := b.Get(ctx, "nodes/a"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("a's registration after expiry: %v", err)
	}
	if _, err := b.Get(ctx, "nodes/b"); err != nil {
		t.Fatalf("b's registration after a's expiry: %v", err)
	}
	for range la.Changed() { // closed: the candidacy has ended
	}
	if la.IsLeader() || !lb.IsLeader() {
		t.Fatalf("after a's expiry: A leads %v, B leads %v; want B only", la.IsLeader(), lb.IsLeader())
	}
	if id, err := b.Leader(ctx, "election"); err != nil || id != "B" {
		t.Fatalf("Leader = %q, %v; want B", id, err)
	}

	// A new session under the same Session: it registers again, and its
	// watch still reports.
	if err := a.Register(ctx, "nodes/a", []byte("a again")); err != nil {
		t.Fatalf("Register after expiry: %v", err)
	}
	if _, err := b.Put(ctx, "nodes/b", []byte("b2")); err != nil {
		t.Fatal(err)
	}
	seen := false
	for ev := range watch {
		if seen = string(ev.Value) == "b2"; seen {
			break
		}
	}
	if !seen {
		t.Fatal("a watch opened before the expiry closed without reporting a later write")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "nodes/a"); !errors.Is(err, cluster.ErrNotFound) {
		t.Fatalf("a's second registration after Close: %v", err)
	}
	if _, err := a.Get(context.Background(), "nodes/b"); !errors.Is(err, cluster.ErrClosed) {
		t.Fatalf("Get after Close = %v, want ErrClosed", err)
	}
}
