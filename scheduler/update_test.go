package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// liveController stands in for the controllers' REST API in update
// tests: every node pod is registered and live; drains are kept (true
// or false, in order) and a draining node holds no container.
type liveController struct {
	srv   *httptest.Server
	port  int
	nodes int
	mu    struct {
		sync.Mutex
		draining map[string]bool
		log      []string // "node-0 drain", "node-0 undrain", in order
	}
}

func newLiveController(t *testing.T, nodes int) *liveController {
	f := &liveController{nodes: nodes}
	f.mu.draining = map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/nodes/{id}/drain", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Drain *bool }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Drain == nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		id := r.PathValue("id")
		if f.mu.draining[id] != *body.Drain {
			what := " undrain"
			if *body.Drain {
				what = " drain"
			}
			f.mu.log = append(f.mu.log, id+what)
		}
		f.mu.draining[id] = *body.Drain
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var nodes []ControllerNode
		for i := range f.nodes {
			id := fmt.Sprintf("node-%d", i)
			n := ControllerNode{ID: id, Addr: "x", Live: true, Draining: f.mu.draining[id]}
			if !n.Draining {
				n.Containers = []int{i}
			}
			nodes = append(nodes, n)
		}
		writeJSON(w, http.StatusOK, map[string]any{"nodes": nodes})
	})
	f.srv, f.port = serveController(t, mux)
	return f
}

// deployLive starts a driver, s1, deploying a controller and two nodes
// on three agents with a liveController for the controller, and waits
// for the deploy.
func deployLive(t *testing.T) (*harness, *liveController, *running) {
	t.Helper()
	h := newHarness(t, 0)
	ctrl := newLiveController(t, 2)
	addAgents(t, h.m, ctrl.port, 3)
	h.cfg.ControllerPort = ctrl.port
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	return h, ctrl, r
}

func (f *liveController) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.mu.log...)
}

// reservedOf sums the cpus and mem an agent holds reserved with the
// reservation label id.
func reservedOf(t *testing.T, m *mesostest.Master, agentID, id string) (cpus, mem float64) {
	t.Helper()
	av, err := m.Agent(agentID)
	if err != nil {
		t.Fatal(err)
	}
	return mesostest.CPUsMem(mesostest.ReservedWith(av.Reserved, plan.LabelReservation, id))
}

