package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	sched "github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// zkAddr is the ZooKeeper server the package's tests share (each test
// under its own root).
var zkAddr string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "scheduler-zk")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	z, err := clustertest.NewZooKeeper(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	zkAddr = z.Addr
	code := m.Run()
	z.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeController stands in for the controllers' REST API: the
// controller pod's endpoint is its port (every agent offers only that
// port), so the driver's drain calls reach it.
type fakeController struct {
	srv  *httptest.Server
	port int
	mu   struct {
		sync.Mutex
		drains []string
		polls  map[string]int
		onPut  func(id string)
	}
}

func newFakeController(t *testing.T) *fakeController {
	f := &fakeController{}
	f.mu.polls = map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/nodes/{id}/drain", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Drain bool }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !body.Drain {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		id := r.PathValue("id")
		f.mu.drains = append(f.mu.drains, id)
		hook := f.mu.onPut
		f.mu.Unlock()
		if hook != nil {
			hook(id)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var nodes []ControllerNode
		for _, id := range f.mu.drains {
			// The first poll after a drain still shows a container.
			f.mu.polls[id]++
			n := ControllerNode{ID: id, Addr: "x", Live: true, Draining: true}
			if f.mu.polls[id] == 1 {
				n.Containers = []int{3}
			}
			nodes = append(nodes, n)
		}
		writeJSON(w, http.StatusOK, map[string]any{"nodes": nodes})
	})
	f.srv, f.port = serveController(t, mux)
	return f
}

func (f *fakeController) drains() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.mu.drains...)
}

// standIn runs each pod as a command task that sleeps: enough for the
// plan, the master and the driver.
func standIn(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
	sh := true
	cmd := "sleep 600"
	return mesos.TaskInfo{Resources: res, Command: &mesos.CommandInfo{Shell: &sh, Value: &cmd}}
}

type harness struct {
	t    *testing.T
	m    *mesostest.Master
	ctrl *fakeController
	cfg  Config
}

func newHarness(t *testing.T, agents int) *harness {
	h := &harness{t: t, ctrl: newFakeController(t)}
	h.m = mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond})
	addAgents(t, h.m, h.ctrl.port, agents)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	h.cfg = Config{
		Name: "sluice", Role: "sluice", User: "sluice", Principal: "sluice",
		Master: h.m.URL(), ZK: []string{zkAddr}, ZKRoot: fmt.Sprintf("/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano()),
		Spec: plan.Spec{
			Controllers: 1, Nodes: 2,
			Controller: plan.Resources{CPUs: 0.5, MemMB: 128},
			Node:       plan.Resources{CPUs: 0.5, MemMB: 128, DiskMB: 256},
			Timing:     plan.Timing{ShortRefuse: 100 * time.Millisecond},
		},
		Containers: 4, Tier2: "file://" + t.TempDir(), Build: standIn, ControllerPort: h.ctrl.port,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		Tick: 50 * time.Millisecond, DrainPoll: 20 * time.Millisecond,
		Logger: log,
	}
	return h
}

// addAgents adds agents a0, a1, ... to m, each with two ports: the
// controller's, ctrlPort (a stand-in controller's), and another that a
// node takes (nothing listens there).
func addAgents(t *testing.T, m *mesostest.Master, ctrlPort, agents int) {
	t.Helper()
	for i := range agents {
		port, other := uint64(ctrlPort), uint64(porttest.Port(t))
		if err := m.AddAgent(mesostest.AgentSpec{
			ID: fmt.Sprintf("a%d", i), Hostname: "127.0.0.1", CPUs: 2, MemMB: 2048, DiskMB: 4096,
			Ports: []mesos.Value_Range{{Begin: min(port, other), End: min(port, other)}, {Begin: max(port, other), End: max(port, other)}},
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// serveController serves mux, a stand-in for the controllers' REST API,
// until t ends; it returns the server and its port.
func serveController(t *testing.T, mux http.Handler) (*httptest.Server, int) {
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(p)
	return srv, port
}

// store opens the scheduler's ZooKeeper store (h.cfg.ZKRoot), closed
// when t ends.
func (h *harness) store(t *testing.T) *zkstore.Store {
	t.Helper()
	zst, err := zkstore.Open([]string{zkAddr}, h.cfg.ZKRoot, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zst.Close() })
	return zst
}

// running is a driver whose Run goes on in the background.
type running struct {
	d      *Driver
	c      *Client
	cancel context.CancelFunc
	errc   chan error
}

func (h *harness) start(id string) *running {
	h.t.Helper()
	cfg := h.cfg
	cfg.ID = id
	d, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, cancel: cancel, errc: make(chan error, 1)}
	go func() { r.errc <- d.Run(ctx) }()
	r.c, err = NewClient(srv.URL, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { r.stop(h.t); srv.Close() })
	return r
}

// stop ends Run and checks it returned nil; a second stop does nothing.
func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.errc:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("Run did not return")
	}
}

