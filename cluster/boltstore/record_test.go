package boltstore_test

import (
	"bytes"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/cluster/clustertest"
)

// damager writes a store's file behind its back: it closes the store,
// changes a value with bbolt directly and opens the store again.
type damager struct{ path string }

func (d damager) Damage(t *testing.T, s cluster.Store, key string, fn func([]byte) []byte) (cluster.Store, error) {
	t.Helper()
	if s != nil {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(d.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sluice.cluster.v2"))
		return b.Put([]byte(key), fn(bytes.Clone(b.Get([]byte(key)))))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(d.path)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { st.Close() })
	return st, nil
}

func TestRecords(t *testing.T) {
	clustertest.RunRecordTests(t, func(t *testing.T) (cluster.Store, clustertest.Damager) {
		path := filepath.Join(t.TempDir(), "meta.db")
		s, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, damager{path}
	})
}