// TestUpdateResizesReservations: a scheduler restarted with bigger, then
// smaller nodes (what a package update does) rolls the change through
// the nodes one at a time: each is drained, killed and relaunched in
// place on its reservation, grown by RESERVE and shrunk by UNRESERVE
// of the difference, which the fake master accepts; a changed disk size
// is refused and shown in the plan's errors. The controller is not
// touched (its configuration did not change).
func TestUpdateResizesReservations(t *testing.T) {
	h, ctrl, r := deployLive(t)
	ctx := context.Background()
	before := r.pods(t)

	for _, tc := range []struct {
		name      string
		cpus, mem float64
	}{{"grow", 1, 512}, {"shrink", 0.25, 64}} {
		r.stop(t)
		h.cfg.Spec.Node.CPUs, h.cfg.Spec.Node.MemMB = tc.cpus, tc.mem
		h.cfg.Spec.Node.DiskMB = 512 // refused: the volumes stay 256 MB
		// Refused too, fixed at install: they would roll every
		// controller and node onto another map size or another tier 2.
		h.cfg.Containers, h.cfg.Tier2 = h.cfg.Containers+4, "file:///elsewhere/"+tc.name
		r = h.start("s-" + tc.name)
		eventually(t, tc.name+": updated", func() bool {
			v, err := r.c.Plan(ctx)
			if err != nil || v.Status != plan.Complete {
				return false
			}
			for _, p := range r.pods(t) {
				if tv, ok := h.m.Task(p.TaskID); p.Kind == plan.Node && (!ok || tv.State != mesos.TASK_RUNNING) {
					return false
				} else if p.Kind == plan.Node {
					if c, m := mesostest.CPUsMem(tv.Resources); c != tc.cpus || m != tc.mem {
						return false
					}
				}
			}
			return true
		})
		v, err := r.c.Plan(ctx)
		if err != nil || len(v.Errors) != 3 || !strings.Contains(v.Errors[0], "node disk") ||
			!strings.HasPrefix(v.Errors[1], "containers: cannot change") || !strings.HasPrefix(v.Errors[2], "tier 2: cannot change") {
			t.Fatalf("%s: plan errors %q, %v", tc.name, v.Errors, err)
		}
		after := r.pods(t)
		for name, p := range after {
			if p.Kind == plan.Controller {
				if p.TaskID != before[name].TaskID {
					t.Fatalf("%s: the controller was restarted: %s -> %s", tc.name, before[name].TaskID, p.TaskID)
				}
				continue
			}
			if p.AgentID != before[name].AgentID {
				t.Fatalf("%s: %s moved from %s to %s", tc.name, name, before[name].AgentID, p.AgentID)
			}
		}
		// One at a time: node-0 drained and given back before node-1.
		want := []string{"node-0 drain", "node-0 undrain", "node-1 drain", "node-1 undrain"}
		if got := ctrl.log(); strings.Join(got[len(got)-4:], ",") != strings.Join(want, ",") {
			t.Fatalf("%s: drains %v, want %v last", tc.name, got, want)
		}
		ctrl.mu.Lock()
		ctrl.mu.log = nil
		ctrl.mu.Unlock()
		if errs := h.m.OperationErrors(); len(errs) != 0 {
			t.Fatalf("%s: the master refused operations: %v", tc.name, errs)
		}
	}
	stored := storedPlan(t, h)
	for _, p := range stored.Pods() {
		if p.Kind != plan.Node {
			continue
		}
		if c, m := reservedOf(t, h.m, p.AgentID, p.ReservationID); c != 0.25 || m != 64 {
			t.Fatalf("%s: reservation %s holds cpus %g mem %g on %s, want 0.25 and 64", p.Name, p.ReservationID, c, m, p.AgentID)
		}
		if p.Volume == nil || p.Volume.SizeMB != 256 || p.Attempts != 3 {
			t.Fatalf("%s: %+v", p.Name, p)
		}
	}
}

