package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// mesosRig is a fake Mesos cluster with `sluice scheduler` (the binary)
// deploying one controller and two nodes, without heads.
type mesosRig struct {
	t       *testing.T
	m       *mesostest.Master
	sc      *scheduler.Client
	ctl     string // the controller's base URL
	written []string
}

// startMesosRig adds the agents (each with four ports) and starts the
// scheduler with the node disk type given, waiting for the deploy.
func startMesosRig(t *testing.T, agents []mesostest.AgentSpec, diskType string) *mesosRig {
	t.Helper()
	zk := clustertest.StartZooKeeper(t)
	m := fakeMesosOf(t, mesostest.Auth{}, agents, 4)
	sched, sc, _ := startMesosScheduler(t, "scheduler", m, zk, nil,
		"--name", "sluice", "--role", "sluice-role", "--principal", "sluice-principal", "--zk-root", "/dcos-service-sluice",
		"--nodes", "2", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-disk-type", diskType, "--node-port", "0",
		"--containers", "4", "--tier2", "file://"+t.TempDir(), "--hdfs-config-url", "",
		"--heads", "0", "--nfs-heads", "0", "--s3-heads", "0")
	t.Cleanup(func() { sched.Stop(t, waitTimeout) })
	r := &mesosRig{t: t, m: m, sc: sc}
	waitFor(t, "deployed", 2*waitTimeout, r.deployed)
	eps, err := sc.Endpoints(context.Background())
	if err != nil || len(eps.Controllers) != 1 || len(eps.Nodes) != 2 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}
	r.ctl = eps.Controllers[0]
	r.waitNodes("both nodes registered", "node-0", "node-1")
	return r
}

func (r *mesosRig) deployed() (bool, string) {
	ctx := context.Background()
	p, err := r.sc.Plan(ctx)
	if err != nil {
		return false, err.Error()
	}
	if _, err := r.sc.Health(ctx); err != nil {
		return false, err.Error()
	}
	return p.Status == plan.Complete, fmt.Sprintf("%+v", p)
}

// waitNodes waits until the controller sees exactly the nodes named live,
// each holding a container, every container held and none moving.
func (r *mesosRig) waitNodes(what string, ids ...string) {
	r.t.Helper()
	waitFor(r.t, what, 2*waitTimeout, func() (bool, string) {
		l, err := controllerNodes(r.ctl)
		if err != nil {
			return false, err.Error()
		}
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		held := 0
		for _, n := range l.Nodes {
			if want[n.ID] && n.Live && len(n.Moving) == 0 && len(n.Containers) > 0 {
				held += len(n.Containers)
				delete(want, n.ID)
			} else if len(n.Containers) > 0 {
				return false, fmt.Sprintf("%s holds containers: %+v", n.ID, l)
			}
		}
		return len(want) == 0 && held == 4, fmt.Sprintf("%+v", l)
	})
}

