package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/resources"

	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// standInExecutorEnv makes the test binary a v1 HTTP executor (init,
// below): launched by the fake agent as a task's custom executor, it
// subscribes, reports each task TASK_RUNNING, and ends a killed one.
const standInExecutorEnv = "SCHEDULER_TEST_EXECUTOR"

func init() {
	if os.Getenv(standInExecutorEnv) == "" {
		return
	}
	if err := (mesostest.StandInExecutor{}).Run(); err != nil {
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// executorStandIn builds each task as the scheduler does (its own
// custom executor with the executor's share of the pod's resources),
// with this test binary as the executor's program.
func executorStandIn(cfg Config) TaskBuilder {
	return func(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
		ti := cfg.executorTask(op, ep, res)
		exe, err := os.Executable()
		if err != nil {
			panic(err)
		}
		shell := false
		ti.Executor.Command = &mesos.CommandInfo{Shell: &shell, Value: &exe, Arguments: []string{exe, "-test.run=^$"},
			Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: standInExecutorEnv, Value: strPtr("1")}}}}
		return ti
	}
}

func strPtr(s string) *string { return &s }

// TestPlacement deploys 2 controllers and 2 nodes on agents in two
// zones of the master's region, one agent in another region and one
// whose ports lack the fixed ones: `hostname:LIKE:ctl-[13]` keeps the
// controllers on ctl-1 and ctl-3, `@zone:GROUP_BY:2` puts one node in
// each zone, the remote agent (offered: the scheduler is REGION_AWARE)
// and the agent without the ports get nothing. Every task holds its
// fixed port from the offer (a node's reserved with its reservation,
// and relaunched in place on it), every executor its share of the pod
// (a node's from the node's reservation), and what the agents' tasks
// and executors use is inside what they have. A third controller, for
// which no agent qualifies, waits with the reason in the plan.
func TestPlacement(t *testing.T) {
	h := newHarness(t, 0)
	h.m = mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond, Region: "eu", Zone: "eu-a"})
	h.cfg.Master = h.m.URL()
	ports := porttest.Ports(t, 2)
	nodePort, other := ports[0], ports[1]
	agents := []struct{ id, host, region, zone string }{
		{"a1", "ctl-1", "eu", "eu-a"}, {"a2", "w-a1", "eu", "eu-a"}, {"a3", "w-a2", "eu", "eu-a"},
		{"a4", "ctl-3", "eu", "eu-b"}, {"a5", "w-b1", "eu", "eu-b"},
		{"far", "ctl-9", "us", "us-1"}, {"noports", "ctl-2", "eu", "eu-b"},
	}
	for _, a := range agents {
		ps := portRanges(h.ctrl.port, nodePort)
		if a.id == "noports" {
			ps = portRanges(other)
		}
		if err := h.m.AddAgent(mesostest.AgentSpec{ID: a.id, Hostname: a.host, Region: a.region, Zone: a.zone, CPUs: 2, MemMB: 2048, DiskMB: 4096, Ports: ps,
			Attributes: map[string]string{"rack": a.id}}); err != nil {
			t.Fatal(err)
		}
	}
	h.cfg.Spec.Controllers, h.cfg.Spec.Nodes = 2, 2
	h.cfg.Spec.Placement = map[plan.PodKind]string{plan.Controller: "hostname:LIKE:ctl-[0-9]", plan.Node: `[["@zone","GROUP_BY","2"]]`}
	h.cfg.NodePort = nodePort
	h.cfg.ExecutorShare = DefaultExecutorShare
	h.cfg.Build = executorStandIn(h.cfg)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))

	zoneOf, hostOf := map[string]string{}, map[string]string{}
	for _, a := range agents {
		zoneOf[a.id], hostOf[a.id] = a.zone, a.host
	}
	pods := r.pods(t)
	var ctlHosts, nodeZones []string
	for _, p := range pods {
		switch p.Kind {
		case plan.Controller:
			ctlHosts = append(ctlHosts, hostOf[p.AgentID])
		case plan.Node:
			nodeZones = append(nodeZones, zoneOf[p.AgentID])
		}
	}
	sort.Strings(ctlHosts)
	sort.Strings(nodeZones)
	if fmt.Sprint(ctlHosts) != "[ctl-1 ctl-3]" || fmt.Sprint(nodeZones) != "[eu-a eu-b]" {
		t.Fatalf("controllers on %v, nodes in zones %v", ctlHosts, nodeZones)
	}

	// What each task and executor holds.
	share := DefaultExecutorShare
	execs := map[string]mesostest.ExecutorView{}
	for _, e := range h.m.Executors() {
		execs[e.ID] = e
	}
	for _, p := range pods {
		tv, ok := h.m.Task(p.TaskID)
		if !ok {
			t.Fatalf("no task %s", p.TaskID)
		}
		if tv.AgentID == "far" || tv.AgentID == "noports" {
			t.Fatalf("%s launched on %s", p.Name, tv.AgentID)
		}
		want, total := h.ctrl.port, h.cfg.Spec.Controller
		if p.Kind == plan.Node {
			want, total = nodePort, h.cfg.Spec.Node
		}
		if got := taskPorts(tv.Resources); fmt.Sprint(got) != fmt.Sprint([]int{want}) {
			t.Fatalf("%s ports %v, want [%d]", p.Name, got, want)
		}
		e, ok := execs[tv.ExecutorID]
		if !ok {
			t.Fatalf("%s: no executor %s running", p.Name, tv.ExecutorID)
		}
		tc, tm := scalarSum(tv.Resources, "cpus"), scalarSum(tv.Resources, "mem")
		ec, em := scalarSum(e.Resources, "cpus"), scalarSum(e.Resources, "mem")
		if !near(ec, share.CPUs) || !near(em, share.MemMB) || !near(tc+ec, total.CPUs) || !near(tm+em, total.MemMB) {
			t.Fatalf("%s: task cpus %g mem %g, executor cpus %g mem %g; the pod has %s", p.Name, tc, tm, ec, em, total)
		}
		for _, er := range e.Resources {
			if reserved := er.IsReserved(""); reserved != (p.Kind == plan.Node) {
				t.Fatalf("%s: executor resource %v reserved %v", p.Name, er, reserved)
			}
		}
	}
	for _, a := range agents {
		av, err := h.m.Agent(a.id)
		if err != nil {
			t.Fatal(err)
		}
		if !resources.ContainsAll(av.Total, av.Used) {
			t.Fatalf("agent %s uses %v, has %v", a.id, av.Used, av.Total)
		}
		if (a.id == "far" || a.id == "noports") && (len(av.Used) != 0 || len(av.Reserved) != 0) {
			t.Fatalf("agent %s holds %v, reserved %v", a.id, av.Used, av.Reserved)
		}
	}
	if w := h.m.Warnings(); len(w) != 0 {
		t.Fatalf("the master warns: %v", w)
	}

	// A node's port is reserved with its reservation: restarted, it is
	// relaunched in place on that port.
	node := pods["node-0"]
	nodePortReserved := func(taskID string) bool {
		tv, ok := h.m.Task(taskID)
		if !ok {
			return false
		}
		for _, res := range tv.Resources {
			if res.Name == "ports" && !res.IsReserved("") {
				return false
			}
		}
		return fmt.Sprint(taskPorts(tv.Resources)) == fmt.Sprint([]int{nodePort})
	}
	if !nodePortReserved(node.TaskID) {
		t.Fatalf("node-0's port is not reserved: %+v", node)
	}
	if _, err := r.c.Restart(context.Background(), "node-0"); err != nil {
		t.Fatal(err)
	}
	var again PodInfo
	eventually(t, "node-0 relaunched", func() bool {
		again = r.pods(t)["node-0"]
		return again.TaskID != node.TaskID && again.State == plan.TaskRunning
	})
	if again.AgentID != node.AgentID || !nodePortReserved(again.TaskID) {
		t.Fatalf("node-0 relaunched as %+v (was on %s)", again, node.AgentID)
	}

	// A third controller: ctl-9 is remote, ctl-2 lacks the port, and the
	// others hold a controller already.
	three := 3
	if _, err := r.c.SetCounts(context.Background(), CountsRequest{Controllers: &three}); err != nil {
		t.Fatal(err)
	}
	var waiting string
	eventually(t, "controller-2 waiting with a reason", func() bool {
		pv, err := r.c.Plan(context.Background())
		if err != nil {
			return false
		}
		for _, ph := range pv.Phases {
			for _, st := range ph.Steps {
				if st.Pod == "controller-2" {
					waiting = st.Waiting
				}
			}
		}
		return strings.Contains(waiting, "port") || strings.Contains(waiting, "region")
	})
	if p := r.pods(t)["controller-2"]; p.TaskID != "" {
		t.Fatalf("controller-2 launched: %+v", p)
	}
}

