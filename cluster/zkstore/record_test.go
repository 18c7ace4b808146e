package zkstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
)

// rawConn is a ZooKeeper session of the test's own, to write znodes
// behind a store's back.
func rawConn(t *testing.T) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect([]string{zkAddr(t)}, 10*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// damager rewrites a key's znode data directly.
type damager struct {
	conn *zk.Conn
	root string
}

func (d damager) Damage(t *testing.T, s cluster.Store, key string, fn func([]byte) []byte) (cluster.Store, error) {
	t.Helper()
	p := d.root + "/" + key
	data, stat, err := d.conn.Get(p)
	if err != nil {
		t.Fatalf("raw get %s: %v", p, err)
	}
	if _, err := d.conn.Set(p, fn(data), stat.Version); err != nil {
		t.Fatalf("raw set %s: %v", p, err)
	}
	return s, nil
}

func TestRecords(t *testing.T) {
	clustertest.RunRecordTests(t, func(t *testing.T) (cluster.Store, clustertest.Damager) {
		root := testRoot(t)
		return openAt(t, root, 10*time.Second), damager{conn: rawConn(t), root: root}
	})
}

// TestLegacyRecords: znode data written before records had an envelope
// (plain bytes, as zkCli.sh or an older version wrote them) is read as it
// is, and gets an envelope on its next write.
func TestLegacyRecords(t *testing.T) {
	root := testRoot(t)
	s := openAt(t, root, 10*time.Second)
	conn := rawConn(t)
	ctx := t.Context()
	if _, err := s.Put(ctx, "scopes/s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(root+"/scopes/s/legacy", []byte(`{"minSegments":1}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	kv, err := s.Get(ctx, "scopes/s/legacy")
	if err != nil || string(kv.Value) != `{"minSegments":1}` {
		t.Fatalf("legacy record: %q, %v", kv.Value, err)
	}
	kvs, err := s.List(ctx, "scopes/s")
	if err != nil || len(kvs) != 1 || string(kvs[0].Value) != `{"minSegments":1}` {
		t.Fatalf("List over a legacy record: %+v, %v", kvs, err)
	}
	if _, err := s.CompareAndSet(ctx, "scopes/s/legacy", []byte(`{"minSegments":2}`), kv.Version); err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get(root + "/scopes/s/legacy")
	if err != nil {
		t.Fatal(err)
	}
	if _, legacy, err := cluster.DecodeRecord("scopes/s/legacy", data); err != nil || legacy {
		t.Fatalf("after a write: legacy %v, %v; want an envelope", legacy, err)
	}
}

// TestDamagedRecordRepairedByPut: a damaged znode is refused by Get and
// by a watch (which reports nothing for it), and Put, which does not
// depend on the old value, replaces it.
func TestDamagedRecordRepairedByPut(t *testing.T) {
	root := testRoot(t)
	s := openAt(t, root, 10*time.Second)
	conn := rawConn(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const key = "scopes/s/streams/st"
	if _, err := s.Put(ctx, key, []byte(`{"minSegments":1}`)); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get(root + "/" + key)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= '1' ^ '0'
	if _, err := conn.Set(root+"/"+key, data, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, cluster.ErrCorrupt) {
		t.Fatalf("Get of a damaged znode: %v, want ErrCorrupt", err)
	}
	v, err := s.Put(ctx, key, []byte(`{"minSegments":3}`))
	if err != nil {
		t.Fatal(err)
	}
	// The watch skipped the damaged state and reports the repair.
	for {
		select {
		case ev := <-ch:
			if ev.Version == v {
				if string(ev.Value) != `{"minSegments":3}` {
					t.Fatalf("event %+v", ev)
				}
				return
			}
			if string(ev.Value) != `{"minSegments":1}` {
				t.Fatalf("watch reported %+v", ev)
			}
		case <-ctx.Done():
			t.Fatal("no event for the repair")
		}
	}
}