// pod returns the scheduler's view of a pod.
func (r *mesosRig) pod(name string) scheduler.PodInfo {
	r.t.Helper()
	ps, err := r.sc.Pods(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	r.t.Fatalf("no pod %s in %+v", name, ps)
	return scheduler.PodInfo{}
}

// write writes events to stream e2e/s through the CLI.
func (r *mesosRig) write(evs []string) {
	r.t.Helper()
	cli(r.t, strings.Join(evs, "\n")+"\n", "--controller", r.ctl, "write", "e2e/s", "--timeout", "60s")
	r.written = append(r.written, evs...)
}

// readAll reads e2e/s back and wants every written event exactly once.
func (r *mesosRig) readAll(what string) {
	r.t.Helper()
	out := cli(r.t, "", "--controller", r.ctl, "read", "e2e/s", "--max", strconv.Itoa(len(r.written)), "--timeout", "30s")
	got := strings.Fields(out)
	sort.Strings(got)
	want := append([]string(nil), r.written...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		r.t.Fatalf("%s: read %d events, wrote %d; got %v\nwant %v", what, len(got), len(want), got, want)
	}
}

// nodeVolume is the persistent volume the fake master holds for a task.
func (r *mesosRig) nodeVolume(agentID, taskID string) (mesostest.VolumeView, bool) {
	r.t.Helper()
	tv, ok := r.m.Task(taskID)
	if !ok {
		return mesostest.VolumeView{}, false
	}
	var id string
	for _, res := range tv.Resources {
		if p := res.GetDisk().GetPersistence(); p != nil {
			id = p.ID
		}
	}
	av, err := r.m.Agent(agentID)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, v := range av.Volumes {
		if v.PersistenceID == id && id != "" {
			return v, true
		}
	}
	return mesostest.VolumeView{}, false
}

// TestMesosDecommission: the agent of a node is decommissioned (marked
// gone, as `dcos node decommission` does) once every written event is
// in tier 2. The node is relaunched on another agent with a new
// reservation and volume, and the cluster serves every container again.
//
// The relaunched node finds no local state for its containers (an empty
// volume) and rebuilds each from its newest recovery record in tier 2:
// every event of every stream, all of which were in tier 2, is read back
// exactly once, and every stream takes new events (docs/OPERATIONS.md,
// "Decommissioning an agent").
func TestMesosDecommission(t *testing.T) {
	var agents []mesostest.AgentSpec
	for i := range 3 {
		agents = append(agents, mesostest.AgentSpec{ID: fmt.Sprintf("agent-%d", i), CPUs: 4, MemMB: 4096, DiskMB: 4096})
	}
	r := startMesosRig(t, agents, "ROOT")
	ctx := context.Background()
	ctl := ctlclient.NewClient(r.ctl)
	cli(t, "", "--controller", r.ctl, "scope", "create", "e2e")
	// One segment a stream: a stream lives in one container, on one node.
	const streams = 8
	written := map[string][]string{}
	for i := range streams {
		name := fmt.Sprintf("s%d", i)
		cli(t, "", "--controller", r.ctl, "stream", "create", "e2e/"+name, "--segments", "1", "--tier-max-lag", "500ms")
		written[name] = streamEvents(name, 0, 30)
		writeTo(t, r.ctl, name, written[name])
	}
	for name := range written {
		waitTieredStream(t, ctl, name)
	}
	before := r.pod("node-0")
	// Which node serves each stream, by its segment's container.
	l, err := controllerNodes(r.ctl)
	if err != nil {
		t.Fatal(err)
	}
	owner := map[int]string{}
	for _, n := range l.Nodes {
		for _, c := range n.Containers {
			owner[c] = n.ID
		}
	}
	onNode, segOf := streamsByNode(t, ctl, owner, written)
	t.Logf("streams by node before the decommission: %v", onNode)
	if n0, n1 := countOn(onNode, "node-0"), countOn(onNode, "node-1"); n0 == 0 || n1 == 0 || n0+n1 != len(onNode) {
		t.Fatalf("streams by node %v: want some on each of node-0 and node-1", onNode)
	}

	oldVol, ok := r.nodeVolume(before.AgentID, before.TaskID)
	if !ok {
		t.Fatalf("node-0's task %s has no volume on %s", before.TaskID, before.AgentID)
	}
	if err := r.m.DecommissionAgent(before.AgentID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-0 relaunched on another agent", 2*waitTimeout, func() (bool, string) {
		p := r.pod("node-0")
		ok, why := r.deployed()
		return ok && p.AgentID != before.AgentID && p.State == plan.TaskRunning, fmt.Sprintf("%+v; %s", p, why)
	})
	after := r.pod("node-0")
	newVol, ok := r.nodeVolume(after.AgentID, after.TaskID)
	if !ok || newVol.Role != "sluice-role" {
		t.Fatalf("node-0's new task %s on %s: volume %+v", after.TaskID, after.AgentID, newVol)
	}
	if newVol.PersistenceID == oldVol.PersistenceID || newVol.Dir == oldVol.Dir {
		t.Fatalf("node-0 came back on its old volume %s", oldVol.PersistenceID)
	}
	if av, err := r.m.Agent(before.AgentID); err != nil || len(av.Reserved) != 0 || av.Up {
		t.Fatalf("the decommissioned agent: %+v, %v", av, err)
	}
	if errs := r.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
	// The controller may have been on the decommissioned agent too: ask
	// the scheduler where it is now.
	eps, err := r.sc.Endpoints(ctx)
	if err != nil || len(eps.Controllers) != 1 {
		t.Fatalf("endpoints after the decommission: %+v, %v", eps, err)
	}
	r.ctl, ctl = eps.Controllers[0], ctlclient.NewClient(eps.Controllers[0])
	r.waitNodes("the containers served again", "node-0", "node-1")
	// The registration of the lost task may still be there until its
	// session expires: wait until each stream's node, as the controller
	// names it, answers for its segment.
	cs := &conns{m: map[string]*segclient.Conn{}}
	defer cs.close()
	c := &cluster{t: t, ctx: ctx, api: ctl, conns: cs}
	waitFor(t, "every stream served", 2*waitTimeout, func() (bool, string) {
		for name, seg := range segOf {
			if _, ok, why := c.served(seg); !ok {
				return false, fmt.Sprintf("e2e/%s: %s", name, why)
			}
		}
		return true, ""
	})

	// Every event was in tier 2 before the decommission: the surviving
	// node's streams from its disk, the lost node's from the recovery
	// records its containers are rebuilt from. Each is read back exactly
	// once, and every stream takes new events after the old ones.
	for name, want := range written {
		got := readStream(t, r.ctl, name, len(want), "30s")
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("e2e/%s (on %s) after the decommission: read %v, wrote %v", name, onNode[name], got, want)
		}
	}
	for name, want := range written {
		more := streamEvents(name, 30, 10)
		writeTo(t, r.ctl, name, more)
		all := append(append([]string(nil), want...), more...)
		got := readStream(t, r.ctl, name, len(all), "30s")
		if strings.Join(got, ",") != strings.Join(all, ",") {
			t.Fatalf("e2e/%s (on %s) after writing again: read %v, want %v", name, onNode[name], got, all)
		}
	}
}