// eventually polls cond for at most 30s (proctest.WaitFor).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	proctest.WaitFor(t, what, 30*time.Second, func() (bool, string) { return cond(), "" })
}

func (r *running) pods(t *testing.T) map[string]PodInfo {
	t.Helper()
	ps, err := r.c.Pods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]PodInfo{}
	for _, p := range ps {
		out[p.Name] = p
	}
	return out
}

func (r *running) complete(t *testing.T) func() bool {
	return func() bool {
		p, err := r.c.Plan(context.Background())
		return err == nil && p.Status == plan.Complete
	}
}

func (r *running) healthy() bool {
	_, err := r.c.Health(context.Background())
	return err == nil
}

// TestDeployAndFailover deploys on the fake master, then lets a second
// scheduler, waiting in the election, take over: it fails over to the
// same framework and keeps every task (same ids, no new ACCEPT).
func TestDeployAndFailover(t *testing.T) {
	h := newHarness(t, 3)
	r1 := h.start("s1")
	eventually(t, "deployed", r1.complete(t))
	eventually(t, "healthy", r1.healthy)
	before := r1.pods(t)
	if len(before) != 3 {
		t.Fatalf("pods %+v", before)
	}
	for name, p := range before {
		tv, ok := h.m.Task(p.TaskID)
		if !ok || tv.State != mesos.TASK_RUNNING || tv.AgentID != p.AgentID {
			t.Fatalf("%s: master has %+v for %+v", name, tv, p)
		}
		if p.Kind == plan.Controller && p.URL != h.ctrl.srv.URL || !strings.HasPrefix(p.Endpoint, "127.0.0.1:") {
			t.Fatalf("%s: endpoint %q, url %q", name, p.Endpoint, p.URL)
		}
	}
	eps, err := r1.c.Endpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.Controllers) != 1 || eps.Controllers[0] != h.ctrl.srv.URL || len(eps.Nodes) != 2 || eps.ZooKeeper != zkAddr || eps.ZKRoot != h.cfg.ZKRoot+"/cluster" {
		t.Fatalf("endpoints %+v", eps)
	}

	// The state is in ZooKeeper.
	zst := h.store(t)
	kv, err := zst.Get(context.Background(), keyFrameworkID)
	if err != nil || string(kv.Value) != h.m.FrameworkID() {
		t.Fatalf("stored framework id %q, %v; master has %q", kv.Value, err, h.m.FrameworkID())
	}
	kv, err = zst.Get(context.Background(), keyPlan)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := plan.Unmarshal(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	if sp := stored.Spec(); sp.Controllers != 1 || sp.Nodes != 2 {
		t.Fatalf("stored spec %+v", sp)
	}

	// A second scheduler waits while the first leads.
	r2 := h.start("s2")
	if r2.healthy() {
		t.Fatal("a second scheduler is healthy while the first leads")
	}
	if _, err := r2.c.Plan(context.Background()); !errors.Is(err, ErrAPI) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("the waiting scheduler's plan: %v", err)
	}
	fwID := h.m.FrameworkID()
	accepts := len(h.m.CallsOf(sched.Call_ACCEPT))
	subs := len(h.m.CallsOf(sched.Call_SUBSCRIBE))
	r1.stop(t)

	eventually(t, "second scheduler healthy", r2.healthy)
	eventually(t, "second scheduler reconciled", func() bool {
		return len(h.m.CallsOf(sched.Call_SUBSCRIBE)) > subs && r2.complete(t)()
	})
	after := r2.pods(t)
	for name, p := range before {
		if after[name].TaskID != p.TaskID || after[name].State != plan.TaskRunning {
			t.Fatalf("%s: %+v before, %+v after the failover", name, p, after[name])
		}
	}
	if h.m.FrameworkID() != fwID {
		t.Fatalf("framework %q after failover, was %q", h.m.FrameworkID(), fwID)
	}
	if n := len(h.m.CallsOf(sched.Call_ACCEPT)); n != accepts {
		t.Fatalf("%d ACCEPTs after the failover (had %d)", n, accepts)
	}
	if got := len(h.m.Tasks()); got != 3 {
		t.Fatalf("master has %d tasks", got)
	}
}

