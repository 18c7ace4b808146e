package clustertest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/cluster/clustertest"
)

// TestStartZooKeeper checks that the server serves, on loopback, and is
// gone once Stop returns.
func TestStartZooKeeper(t *testing.T) {
	z, err := clustertest.NewZooKeeper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer z.Stop()
	conn, _, err := zk.Connect([]string{z.Addr}, 5*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Create("/probe", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get("/probe")
	if err != nil || string(data) != "x" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	z.Stop()
	z.Stop() // harmless twice
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
