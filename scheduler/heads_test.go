package scheduler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// commands records the executor command line the scheduler would give
// each task (TaskCommand), for tests whose TaskBuilder runs a stand-in.
type commands struct {
	cfg Config
	mu  struct {
		sync.Mutex
		cmds map[string]string // task id -> command
	}
}

func newCommands(cfg Config) *commands {
	c := &commands{cfg: cfg}
	c.mu.cmds = map[string]string{}
	return c
}

// record keeps op's command line and returns it.
func (c *commands) record(op plan.Op, ep Endpoint) mesos.CommandInfo {
	ci := c.cfg.TaskCommand(op, ep)
	c.mu.Lock()
	c.mu.cmds[op.TaskID] = ci.GetValue()
	c.mu.Unlock()
	return ci
}

// args is the recorded command of a task as the shell splits it.
func (c *commands) args(t *testing.T, taskID string) []string {
	t.Helper()
	c.mu.Lock()
	cmd, ok := c.mu.cmds[taskID]
	c.mu.Unlock()
	if !ok {
		t.Fatalf("no command recorded for %s", taskID)
	}
	return shellWords(t, cmd)
}

// headRecorder is a TaskBuilder: it records the HDFS heads' commands and
// runs the stand-in.
type headRecorder struct{ *commands }

func (r headRecorder) build(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
	if op.PodKind == plan.HDFSHead {
		r.record(op, ep)
	}
	return standIn(op, ep, res)
}

// shellWords are the arguments the shell makes of an executor command
// (without the leading "./sluice").
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", "set -- "+strings.TrimPrefix(cmd, "./sluice ")+`; printf '%s\n' "$@"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// taskPorts lists the ports resources of a task the master runs.
func taskPorts(res mesos.Resources) []int {
	var out []int
	for _, r := range res {
		if r.Name != "ports" || r.Ranges == nil {
			continue
		}
		for _, rg := range r.Ranges.Range {
			for p := rg.Begin; p <= rg.End; p++ {
				out = append(out, int(p))
			}
		}
	}
	sort.Ints(out)
	return out
}