// TestStreamDropAndOperator drops the event stream (the driver
// subscribes again and goes on driving), then exercises the operator
// API: restart, counts down (drain through the controller, then kill,
// destroy, unreserve) and up, replace, and the API's errors.
func TestStreamDropAndOperator(t *testing.T) {
	h := newHarness(t, 3)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	subs := len(h.m.CallsOf(sched.Call_SUBSCRIBE))
	if err := h.m.DisconnectScheduler(h.m.FrameworkID()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "re-subscribed", func() bool {
		return len(h.m.CallsOf(sched.Call_SUBSCRIBE)) > subs && h.m.Subscribed() && r.healthy()
	})

	// A crash after the re-subscription is seen and the task relaunched
	// in place.
	node0 := r.pods(t)["node-0"]
	if err := h.m.FailTask(node0.TaskID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-0 relaunched", func() bool {
		p := r.pods(t)["node-0"]
		return p.TaskID != node0.TaskID && p.State == plan.TaskRunning
	})
	if p := r.pods(t)["node-0"]; p.AgentID != node0.AgentID {
		t.Fatalf("node-0 moved from %s to %s", node0.AgentID, p.AgentID)
	}

	// Restart through the API: killed and relaunched in place.
	ctx := context.Background()
	ctrl0 := r.pods(t)["controller-0"]
	if _, err := r.c.Restart(ctx, "controller-0"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "controller-0 restarted", func() bool {
		p := r.pods(t)["controller-0"]
		return p.TaskID != ctrl0.TaskID && p.State == plan.TaskRunning
	})
	if tv, ok := h.m.Task(ctrl0.TaskID); ok && tv.State == mesos.TASK_RUNNING {
		t.Fatalf("the old controller task still runs: %+v", tv)
	}

	// Lower the nodes: node-1 is drained through the controller before
	// its task is killed.
	node1 := r.pods(t)["node-1"]
	var runningAtDrain mesos.TaskState
	h.ctrl.mu.Lock()
	h.ctrl.mu.onPut = func(string) {
		tv, _ := h.m.Task(node1.TaskID)
		runningAtDrain = tv.State
	}
	h.ctrl.mu.Unlock()
	prog, err := r.c.SetCounts(ctx, CountsRequest{Nodes: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.Phases) != 3 || prog.Phases[2].Name != "decommission" || prog.Phases[2].Steps[0].Pod != "node-1" {
		t.Fatalf("progress after lowering %+v", prog)
	}
	eventually(t, "node-1 removed", func() bool {
		_, still := r.pods(t)["node-1"]
		av, _ := h.m.Agent(node1.AgentID)
		return !still && len(av.Reserved) == 0
	})
	if d := h.ctrl.drains(); len(d) != 1 || d[0] != "node-1" {
		t.Fatalf("drains %v", d)
	}
	h.ctrl.mu.Lock()
	if runningAtDrain != mesos.TASK_RUNNING {
		t.Fatalf("node-1's task was %v when its drain was asked", runningAtDrain)
	}
	h.ctrl.mu.Unlock()

	// Raise again, then replace the new node-1.
	if _, err := r.c.SetCounts(ctx, CountsRequest{Nodes: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-1 back", r.complete(t))
	again := r.pods(t)["node-1"]
	if _, err := r.c.Replace(ctx, "node-1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-1 replaced", func() bool {
		p := r.pods(t)["node-1"]
		return p.TaskID != again.TaskID && p.State == plan.TaskRunning
	})
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}

	// Errors.
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"restart unknown", second(r.c.Restart(ctx, "node-9")), "404: plan: no such pod: node-9"},
		{"replace unknown", second(r.c.Replace(ctx, "node-9")), "404"},
		{"zero nodes", second(r.c.SetCounts(ctx, CountsRequest{Nodes: ptr(0)})), "400"},
		{"empty counts", second(r.c.SetCounts(ctx, CountsRequest{})), "400"},
	} {
		if !errors.Is(c.err, ErrAPI) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrAPI with %q", c.name, c.err, c.want)
		}
	}
	resp, err := http.Get(strings.TrimSuffix(r.c.base, "/") + "/v1/nope")
	if err != nil {
		t.Fatal(err)
	}
	var e apiError
	if json.NewDecoder(resp.Body).Decode(&e) != nil || resp.StatusCode != 404 || e.Error == "" {
		t.Fatalf("unknown route: %d %+v", resp.StatusCode, e)
	}
	resp.Body.Close()
}