// storedPlan reads the plan the scheduler stored in ZooKeeper.
func storedPlan(t *testing.T, h *harness) *plan.Plan {
	t.Helper()
	zst := h.store(t)
	kv, err := zst.Get(context.Background(), keyPlan)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRollingRestartAndPause: POST /v1/plan/restart?kind=controller
// restarts the controller alone (checked ready through its REST API);
// a bad kind is refused; POST /v1/plan/pause is stored (a restarted
// scheduler is still paused, and a rolling restart of the nodes waits)
// until POST /v1/plan/resume.
func TestRollingRestartAndPause(t *testing.T) {
	h, _, r := deployLive(t)
	ctx := context.Background()
	before := r.pods(t)

	if _, err := r.c.RestartPlan(ctx, "bogus"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("restart of kind bogus: %v", err)
	}
	if _, err := r.c.RestartPlan(ctx, plan.Controller); err != nil {
		t.Fatal(err)
	}
	eventually(t, "controller restarted", func() bool {
		v, err := r.c.Plan(ctx)
		return err == nil && v.Status == plan.Complete && r.pods(t)["controller-0"].TaskID != before["controller-0"].TaskID
	})
	for _, n := range []string{"node-0", "node-1"} {
		if p := r.pods(t)[n]; p.TaskID != before[n].TaskID {
			t.Fatalf("%s restarted too: %s -> %s", n, before[n].TaskID, p.TaskID)
		}
	}

	v, err := r.c.PausePlan(ctx)
	if err != nil || !v.Paused {
		t.Fatalf("pause: %+v, %v", v, err)
	}
	r.stop(t)
	r = h.start("s2")
	eventually(t, "subscribed", r.healthy)
	if v, err := r.c.RestartPlan(ctx, plan.Node); err != nil || !v.Paused {
		t.Fatalf("restart while paused: %+v, %v", v, err)
	}
	v, err = r.c.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var waiting []string
	for _, ph := range v.Phases {
		for _, st := range ph.Steps {
			if ph.Name == "update" {
				waiting = append(waiting, st.Pod+":"+st.Waiting)
			}
		}
	}
	if strings.Join(waiting, ",") != "node-0:paused,node-1:paused" {
		t.Fatalf("update steps while paused %v", waiting)
	}
	if _, err := r.c.ResumePlan(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "nodes restarted", func() bool {
		v, err := r.c.Plan(ctx)
		ps := r.pods(t)
		return err == nil && v.Status == plan.Complete && !v.Paused &&
			ps["node-0"].TaskID != before["node-0"].TaskID && ps["node-1"].TaskID != before["node-1"].TaskID
	})
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}

// TestConfiguredCounts: a node count changed through the API survives a
// scheduler restart with the same configuration; a count the
// configuration itself changes is taken.
func TestConfiguredCounts(t *testing.T) {
	h := newHarness(t, 4)
	ctx := context.Background()
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	if _, err := r.c.SetCounts(ctx, CountsRequest{Nodes: ptr(3)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "3 nodes", r.complete(t))
	nodes := func() int {
		n := 0
		for _, p := range r.pods(t) {
			if p.Kind == plan.Node {
				n++
			}
		}
		return n
	}
	r.stop(t)
	r = h.start("s2") // configured: still 2 nodes
	eventually(t, "subscribed", r.healthy)
	if n := nodes(); n != 3 {
		t.Fatalf("%d nodes after a restart with the configuration unchanged, want the API's 3", n)
	}
	r.stop(t)
	h.cfg.Spec.Nodes = 4
	r = h.start("s3")
	eventually(t, "4 nodes", func() bool { return r.complete(t)() && nodes() == 4 })
}

// TestRollingRestartHead: an HDFS head's restart step is not complete
// while its NameNode RPC port refuses connections, though its task
// runs; it ends once the port accepts (a listener of the test's, on the
// port every agent offers).
func TestRollingRestartHead(t *testing.T) {
	h := newHarness(t, 0)
	ctrl := newLiveController(t, 1)
	rpc, data, web := porttest.Port(t), porttest.Port(t), porttest.Port(t)
	for i := range 2 {
		ps := []uint64{uint64(ctrl.port), uint64(porttest.Port(t)), uint64(rpc), uint64(data), uint64(web)}
		sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
		var rs []mesos.Value_Range
		for _, p := range ps {
			rs = append(rs, mesos.Value_Range{Begin: p, End: p})
		}
		if err := h.m.AddAgent(mesostest.AgentSpec{ID: fmt.Sprintf("a%d", i), Hostname: "127.0.0.1", CPUs: 2, MemMB: 2048, DiskMB: 4096, Ports: rs}); err != nil {
			t.Fatal(err)
		}
	}
	h.cfg.ControllerPort, h.cfg.HeadRPCPort, h.cfg.HeadDataPort, h.cfg.HeadHTTPPort = ctrl.port, rpc, data, web
	h.cfg.Spec.Nodes = 1
	h.cfg.Spec.Heads, h.cfg.Spec.Head = 1, plan.Resources{CPUs: 0.25, MemMB: 64}
	ctx := context.Background()
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	before := r.pods(t)
	if _, err := r.c.RestartPlan(ctx, plan.HDFSHead); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new head task runs, its readiness checked", func() bool {
		v, err := r.c.Plan(ctx)
		if err != nil {
			return false
		}
		st, ok := stepOf(v, "update", "hdfs-head-0")
		p := r.pods(t)["hdfs-head-0"]
		return ok && st.Waiting == string(plan.StepReady) && p.TaskID != before["hdfs-head-0"].TaskID && p.State == plan.TaskRunning
	})
	if v, err := r.c.Plan(ctx); err != nil || v.Status == plan.Complete {
		t.Fatalf("complete while the head's port refuses connections: %+v, %v", v, err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", rpc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	eventually(t, "head ready", r.complete(t))
	for _, n := range []string{"controller-0", "node-0"} {
		if p := r.pods(t)[n]; p.TaskID != before[n].TaskID {
			t.Fatalf("%s restarted too", n)
		}
	}
}

// stepOf returns pod's step in the phase named phase.
func stepOf(v PlanView, phase, pod string) (PlanStep, bool) {
	for _, ph := range v.Phases {
		for _, st := range ph.Steps {
			if ph.Name == phase && st.Pod == pod {
				return st, true
			}
		}
	}
	return PlanStep{}, false
}