func scalarSum(rs mesos.Resources, name string) float64 {
	var sum float64
	for _, r := range rs {
		if r.Name == name {
			sum += r.GetScalar().GetValue()
		}
	}
	return sum
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestPlaceConfig: pods too small for their executor's share and
// placement constraints the plan cannot parse are refused at start,
// naming what is wrong; a share given explicitly is honoured.
func TestPlaceConfig(t *testing.T) {
	base := Config{Name: "s", Role: "r", User: "u", Master: "http://m:5050", ZK: []string{"zk:2181"}, ZKRoot: "/s", Containers: 1,
		Spec: plan.Spec{Controllers: 1, Nodes: 1, Controller: plan.Resources{CPUs: 0.5, MemMB: 256}, Node: plan.Resources{CPUs: 1, MemMB: 512, DiskMB: 1024}}}
	c, err := base.withDefaults()
	if err != nil || c.ExecutorShare != DefaultExecutorShare || fmt.Sprint(c.Spec.Ports[plan.HDFSHead]) != "[0 0 0]" {
		t.Fatalf("defaults: %v, share %s, ports %v", err, c.ExecutorShare, c.Spec.Ports)
	}
	for name, tc := range map[string]struct {
		change func(*Config)
		want   string
	}{
		"controller cpus": {func(c *Config) { c.Spec.Controller.CPUs = 0.1 }, "controller resources"},
		"node mem":        {func(c *Config) { c.Spec.Node.MemMB = 32 }, "node resources"},
		"nfs head": {func(c *Config) {
			c.Spec.NFSHeads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 1, MemMB: 30}}
		}, "nfs-head resources"},
		"bigger share":       {func(c *Config) { c.ExecutorShare = plan.Resources{CPUs: 0.5, MemMB: 64} }, "executor's share (cpus 0.5, mem 64)"},
		"bad node placement": {func(c *Config) { c.Spec.Placement = map[plan.PodKind]string{plan.Node: "@zone:GROUP_BY:two"} }, "node placement"},
	} {
		c := base
		tc.change(&c)
		if _, err := c.withDefaults(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConfig about %q", name, err, tc.want)
		}
	}
	stand := base
	stand.Spec.Controller = plan.Resources{CPUs: 0.05, MemMB: 16}
	stand.Build = standIn // no executor of ours: no share to hold
	if _, err := stand.withDefaults(); err != nil {
		t.Fatalf("stand-in builder: %v", err)
	}
}

// TestStoredPlanTakesPlacement: a stored plan takes the configured
// placement constraints on start (they only decide placements to come),
// a kind configured without one loses the stored one.
func TestStoredPlanTakesPlacement(t *testing.T) {
	cfg := Config{Name: "s", Role: "r", User: "u", Master: "http://m:5050", ZK: []string{"zk:2181"}, ZKRoot: "/s", Containers: 1,
		Spec: plan.Spec{Controllers: 1, Nodes: 1, Controller: plan.Resources{CPUs: 0.5, MemMB: 256}, Node: plan.Resources{CPUs: 1, MemMB: 512, DiskMB: 1024},
			Placement: map[plan.PodKind]string{plan.Node: "@zone:GROUP_BY:2"}}}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stored := cfg.Spec
	stored.Placement = map[plan.PodKind]string{plan.Node: "hostname:UNIQUE", plan.Controller: "rack:IS:r1"}
	p := plan.New(stored)
	d.takePlacement(p)
	if got := p.Spec().Placement; fmt.Sprint(got) != fmt.Sprint(map[plan.PodKind]string{plan.Node: "@zone:GROUP_BY:2"}) {
		t.Fatalf("placement after start: %v", got)
	}
}