func ptr(n int) *int { return &n }

func second[T any](_ T, err error) error { return err }

// TestNotReady: before Run has loaded a plan every read answers 503.
func TestNotReady(t *testing.T) {
	h := newHarness(t, 0)
	d, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	c, _ := NewClient(srv.URL, nil)
	ctx := context.Background()
	for what, err := range map[string]error{
		"health":   second(c.Health(ctx)),
		"plan":     second(c.Plan(ctx)),
		"pods":     second(c.Pods(ctx)),
		"counts":   second(c.SetCounts(ctx, CountsRequest{Nodes: ptr(3)})),
		"restart":  second(c.Restart(ctx, "node-0")),
		"endpoint": second(c.Endpoints(ctx)),
	} {
		if !errors.Is(err, ErrAPI) || !strings.Contains(err.Error(), ": 503") {
			t.Errorf("%s: %v, want a 503", what, err)
		}
	}
}

// TestFencedWrites: when another writer changes the stored plan, the
// driver stops with ErrLeadership at its next write instead of acting
// on a plan it does not own.
func TestFencedWrites(t *testing.T) {
	h := newHarness(t, 2)
	h.cfg.Spec.Nodes = 1
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	zst := h.store(t)
	kv, err := zst.Get(context.Background(), keyPlan)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zst.Put(context.Background(), keyPlan, kv.Value); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.SetCounts(context.Background(), CountsRequest{Nodes: ptr(2)}); err == nil {
		t.Fatal("SetCounts succeeded on a plan written by someone else")
	}
	select {
	case err := <-r.errc:
		if !errors.Is(err, ErrLeadership) {
			t.Fatalf("Run: %v, want ErrLeadership", err)
		}
		r.cancel()
		r.cancel = nil
	case <-time.After(20 * time.Second):
		t.Fatal("Run goes on after a fenced write")
	}
	if n := len(h.m.CallsOf(sched.Call_ACCEPT)); n > 2 {
		// The deploy took one ACCEPT per pod; nothing was placed for the
		// second node.
		t.Fatalf("%d ACCEPTs", n)
	}
}

func TestLoweringNodesNeedsTier2(t *testing.T) {
	h := newHarness(t, 3)
	h.cfg.Tier2 = ""
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	_, err := r.c.SetCounts(context.Background(), CountsRequest{Nodes: ptr(1)})
	if err == nil || !strings.Contains(err.Error(), "needs tier 2") {
		t.Fatalf("lowering the nodes without tier 2: %v", err)
	}
}
