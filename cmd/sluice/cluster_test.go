package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// fakeScheduler serves the scheduler's API from a list of pods: a
// lowering of the nodes marks the removed ones draining, a lowering of
// the heads marks them decommissioned, and each later GET /v1/pods
// moves them a step on (stopping, then gone).
type fakeScheduler struct {
	mu       sync.Mutex
	pods     []scheduler.PodInfo
	restarts []string
}

func newFakeScheduler(t *testing.T) *httptest.Server {
	f := &fakeScheduler{}
	for _, n := range []string{"controller-0", "node-0", "node-1", "node-2"} {
		kind := plan.Node
		if strings.HasPrefix(n, "controller") {
			kind = plan.Controller
		}
		f.pods = append(f.pods, scheduler.PodInfo{Name: n, Kind: kind, Goal: plan.GoalRun, TaskID: n + "__1", State: plan.TaskRunning, AgentID: "a-" + n, Endpoint: "127.0.0.1:1"})
	}
	for i, host := range []string{"h0", "h1"} {
		n := "hdfs-head-" + strconv.Itoa(i)
		f.pods = append(f.pods, scheduler.PodInfo{Name: n, Kind: plan.HDFSHead, Goal: plan.GoalRun, TaskID: n + "__1", State: plan.TaskRunning, AgentID: "a-" + n,
			Host: host, Endpoint: host + ":8020", URL: "hdfs://" + host + ":8020", WebHDFS: "webhdfs://" + host + ":9870", DataEndpoint: host + ":9866", Controller: "http://127.0.0.1:9"})
	}
	js := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	progress := func() scheduler.PlanView {
		nodes := scheduler.PlanPhase{Name: "nodes", Status: plan.Complete}
		heads := scheduler.PlanPhase{Name: "heads", Status: plan.Complete}
		for _, p := range f.pods {
			st := scheduler.PlanStep{Step: plan.Step{Pod: p.Name, Status: plan.Complete, TaskID: p.TaskID, AgentID: p.AgentID, State: p.State}, Addresses: p.Addresses()}
			switch p.Kind {
			case plan.Node:
				nodes.Steps = append(nodes.Steps, st)
			case plan.HDFSHead:
				heads.Steps = append(heads.Steps, st)
			}
		}
		v := scheduler.PlanView{Status: plan.Complete, Phases: []scheduler.PlanPhase{nodes}}
		if len(heads.Steps) > 0 {
			v.Phases = append(v.Phases, heads)
		}
		return v
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/plan", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		js(w, 200, progress())
	})
	mux.HandleFunc("GET /v1/pods", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		js(w, 200, f.pods)
		// Move the decommissioned pods on.
		var keep []scheduler.PodInfo
		for _, p := range f.pods {
			switch {
			case p.Goal != plan.GoalDecommission:
			case p.Draining:
				p.Draining, p.State = false, plan.TaskKilling
			default:
				continue
			}
			keep = append(keep, p)
		}
		f.pods = keep
	})
	mux.HandleFunc("GET /v1/endpoints", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, scheduler.Endpoints{Controllers: []string{"http://127.0.0.1:9"}, Nodes: []string{"127.0.0.1:1"},
			HDFS: []string{"hdfs://h0:8020"}, WebHDFS: []string{"webhdfs://h0:9870"}, ZooKeeper: "zk:2181", ZKRoot: "/s/cluster"})
	})
	mux.HandleFunc("PUT /v1/counts", func(w http.ResponseWriter, r *http.Request) {
		var req scheduler.CountsRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || (req.Nodes == nil) == (req.Heads == nil) {
			js(w, 400, map[string]string{"error": "bad"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for i := range f.pods {
			p := &f.pods[i]
			switch {
			case req.Nodes != nil && p.Kind == plan.Node && p.Name >= "node-"+strconv.Itoa(*req.Nodes):
				p.Goal, p.Draining = plan.GoalDecommission, true
			case req.Heads != nil && p.Kind == plan.HDFSHead && p.Name >= "hdfs-head-"+strconv.Itoa(*req.Heads):
				p.Goal, p.State = plan.GoalDecommission, plan.TaskKilling
			}
		}
		js(w, 200, progress())
	})
	podAction := func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.pods {
			if p.Name == r.PathValue("name") {
				f.restarts = append(f.restarts, p.Name)
				js(w, 200, p)
				return
			}
		}
		js(w, 404, map[string]string{"error": "plan: no such pod: " + r.PathValue("name")})
	}
	mux.HandleFunc("POST /v1/pods/{name}/restart", podAction)
	mux.HandleFunc("POST /v1/pods/{name}/replace", podAction)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestClusterCommands(t *testing.T) {
	srv := newFakeScheduler(t)
	s := []string{"--scheduler", srv.URL}

	out := mustRun(t, append([]string{"cluster", "status"}, s...)...)
	if !strings.Contains(out, "PHASE") || !strings.Contains(out, "node-2") || !strings.Contains(out, "COMPLETE") ||
		!strings.Contains(out, "ADDRESS") || !strings.Contains(out, "hdfs://h1:8020 webhdfs://h1:9870") {
		t.Fatalf("status:\n%s", out)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "status"}, s...)...)
	var prog scheduler.PlanView
	if err := json.Unmarshal([]byte(out), &prog); err != nil || len(prog.Phases) != 2 || len(prog.Phases[0].Steps) != 3 ||
		prog.Phases[1].Name != "heads" || strings.Join(prog.Phases[1].Steps[0].Addresses, " ") != "hdfs://h0:8020 webhdfs://h0:9870" {
		t.Fatalf("status json %q: %v", out, err)
	}
	var raw struct {
		Phases []struct{ Steps []map[string]any }
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil || raw.Phases[1].Steps[0]["taskId"] != "hdfs-head-0__1" {
		t.Fatalf("status json: the step's fields are not at its top level (%v): %s", err, out)
	}
	out = mustRun(t, append([]string{"cluster", "endpoints"}, s...)...)
	for _, want := range []string{"http://127.0.0.1:9", "zk:2181/s/cluster", "hdfs://h0:8020", "webhdfs://h0:9870"} {
		if !strings.Contains(out, want) {
			t.Fatalf("endpoints: no %q in\n%s", want, out)
		}
	}

	// The heads: listed with their addresses, lowered to none.
	out = mustRun(t, append([]string{"cluster", "heads"}, s...)...)
	if !strings.Contains(out, "hdfs-head-1") || !strings.Contains(out, "hdfs://h1:8020 webhdfs://h1:9870") || strings.Contains(out, "node-0") {
		t.Fatalf("heads:\n%s", out)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "heads"}, s...)...)
	var heads []scheduler.PodInfo
	if err := json.Unmarshal([]byte(out), &heads); err != nil || len(heads) != 2 || heads[0].WebHDFS != "webhdfs://h0:9870" || heads[0].DataEndpoint != "h0:9866" {
		t.Fatalf("heads json %q: %v", out, err)
	}
	out = mustRun(t, append([]string{"cluster", "heads", "--set", "0"}, s...)...)
	for _, want := range []string{"hdfs-head-0: stopping (TASK_KILLING)", "hdfs-head-0: removed", "hdfs-head-1: removed", "heads: 0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("heads --set 0: no %q in\n%s", want, out)
		}
	}
	if out = mustRun(t, append([]string{"cluster", "heads"}, s...)...); strings.Contains(out, "hdfs-head-") {
		t.Fatalf("heads after --set 0:\n%s", out)
	}
	out = mustRun(t, append([]string{"cluster", "controllers"}, s...)...)
	if !strings.Contains(out, "controller-0") || strings.Contains(out, "node-0") {
		t.Fatalf("controllers:\n%s", out)
	}

	// Lowering: the drain and the removal are shown, then the result.
	out = mustRun(t, append([]string{"cluster", "nodes", "--set", "2"}, s...)...)
	for _, want := range []string{"node-2: draining", "node-2: stopping (TASK_KILLING)", "node-2: removed", "nodes: 2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("nodes --set 2: no %q in\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "draining"), strings.Index(out, "removed"); i > j {
		t.Fatalf("removal before drain:\n%s", out)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "nodes"}, s...)...)
	var pods []scheduler.PodInfo
	if err := json.Unmarshal([]byte(out), &pods); err != nil || len(pods) != 2 || pods[1].Name != "node-1" {
		t.Fatalf("nodes json %q: %v", out, err)
	}

	out = mustRun(t, append([]string{"cluster", "pod", "restart", "node-1"}, s...)...)
	if !strings.Contains(out, "node-1: restart requested (task node-1__1)") {
		t.Fatalf("restart: %q", out)
	}
	// SLUICE_SCHEDULER stands for --scheduler.
	t.Setenv("SLUICE_SCHEDULER", srv.URL)
	mustRun(t, "cluster", "pod", "restart", "node-0")
}

