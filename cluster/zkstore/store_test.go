package zkstore_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/zkstore"
)

// One ZooKeeper server for the package, started by the first test that
// needs it and stopped by TestMain; each test works under its own root.
var (
	zkOnce   sync.Once
	zkServer *clustertest.ZooKeeper
	zkErr    error
	zkDir    string
	rootSeq  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if zkServer != nil {
		zkServer.Stop()
	}
	if zkDir != "" {
		os.RemoveAll(zkDir)
	}
	os.Exit(code)
}

func zkAddr(t *testing.T) string {
	t.Helper()
	zkOnce.Do(func() {
		zkDir, zkErr = os.MkdirTemp("", "zkstore-test-")
		if zkErr == nil {
			zkServer, zkErr = clustertest.NewZooKeeper(zkDir)
		}
	})
	if zkErr != nil {
		t.Fatal(zkErr)
	}
	return zkServer.Addr
}

// testRoot returns a root no other test uses.
func testRoot(t *testing.T) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/sluice-test/%s-%d", name, rootSeq.Add(1))
}

func openAt(t *testing.T, root string, sessionTimeout time.Duration) *zkstore.Store {
	t.Helper()
	s, err := zkstore.Open([]string{zkAddr(t)}, root, sessionTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	clustertest.RunStoreTests(t, func(t *testing.T) cluster.Store {
		return openAt(t, testRoot(t), 10*time.Second)
	})
}

func TestOpenBadRoot(t *testing.T) {
	for _, root := range []string{"", "/", "sluice", "/sluice/", "/a//b"} {
		if s, err := zkstore.Open([]string{zkAddr(t)}, root, 5*time.Second, nil); err == nil {
			s.Close()
			t.Errorf("Open with root %q succeeded", root)
		}
	}
}

// TestTwoClients checks that a write through one session is seen, and
// watched, through another: what in-process notification cannot give.
func TestTwoClients(t *testing.T) {
	root := testRoot(t)
	a, b := openAt(t, root, 10*time.Second), openAt(t, root, 10*time.Second)
	ctx := t.Context()
	ch, err := b.Watch(ctx, "shared/k")
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Put(ctx, "shared/k", []byte("from a"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Deleted || ev.Version != v || string(ev.Value) != "from a" {
			t.Fatalf("b saw %+v, want from a v%d", ev, v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b saw no event for a's write")
	}
	kv, err := b.Get(ctx, "shared/k")
	if err != nil || kv.Version != v {
		t.Fatalf("b.Get = %+v, %v", kv, err)
	}
}
