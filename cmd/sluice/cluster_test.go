package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// fakeScheduler serves the scheduler's API from a list of pods: a
// lowering of the nodes marks the removed ones draining, and each later
// GET /v1/pods moves them a step on (stopping, then gone).
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
	js := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	progress := func() plan.Progress {
		ph := plan.Phase{Name: "nodes", Status: plan.Complete}
		for _, p := range f.pods {
			if p.Kind == plan.Node {
				ph.Steps = append(ph.Steps, plan.Step{Pod: p.Name, Status: plan.Complete, TaskID: p.TaskID, AgentID: p.AgentID, State: p.State})
			}
		}
		return plan.Progress{Status: plan.Complete, Phases: []plan.Phase{ph}}
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
		js(w, 200, scheduler.Endpoints{Controllers: []string{"http://127.0.0.1:9"}, Nodes: []string{"127.0.0.1:1"}, ZooKeeper: "zk:2181", ZKRoot: "/s/cluster"})
	})
	mux.HandleFunc("PUT /v1/counts", func(w http.ResponseWriter, r *http.Request) {
		var req scheduler.CountsRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Nodes == nil {
			js(w, 400, map[string]string{"error": "bad"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for i := range f.pods {
			p := &f.pods[i]
			if p.Kind == plan.Node && p.Name >= "node-"+string(rune('0'+*req.Nodes)) {
				p.Goal, p.Draining = plan.GoalDecommission, true
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
	if !strings.Contains(out, "PHASE") || !strings.Contains(out, "node-2") || !strings.Contains(out, "COMPLETE") {
		t.Fatalf("status:\n%s", out)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "status"}, s...)...)
	var prog plan.Progress
	if err := json.Unmarshal([]byte(out), &prog); err != nil || len(prog.Phases) != 1 || len(prog.Phases[0].Steps) != 3 {
		t.Fatalf("status json %q: %v", out, err)
	}
	out = mustRun(t, append([]string{"cluster", "endpoints"}, s...)...)
	if !strings.Contains(out, "http://127.0.0.1:9") || !strings.Contains(out, "zk:2181/s/cluster") {
		t.Fatalf("endpoints:\n%s", out)
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
	mustFail(t, "connection refused", "cluster", "status", "--scheduler", "http://127.0.0.1:1")
	mustFail(t, `--node-disk-type "SSD": want ROOT or MOUNT`, "scheduler", "--node-disk-type", "SSD")
}
