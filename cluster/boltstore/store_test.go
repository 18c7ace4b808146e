package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/cluster/clustertest"
)

func open(t *testing.T) cluster.Store {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	clustertest.RunStoreTests(t, open)
}

// TestReopen checks that data and the version counter survive a reopen,
// so a key re-created after a restart still gets a new version.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.Put(ctx, "a/b", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a/b", old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "kept", []byte("k")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kv, err := s.Get(ctx, "kept")
	if err != nil || string(kv.Value) != "k" {
		t.Fatalf("after reopen: %+v, %v", kv, err)
	}
	v, err := s.Create(ctx, "a/b", []byte("again"))
	if err != nil {
		t.Fatal(err)
	}
	if v <= old {
		t.Fatalf("re-created key after reopen got version %d, not above %d", v, old)
	}
	if _, err := s.CompareAndSet(ctx, "a/b", nil, old); !errors.Is(err, cluster.ErrVersionMismatch) {
		t.Fatalf("CompareAndSet with the pre-delete version: %v", err)
	}
}

// TestSecondOpenFails checks that a second Open of a file in use fails
// (bbolt's file lock) instead of hanging.
func TestSecondOpenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := boltstore.Open(path); err == nil {
		s2.Close()
		t.Fatal("second Open of a file in use succeeded")
	}
}
