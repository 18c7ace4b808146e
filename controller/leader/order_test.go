package leader

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/cluster/layout"
)

// firstRead runs hook once, after the first read of the store (Get or
// List) returns: what other writers do while a round is between reads.
type firstRead struct {
	cluster.Store
	once sync.Once
	hook func()
}

func (f *firstRead) Get(ctx context.Context, key string) (cluster.KV, error) {
	kv, err := f.Store.Get(ctx, key)
	f.once.Do(f.hook)
	return kv, err
}

func (f *firstRead) List(ctx context.Context, key string) ([]cluster.KV, error) {
	kvs, err := f.Store.List(ctx, key)
	f.once.Do(f.hook)
	return kvs, err
}

// TestReconcileSeesNodesAsNewAsTheMap: a node registers and then a
// container is cleared, both between two reads of one reconcile round.
// Whatever that round publishes must not give the container to a node
// chosen without the new one: the round reads the map before the nodes,
// so nodes are never older than the map it changes. (Reading the nodes
// first gave the container to the only node it knew, a, under load.)
func TestReconcileSeesNodesAsNewAsTheMap(t *testing.T) {
	ctx := t.Context()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	register := func(id string) {
		b, _ := json.Marshal(map[string]string{"id": id})
		if _, err := st.Put(ctx, layout.NodesKey+"/"+id, b); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	m := &Member{cfg: Config{Containers: 4, MaxMoves: DefaultMaxMoves}, log: log}

	register("a")
	if err := m.Reconcile(ctx, st); err != nil {
		t.Fatal(err)
	}
	clearAndJoin := func() {
		register("b")
		kv, err := st.Get(ctx, layout.AssignmentKey)
		if err != nil {
			t.Fatal(err)
		}
		am, err := layout.Parse(kv.Value, 4)
		if err != nil {
			t.Fatal(err)
		}
		am.Containers[2] = layout.Owner{Epoch: am.Containers[2].Epoch}
		if _, err := st.CompareAndSet(ctx, layout.AssignmentKey, am.Encode(), kv.Version); err != nil {
			t.Fatal(err)
		}
	}
	racing := &firstRead{Store: st, hook: clearAndJoin}
	if err := m.Reconcile(ctx, racing); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(ctx, st); err != nil { // a later round, if that one saw the map before the change
		t.Fatal(err)
	}
	kv, err := st.Get(ctx, layout.AssignmentKey)
	if err != nil {
		t.Fatal(err)
	}
	am, err := layout.Parse(kv.Value, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := am.Containers[2]; got.Node != "b" {
		t.Fatalf("container 2 went to %+v; want b, the least loaded node live when it was cleared", got)
	}
}
