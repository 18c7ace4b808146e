package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	sched "github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestMesosUpdate is the update plan's proof on the fake Mesos master
// (no real Mesos runs here): `sluice scheduler` deploys a controller and
// three nodes; a writer and a reader keep going while the scheduler is
// stopped and started again with more cpus and memory per node (what a
// package update does). The update rolls through the nodes one at a
// time, each handed over, killed and relaunched in place on a grown
// reservation; it is paused after the first node (`sluice cluster
// pause`: the next node does not start) and resumed (`sluice cluster
// resume`). The master's call log shows that no node was killed before
// the one before it was relaunched, every node's new task has the new
// resources and its reservation was resized; every acknowledged event
// is read back exactly once, in order per key.
func TestMesosUpdate(t *testing.T) {
	zk := clustertest.StartZooKeeper(t)
	// Three ports an agent: a controller and a node take one each.
	m := fakeMesos(t, mesostest.Auth{}, 3, 3)
	tier2 := t.TempDir()
	startScheduler := func(nodeCPUs, nodeMem string) (*proctest.Proc, *scheduler.Client, string) {
		t.Helper()
		return startMesosScheduler(t, "scheduler", m, zk, nil,
			"--name", "sluice", "--role", "sluice-role", "--principal", "sluice-principal", "--zk-root", "/dcos-service-sluice",
			"--nodes", "3", "--node-cpus", nodeCPUs, "--node-mem", nodeMem, "--node-disk", "512", "--node-port", "0",
			"--containers", "6", "--tier2", "file://"+tier2, "--hdfs-config-url", "",
			"--heads", "0", "--nfs-heads", "0", "--s3-heads", "0")
	}
	ctx := context.Background()
	s, sc, _ := startScheduler("0.5", "256")
	deployed := func() (bool, string) {
		p, err := sc.Plan(ctx)
		if err != nil {
			return false, err.Error()
		}
		return p.Status == plan.Complete && len(p.Phases) == 2, fmt.Sprintf("%+v", p)
	}
	waitFor(t, "deployed", 2*waitTimeout, deployed)
	eps, err := sc.Endpoints(ctx)
	if err != nil || len(eps.Controllers) != 1 || len(eps.Nodes) != 3 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}
	ctl := eps.Controllers[0]
	nodesServing := func(n int) func() (bool, string) {
		return func() (bool, string) {
			l, err := controllerNodes(ctl)
			if err != nil {
				return false, err.Error()
			}
			ok := 0
			for _, nd := range l.Nodes {
				if nd.Live && !nd.Draining && len(nd.Containers) > 0 && len(nd.Moving) == 0 {
					ok++
				}
			}
			return ok == n, fmt.Sprintf("%+v", l)
		}
	}
	waitFor(t, "three nodes serving", waitTimeout, nodesServing(3))

	cli(t, "", "--controller", ctl, "scope", "create", "e2e")
	cli(t, "", "--controller", ctl, "stream", "create", "e2e/live", "--segments", "6")
	cl, err := client.New(ctx, ctl)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ld := startLoad(t, ctx, cl, "e2e", "live")
	ld.progress("before the update")
	before := podsByName(t, sc)

	// The package update: the scheduler restarts with bigger nodes.
	s.Stop(t, waitTimeout)
	s, sc, api := startScheduler("1", "384")
	// Pause as soon as node-0's step has begun: it finishes, node-1's
	// does not start.
	waitFor(t, "node-0's update step", 2*waitTimeout, func() (bool, string) {
		p, err := sc.Plan(ctx)
		if err != nil {
			return false, err.Error()
		}
		st, ok := updateStep(p, "node-0")
		return ok && st.Status == plan.Starting, fmt.Sprintf("%+v", p)
	})
	if out := cli(t, "", "cluster", "pause", "--scheduler", api); !strings.Contains(out, "paused") {
		t.Fatalf("cluster pause printed:\n%s", out)
	}
	waitFor(t, "node-0 updated and ready", 2*waitTimeout, func() (bool, string) {
		p, err := sc.Plan(ctx)
		if err != nil {
			return false, err.Error()
		}
		_, n0 := updateStep(p, "node-0")
		n1, ok := updateStep(p, "node-1")
		return p.Paused && !n0 && ok && n1.Status == plan.Pending && n1.Waiting == "paused", fmt.Sprintf("%+v", p)
	})
	ld.progress("while paused")
	paused := podsByName(t, sc)
	if paused["node-0"].TaskID == before["node-0"].TaskID {
		t.Fatal("node-0 was not relaunched")
	}
	for _, n := range []string{"controller-0", "node-1", "node-2"} {
		if paused[n].TaskID != before[n].TaskID {
			t.Fatalf("%s relaunched while paused: %s -> %s", n, before[n].TaskID, paused[n].TaskID)
		}
	}
	cli(t, "", "cluster", "resume", "--scheduler", api)
	waitFor(t, "the update done", 4*waitTimeout, deployed)
	waitFor(t, "three nodes serving again", waitTimeout, nodesServing(3))
	ld.progress("after the update")
	total, wait := ld.finish(ctx)
	t.Logf("e2e/live: %d events written through the update, each read once and in order per key; the longest wait for one ack was %v", total, wait)

	after := podsByName(t, sc)
	if after["controller-0"].TaskID != before["controller-0"].TaskID {
		t.Fatalf("the controller was restarted: %s -> %s", before["controller-0"].TaskID, after["controller-0"].TaskID)
	}
	// From the master's call log: node-i's KILL, then its relaunch (an
	// ACCEPT with a RESERVE of the growth and the LAUNCH), then node-i+1's
	// KILL: never two nodes down at once.
	var seq []string
	for _, c := range m.Calls() {
		switch c.Type {
		case sched.Call_KILL:
			if strings.HasPrefix(c.Kill.TaskID.Value, "node-") {
				seq = append(seq, "kill "+c.Kill.TaskID.Value)
			}
		case sched.Call_ACCEPT:
			reserve := false
			for _, op := range c.Accept.Operations {
				if op.Type == mesos.Offer_Operation_RESERVE {
					reserve = true
				}
				if op.Type != mesos.Offer_Operation_LAUNCH {
					continue
				}
				for _, ti := range op.Launch.TaskInfos {
					if !strings.HasPrefix(ti.TaskID.Value, "node-") || strings.HasSuffix(ti.TaskID.Value, "__1") {
						continue
					}
					seq = append(seq, fmt.Sprintf("launch %s reserve=%v", ti.TaskID.Value, reserve))
				}
			}
		}
	}
	want := []string{
		"kill " + before["node-0"].TaskID, "launch " + after["node-0"].TaskID + " reserve=true",
		"kill " + before["node-1"].TaskID, "launch " + after["node-1"].TaskID + " reserve=true",
		"kill " + before["node-2"].TaskID, "launch " + after["node-2"].TaskID + " reserve=true",
	}
	if strings.Join(seq, "\n") != strings.Join(want, "\n") {
		t.Fatalf("node kills and relaunches:\n%s\nwant\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
	for _, n := range []string{"node-0", "node-1", "node-2"} {
		p := after[n]
		if p.AgentID != before[n].AgentID {
			t.Fatalf("%s moved from %s to %s", n, before[n].AgentID, p.AgentID)
		}
		tv, ok := m.Task(p.TaskID)
		if !ok || tv.State != mesos.TASK_RUNNING {
			t.Fatalf("%s: master has %+v", n, tv)
		}
		// The pod's resources are its task's and its executor's together.
		cpus, mem := mesostest.CPUsMem(tv.Resources)
		for _, ev := range m.Executors() {
			if ev.ID == tv.ExecutorID {
				ec, em := mesostest.CPUsMem(ev.Resources)
				cpus, mem = cpus+ec, mem+em
			}
		}
		if math.Abs(cpus-1) > 1e-9 || math.Abs(mem-384) > 1e-9 {
			t.Fatalf("%s's task and executor have cpus %g mem %g, want 1 and 384", n, cpus, mem)
		}
		av, err := m.Agent(p.AgentID)
		if err != nil {
			t.Fatal(err)
		}
		if cpus, mem := mesostest.CPUsMem(mesostest.ReservedWith(av.Reserved, plan.LabelPod, n)); cpus != 1 || mem != 384 {
			t.Fatalf("%s's reservation on %s holds cpus %g mem %g, want 1 and 384", n, p.AgentID, cpus, mem)
		}
	}
	if errs := m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
	s.Stop(t, waitTimeout)
}

// podsByName lists the scheduler's pods by name.
func podsByName(t *testing.T, sc *scheduler.Client) map[string]scheduler.PodInfo {
	t.Helper()
	ps, err := sc.Pods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]scheduler.PodInfo{}
	for _, p := range ps {
		out[p.Name] = p
	}
	return out
}

// updateStep returns pod's step in the plan's "update" phase.
func updateStep(p scheduler.PlanView, pod string) (scheduler.PlanStep, bool) {
	for _, ph := range p.Phases {
		if ph.Name != "update" {
			continue
		}
		for _, st := range ph.Steps {
			if st.Pod == pod {
				return st, true
			}
		}
	}
	return scheduler.PlanStep{}, false
}