func TestClusterErrors(t *testing.T) {
	srv := newFakeScheduler(t)
	t.Setenv("SLUICE_SCHEDULER", "")
	mustFail(t, "no scheduler: give --scheduler URL or set SLUICE_SCHEDULER", "cluster", "status")
	mustFail(t, "want http://HOST:PORT", "cluster", "status", "--scheduler", "nope")
	mustFail(t, "404: plan: no such pod: node-9", "cluster", "pod", "restart", "node-9", "--scheduler", srv.URL)
	mustFail(t, "want NAME, got none", "cluster", "pod", "replace", "--scheduler", srv.URL)
	mustFail(t, "--set 0: want at least 1", "cluster", "nodes", "--set", "0", "--scheduler", srv.URL)
	mustFail(t, "--set -1: want 0 or more", "cluster", "heads", "--set", "-1", "--scheduler", srv.URL)
	mustFail(t, "--head-rpc-port 70000: not a port", "scheduler", "--head-rpc-port", "70000")
	mustFail(t, "--heads -1: want 0 or more", "scheduler", "--heads", "-1")
	mustFail(t, "connection refused", "cluster", "status", "--scheduler", "http://127.0.0.1:1")
	mustFail(t, `--node-disk-type "SSD": want ROOT or MOUNT`, "scheduler", "--node-disk-type", "SSD")
}
