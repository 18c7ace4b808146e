package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
)

// TestClusterDiskLoss: a node is killed (SIGKILL) once every event
// written is in tier 2, its data directory is deleted while it is down,
// and it is started again under its id on the empty directory. It
// rebuilds its containers from their recovery records in tier 2: every
// event of every stream is read back exactly once, and every stream takes
// new events after the old ones.
func TestClusterDiskLoss(t *testing.T) {
	zkAddr := clustertest.StartZooKeeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tier2 := t.TempDir()
	dirs := map[string]string{"n1": t.TempDir(), "n2": t.TempDir()}
	procs := map[string]interface{ Kill() }{}
	for _, id := range []string{"n1", "n2"} {
		procs[id], _ = startTieredNode(t, zkAddr, id, dirs[id], tier2)
	}
	p := start(t, "controller c1", nil, "--log-level", "info", "controller",
		"--listen", "127.0.0.1:0", "--containers", fmt.Sprint(containers),
		"--zk", zkAddr, "--zk-root", root, "--zk-session-timeout", sessionTimeout.String(), "--id", "c1")
	url := "http://" + p.Line(t, "controller listening on ", waitTimeout)
	ctl := ctlclient.NewClient(url)
	waitFor(t, "both nodes to hold containers", waitTimeout, func() (bool, string) {
		return nodesSettled(ctx, ctl, func(n map[string]int) bool { return n["n1"] == 2 && n["n2"] == 2 })
	})

	cli(t, "", "--controller", url, "scope", "create", "e2e")
	const streams = 8
	written := map[string][]string{}
	for i := range streams {
		name := fmt.Sprintf("s%d", i)
		cli(t, "", "--controller", url, "stream", "create", "e2e/"+name, "--segments", "1", "--tier-max-lag", "500ms")
		written[name] = streamEvents(name, 0, 30)
		writeTo(t, url, name, written[name])
	}
	// In tier 2, by the nodes' account: in chunks and in their
	// container's recovery record.
	for name := range written {
		waitTieredStream(t, ctl, name)
	}
	owner := map[int]string{}
	nodes, err := ctl.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		for _, c := range n.Containers {
			owner[c] = n.ID
		}
	}
	onNode, segOf := streamsByNode(t, ctl, owner, written)
	victim := onNode["s0"]
	t.Logf("streams by node: %v; %s loses its disk", onNode, victim)

	procs[victim].Kill()
	if err := os.RemoveAll(dirs[victim]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dirs[victim], 0o755); err != nil {
		t.Fatal(err)
	}
	startTieredNode(t, zkAddr, victim, dirs[victim], tier2)
	cs := &conns{m: map[string]*segclient.Conn{}}
	defer cs.close()
	c := &cluster{t: t, ctx: ctx, api: ctl, conns: cs}
	waitFor(t, victim+"'s streams served again", waitTimeout, func() (bool, string) {
		for name, seg := range segOf {
			if _, ok, why := c.served(seg); !ok {
				return false, fmt.Sprintf("e2e/%s: %s", name, why)
			}
		}
		return true, ""
	})

	restored := 0
	for name, want := range written {
		got := readStream(t, url, name, len(want), "30s")
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("e2e/%s (on %s) after the disk loss: read %v, wrote %v", name, onNode[name], got, want)
		}
		if onNode[name] == victim {
			restored += len(got)
		}
	}
	t.Logf("%d events of %s's containers restored from tier 2", restored, victim)
	for name, want := range written {
		more := streamEvents(name, 30, 10)
		writeTo(t, url, name, more)
		all := append(append([]string(nil), want...), more...)
		got := readStream(t, url, name, len(all), "30s")
		if strings.Join(got, ",") != strings.Join(all, ",") {
			t.Fatalf("e2e/%s (on %s) after writing again: read %v, want %v", name, onNode[name], got, all)
		}
	}
}

// streamsByNode returns, for each one-segment stream e2e/NAME of
// written, the node that serves it (owner: container -> node) and its
// segment, as the controller ctl says.
func streamsByNode[V any](t *testing.T, ctl *ctlclient.Client, owner map[int]string, written map[string]V) (onNode, segOf map[string]string) {
	t.Helper()
	ctx := context.Background()
	onNode, segOf = map[string]string{}, map[string]string{}
	for name := range written {
		segs, err := ctl.CurrentSegments(ctx, "e2e", name)
		if err != nil || len(segs) != 1 {
			t.Fatalf("segments of e2e/%s: %v, %v", name, segs, err)
		}
		uri, err := ctl.SegmentURI(ctx, segs[0].Segment)
		if err != nil {
			t.Fatal(err)
		}
		onNode[name], segOf[name] = owner[uri.Container], segs[0].Segment
	}
	return onNode, segOf
}