// portRanges are ports as an offer's ranges, one port each, sorted.
func portRanges(ports ...int) []mesos.Value_Range {
	var out []mesos.Value_Range
	for _, p := range ports {
		out = append(out, mesos.Value_Range{Begin: uint64(p), End: uint64(p)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Begin < out[b].Begin })
	return out
}

// addPortAgents adds agents a0...a<n-1> on 127.0.0.1 to h's master, each
// offering 2 CPUs, 2 GiB of memory, 4 GiB of disk and exactly ports.
func addPortAgents(t *testing.T, h *harness, n int, ports ...int) {
	t.Helper()
	for i := range n {
		if err := h.m.AddAgent(mesostest.AgentSpec{ID: fmt.Sprintf("a%d", i), Hostname: "127.0.0.1", CPUs: 2, MemMB: 2048, DiskMB: 4096, Ports: portRanges(ports...)}); err != nil {
			t.Fatal(err)
		}
	}
}

// openStore opens h's ZooKeeper root, closed when t ends.
func openStore(t *testing.T, h *harness) *zkstore.Store {
	t.Helper()
	zst := h.store(t)
	return zst
}

// storeOldPlan stores the plan in file (plan/testdata) as h's service's
// plan, as an older scheduler left it, and returns the store.
func storeOldPlan(t *testing.T, h *harness, file string) *zkstore.Store {
	t.Helper()
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	zst := openStore(t, h)
	if _, err := zst.Create(context.Background(), keyPlan, old); err != nil {
		t.Fatal(err)
	}
	return zst
}

// TestHeads deploys a controller, a node and an HDFS head on the fake
// master with fixed head ports offered by every agent: the head is
// launched once the controller runs, with the hdfs-gateway command line
// and its three ports, is published in the pods, plan and endpoints,
// is relaunched when it fails, is left alone when its controller
// restarts at the same address, and is scaled up, then down to none.
func TestHeads(t *testing.T) {
	h := newHarness(t, 0)
	ps := porttest.Ports(t, 4)
	nodePort, rpc, data, web := ps[0], ps[1], ps[2], ps[3]
	addPortAgents(t, h, 2, h.ctrl.port, nodePort, rpc, data, web)
	h.cfg.Spec.Nodes, h.cfg.Spec.Heads = 1, 1
	h.cfg.Spec.Head = plan.Resources{CPUs: 0.25, MemMB: 128}
	h.cfg.NodePort, h.cfg.HeadRPCPort, h.cfg.HeadDataPort, h.cfg.HeadHTTPPort = nodePort, rpc, data, web
	h.cfg.Binary = "./sluice"
	rec := headRecorder{newCommands(h.cfg)}
	h.cfg.Build = rec.build
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))

	head := r.pods(t)["hdfs-head-0"]
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	if head.Kind != plan.HDFSHead || head.State != plan.TaskRunning || head.Endpoint != addr(rpc) || head.URL != "hdfs://"+addr(rpc) ||
		head.WebHDFS != "webhdfs://"+addr(web) || head.DataEndpoint != addr(data) || head.Controller != h.ctrl.srv.URL {
		t.Fatalf("head pod %+v", head)
	}
	tv, ok := h.m.Task(head.TaskID)
	if !ok || tv.State != mesos.TASK_RUNNING {
		t.Fatalf("master has %+v", tv)
	}
	want := []int{rpc, data, web}
	sort.Ints(want)
	if got := taskPorts(tv.Resources); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("head task ports %v, want %v", got, want)
	}
	wantArgs := []string{"executor", "--role", "hdfs-gateway", "--health-addr", addr(rpc), "--",
		"hdfs-gateway", "--controller", h.ctrl.srv.URL,
		"--rpc-addr", "0.0.0.0:" + strconv.Itoa(rpc), "--data-addr", "0.0.0.0:" + strconv.Itoa(data), "--http-addr", "0.0.0.0:" + strconv.Itoa(web),
		"--advertise", "127.0.0.1"}
	if got := rec.args(t, head.TaskID); strings.Join(got, "|") != strings.Join(wantArgs, "|") {
		t.Fatalf("head command\n got %q\nwant %q", got, wantArgs)
	}
	ctx := context.Background()
	eps, err := r.c.Endpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(eps.HDFS) != "[hdfs://"+addr(rpc)+"]" || fmt.Sprint(eps.WebHDFS) != "[webhdfs://"+addr(web)+"]" || len(eps.Nodes) != 1 {
		t.Fatalf("endpoints %+v", eps)
	}
	prog, err := r.c.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.Phases) != 3 || prog.Phases[2].Name != "heads" || fmt.Sprint(prog.Phases[2].Steps[0].Addresses) != "[hdfs://"+addr(rpc)+" webhdfs://"+addr(web)+"]" {
		t.Fatalf("plan %+v", prog)
	}

	// A failed head is relaunched (anywhere: it has no volume).
	if err := h.m.FailTask(head.TaskID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "head relaunched", func() bool {
		p := r.pods(t)["hdfs-head-0"]
		return p.TaskID != head.TaskID && p.State == plan.TaskRunning
	})
	head = r.pods(t)["hdfs-head-0"]

	// The controller restarts at the same address: the head stays.
	ctrl0 := r.pods(t)["controller-0"]
	if _, err := r.c.Restart(ctx, "controller-0"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "controller-0 restarted", func() bool {
		p := r.pods(t)["controller-0"]
		return p.TaskID != ctrl0.TaskID && p.State == plan.TaskRunning
	})
	if p := r.pods(t)["hdfs-head-0"]; p.TaskID != head.TaskID || p.State != plan.TaskRunning {
		t.Fatalf("the head was restarted with its controller: %+v, was %+v", p, head)
	}

	// Up to two: one per agent.
	if _, err := r.c.SetCounts(ctx, CountsRequest{Heads: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two heads", r.complete(t))
	pods := r.pods(t)
	if pods["hdfs-head-1"].State != plan.TaskRunning || pods["hdfs-head-1"].AgentID == pods["hdfs-head-0"].AgentID {
		t.Fatalf("heads %+v %+v", pods["hdfs-head-0"], pods["hdfs-head-1"])
	}

	// Down to none: killed, gone, no heads phase.
	if _, err := r.c.SetCounts(ctx, CountsRequest{Heads: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "heads removed", func() bool {
		ps := r.pods(t)
		_, h0 := ps["hdfs-head-0"]
		_, h1 := ps["hdfs-head-1"]
		return !h0 && !h1
	})
	for _, id := range []string{pods["hdfs-head-0"].TaskID, pods["hdfs-head-1"].TaskID} {
		if tv, ok := h.m.Task(id); ok && tv.State == mesos.TASK_RUNNING {
			t.Fatalf("head task %s still runs", id)
		}
	}
	if prog, err := r.c.Plan(ctx); err != nil || len(prog.Phases) != 2 || prog.Status != plan.Complete {
		t.Fatalf("plan without heads %+v, %v", prog, err)
	}
	if err := second(r.c.SetCounts(ctx, CountsRequest{Heads: ptr(-1)})); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("heads -1: %v", err)
	}
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}

// TestStoredPlanBeforeHeads: a plan stored by a scheduler that knew no
// heads (plan/testdata/before_heads.msgpack) is loaded with the
// configured head count and resources, and stored back with them.
func TestStoredPlanBeforeHeads(t *testing.T) {
	h := newHarness(t, 0)
	zst := storeOldPlan(t, h, "plan/testdata/before_heads.msgpack")
	h.cfg.Spec.Heads, h.cfg.Spec.Head = 2, plan.Resources{CPUs: 0.25, MemMB: 128}
	r := h.start("s1")
	eventually(t, "plan stored with heads", func() bool {
		kv, err := zst.Get(context.Background(), keyPlan)
		if err != nil {
			return false
		}
		p, err := plan.Unmarshal(kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		return len(p.UnsetHeads()) == 0 && p.Spec().Heads == 2 && p.Spec().Head == h.cfg.Spec.Head && p.Spec().Nodes == 2
	})
	eventually(t, "subscribed", r.healthy)
	// The stored pods ran other resources than configured: an update
	// phase follows (the pods are rolled once the deployment is done).
	if prog, err := r.c.Plan(context.Background()); err != nil || len(prog.Phases) != 4 || prog.Phases[2].Name != "heads" || len(prog.Phases[2].Steps) != 2 || prog.Phases[3].Name != "update" {
		t.Fatalf("plan %+v, %v", prog, err)
	}
}

// TestRefreshHeads: a running head (of every kind) is restarted when
// the controller URL it was given names no running controller while
// another runs; not while no controller runs at all (a restart in
// place).
func TestRefreshHeads(t *testing.T) {
	srv := sessiontest.NewServer(t)
	d, err := New(sessionConfig(t, "s1", srv.Open()))
	if err != nil {
		t.Fatal(err)
	}
	d.store, d.st = srv.Open(), newState()
	small := plan.Resources{CPUs: 0.5, MemMB: 128}
	d.p = plan.New(plan.Spec{
		Framework: "sluice", Controllers: 1, Nodes: 1, Heads: 1,
		Controller: small, Node: plan.Resources{CPUs: 0.5, MemMB: 128, DiskMB: 256}, Head: small,
		NFSHeads: plan.HeadSpec{Count: 1, Resources: small}, S3Heads: plan.HeadSpec{Count: 1, Resources: small},
	})
	big := func(id, agent string) plan.Offer {
		return plan.Offer{ID: id, AgentID: agent, Unreserved: plan.Resources{CPUs: 4, MemMB: 4096, DiskMB: 4096}}
	}
	running := func(task, agent string) {
		d.p.OnStatus(plan.Status{TaskID: task, AgentID: agent, State: plan.TaskRunning})
	}
	d.p.Start(time.Now())
	d.p.OnOffers([]plan.Offer{big("o1", "a1")})
	running("controller-0__1", "a1")
	d.p.OnOffers([]plan.Offer{big("o2", "a2")})
	running("node-0__1", "a2")
	running("hdfs-head-0__1", "a2")
	running("nfs-head-0__1", "a2")
	running("s3-head-0__1", "a2")
	d.eps = map[string]Endpoint{
		"controller-0": {TaskID: "controller-0__1", Host: "h1", Port: 10080},
		"hdfs-head-0":  {TaskID: "hdfs-head-0__1", Host: "h2", Port: 8020, DataPort: 9866, HTTPPort: 9870, Controller: "http://h1:10080"},
		"nfs-head-0":   {TaskID: "nfs-head-0__1", Host: "h2", Port: 12049, Controller: "http://h1:10080"},
		"s3-head-0":    {TaskID: "s3-head-0__1", Host: "h2", Port: 9000, Controller: "http://h1:10080"},
	}
	ctx := context.Background()
	d.refreshHeads(ctx)
	if len(d.headKills) != 0 {
		t.Fatalf("a head with a live controller was killed: %v", d.headKills)
	}
	// The controller fails: nothing runs to give the head instead.
	d.p.OnStatus(plan.Status{TaskID: "controller-0__1", AgentID: "a1", State: plan.TaskFailed})
	d.refreshHeads(ctx)
	if len(d.headKills) != 0 {
		t.Fatalf("killed with no controller running: %v", d.headKills)
	}
	// Relaunched on another agent: the head is restarted, once.
	d.p.OnOffers([]plan.Offer{big("o3", "a3")})
	d.eps["controller-0"] = Endpoint{TaskID: "controller-0__2", Host: "h3", Port: 10080}
	running("controller-0__2", "a3")
	d.refreshHeads(ctx)
	d.refreshHeads(ctx)
	if !d.headKills["hdfs-head-0__1"] || !d.headKills["nfs-head-0__1"] || !d.headKills["s3-head-0__1"] || len(d.headKills) != 3 {
		t.Fatalf("head kills %v", d.headKills)
	}
	if d.persist != nil {
		t.Fatal(d.persist)
	}
}
