package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// probeOf returns a segment name of container i.
func probeOf(i int) string {
	for n := int64(0); ; n++ {
		if s := protocol.SegmentName("probe", "p", n, 0); protocol.ContainerOf(s, containers) == i {
			return s
		}
	}
}

func startTieredNode(t *testing.T, zk, id, dir, tier2 string) (*proctest.Proc, string) {
	t.Helper()
	p := start(t, "node "+id, nil, "--log-level", "info", "node",
		"--data", dir, "--listen", "127.0.0.1:0", "--containers", fmt.Sprint(containers),
		"--zk", zk, "--zk-root", root, "--zk-session-timeout", sessionTimeout.String(), "--id", id,
		"--wal-preallocate=false", "--tier2", tier2)
	return p, p.Line(t, "node listening on ", waitTimeout)
}

// nodesSettled reports whether no container is moving and the number of
// containers each node holds satisfies want.
func nodesSettled(ctx context.Context, api *ctlclient.Client, want func(count map[string]int) bool) (bool, string) {
	nodes, err := api.Nodes(ctx)
	if err != nil {
		return false, err.Error()
	}
	got := map[string]int{}
	var desc []string
	for _, n := range nodes {
		if len(n.Moving) > 0 {
			return false, fmt.Sprintf("%s moving %v", n.ID, n.Moving)
		}
		got[n.ID] = len(n.Containers)
		desc = append(desc, fmt.Sprintf("%s:%v", n.ID, n.Containers))
	}
	return want(got), strings.Join(desc, " ")
}

// TestClusterHandOver: two nodes with a shared tier 2 (a directory, as an
// NFS mount would be) serve a stream while a writer and a reader keep
// going; a third node joins and containers are handed over to it; then
// the first node is drained. Every acknowledged event is read exactly
// once and in order per key, and the writer's longest wait for an ack
// (the pause a hand-over causes) is reported.
func TestClusterHandOver(t *testing.T) {
	zkAddr := clustertest.StartZooKeeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tier2 := t.TempDir()
	for _, id := range []string{"n1", "n2"} {
		startTieredNode(t, zkAddr, id, t.TempDir(), tier2)
	}
	_, ctl := startController(t, zkAddr, "c1")
	waitFor(t, "both nodes to hold containers", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool { return n["n1"] == 2 && n["n2"] == 2 })
	})
	cs := &conns{m: map[string]*segclient.Conn{}}
	defer cs.close()
	c := &cluster{t: t, ctx: ctx, api: ctl, conns: cs}
	for i := range containers {
		seg := probeOf(i)
		waitFor(t, fmt.Sprintf("container %d served", i), waitTimeout, func() (bool, string) {
			_, ok, why := c.served(seg)
			return ok, why
		})
	}
	if err := ctl.CreateScope(ctx, "ho"); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: "ho", StreamName: "st",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 8}}); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, ctl.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ld := startLoad(t, ctx, cl, "ho", "st")
	ld.progress("before any move")

	startTieredNode(t, zkAddr, "n3", t.TempDir(), tier2)
	took := waitFor(t, "containers handed over to n3", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool {
			return n["n3"] >= 1 && n["n1"] >= 1 && n["n2"] >= 1 && n["n1"]+n["n2"]+n["n3"] == containers
		})
	})
	t.Logf("rebalance onto n3 took %v", took)
	ld.progress("after the rebalance")

	if err := ctl.SetDrain(ctx, "n1", true); err != nil {
		t.Fatal(err)
	}
	took = waitFor(t, "n1 drained", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool { return n["n1"] == 0 && n["n2"] == 2 && n["n3"] == 2 })
	})
	t.Logf("draining n1 took %v", took)
	ld.progress("after the drain")
	total, wait := ld.finish(ctx)
	t.Logf("%d events acknowledged and read back once each, in order per key; the longest wait for one ack was %v", total, wait)
}
