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

// TestClusterPlanCommands: `cluster restart [--kind]`, `pause` and
// `resume` call the scheduler's plan routes; `status` prints the paused
// state and the refused configuration changes.
func TestClusterPlanCommands(t *testing.T) {
	var (
		mu     sync.Mutex
		calls  []string
		paused bool
	)
	view := func() scheduler.PlanView {
		v := scheduler.PlanView{Status: plan.Starting, Paused: paused, Errors: []string{"node disk: cannot change 512 MB to 1024 MB (why); keeping 512 MB"},
			Phases: []scheduler.PlanPhase{{Name: "update", Status: plan.Pending, Steps: []scheduler.PlanStep{{Step: plan.Step{Pod: "node-1", Status: plan.Pending, Waiting: "paused"}}}}}}
		return v
	}
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.RequestURI())
		switch r.URL.Path {
		case "/v1/plan/pause":
			paused = true
		case "/v1/plan/resume":
			paused = false
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(view())
	}
	mux.HandleFunc("GET /v1/plan", answer)
	mux.HandleFunc("POST /v1/plan/{action}", answer)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := []string{"--scheduler", srv.URL}

	out := mustRun(t, append([]string{"cluster", "pause"}, s...)...)
	if !strings.Contains(out, "paused: no new step starts") || !strings.Contains(out, "refused: node disk: cannot change 512 MB") {
		t.Fatalf("pause printed:\n%s", out)
	}
	out = mustRun(t, append([]string{"cluster", "status"}, s...)...)
	if !strings.Contains(out, "paused:") || !strings.Contains(out, "update") || !strings.Contains(out, "refused:") {
		t.Fatalf("status printed:\n%s", out)
	}
	if out = mustRun(t, append([]string{"cluster", "resume"}, s...)...); strings.Contains(out, "paused:") {
		t.Fatalf("resume printed:\n%s", out)
	}
	mustRun(t, append([]string{"cluster", "restart", "--kind", "node"}, s...)...)
	mustRun(t, append([]string{"cluster", "restart"}, s...)...)
	mustFail(t, `--kind "nodes": want controller, node, hdfs-head, nfs-head or s3-head`, append([]string{"cluster", "restart", "--kind", "nodes"}, s...)...)
	mu.Lock()
	defer mu.Unlock()
	want := "POST /v1/plan/pause,GET /v1/plan,POST /v1/plan/resume,POST /v1/plan/restart?kind=node,POST /v1/plan/restart"
	if got := strings.Join(calls, ","); got != want {
		t.Fatalf("calls %s, want %s", got, want)
	}
}