func countOn(onNode map[string]string, node string) int {
	n := 0
	for _, id := range onNode {
		if id == node {
			n++
		}
	}
	return n
}

// streamEvents are n events of one stream, numbered from from.
func streamEvents(stream string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-event-%04d", stream, from+i)
	}
	return out
}

func writeTo(t *testing.T, ctl, stream string, evs []string) {
	t.Helper()
	cli(t, strings.Join(evs, "\n")+"\n", "--controller", ctl, "write", "e2e/"+stream, "--timeout", "60s")
}

// readStream reads a stream from its start, up to max events or for
// timeout, sorted.
func readStream(t *testing.T, ctl, stream string, max int, timeout string) []string {
	t.Helper()
	got := strings.Fields(cli(t, "", "--controller", ctl, "read", "e2e/"+stream, "--max", strconv.Itoa(max), "--timeout", timeout))
	sort.Strings(got)
	return got
}

// waitTieredStream waits until every byte of e2e/stream is in tier 2,
// by the controller's account.
func waitTieredStream(t *testing.T, ctl *ctlclient.Client, stream string) {
	t.Helper()
	waitFor(t, "e2e/"+stream+" all in tier 2", 2*waitTimeout, func() (bool, string) {
		st, err := ctl.StreamTier(context.Background(), "e2e", stream)
		if err != nil {
			return false, err.Error()
		}
		return st.UntieredBytes == 0 && st.TieredBytes > 0, fmt.Sprintf("%+v", st)
	})
}

// TestMesosMountDisks: with --node-disk-type MOUNT on agents with MOUNT
// disks, each node's volume is a whole MOUNT disk; a node killed is
// relaunched in place on it, and every event is read back.
func TestMesosMountDisks(t *testing.T) {
	const diskMB = 2048
	var agents []mesostest.AgentSpec
	for i := range 3 {
		agents = append(agents, mesostest.AgentSpec{ID: fmt.Sprintf("agent-%d", i), CPUs: 4, MemMB: 4096, DiskMB: 256,
			Disks: []mesostest.AgentDisk{{Type: mesos.Resource_DiskInfo_Source_MOUNT, Root: "/mnt/disk0", SizeMB: diskMB}}})
	}
	r := startMesosRig(t, agents, "MOUNT")
	for _, name := range []string{"node-0", "node-1"} {
		p := r.pod(name)
		v, ok := r.nodeVolume(p.AgentID, p.TaskID)
		src := v.Resource.GetDisk().GetSource()
		if !ok || src.GetType() != mesos.Resource_DiskInfo_Source_MOUNT || src.GetMount().GetRoot() != "/mnt/disk0" || v.Resource.GetScalar().GetValue() != diskMB {
			t.Fatalf("%s's volume %+v: want the whole %d MB MOUNT disk at /mnt/disk0", name, v, diskMB)
		}
	}
	cli(t, "", "--controller", r.ctl, "scope", "create", "e2e")
	cli(t, "", "--controller", r.ctl, "stream", "create", "e2e/s", "--segments", "4")
	r.write(events(0, 200))
	r.readAll("after the deploy")

	before := r.pod("node-1")
	vol, _ := r.nodeVolume(before.AgentID, before.TaskID)
	if err := r.m.FailTask(before.TaskID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-1 relaunched", 2*waitTimeout, func() (bool, string) {
		p := r.pod("node-1")
		return p.TaskID != before.TaskID && p.State == plan.TaskRunning, fmt.Sprintf("%+v", p)
	})
	after := r.pod("node-1")
	now, ok := r.nodeVolume(after.AgentID, after.TaskID)
	if after.AgentID != before.AgentID || !ok || now.PersistenceID != vol.PersistenceID || now.Resource.GetScalar().GetValue() != diskMB {
		t.Fatalf("node-1 relaunched on %s with volume %+v; was on %s with %+v", after.AgentID, now, before.AgentID, vol)
	}
	r.waitNodes("node-1 serving again", "node-0", "node-1")
	r.readAll("after node-1's task was killed")
	r.write(events(200, 100))
	r.readAll("after writing again")
	if errs := r.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}
