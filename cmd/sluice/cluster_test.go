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
// heads (of any kind) marks them decommissioned, and each later GET /v1/pods
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
	f.pods = append(f.pods, scheduler.PodInfo{Name: "nfs-head-0", Kind: plan.NFSHead, Goal: plan.GoalRun, TaskID: "nfs-head-0__1", State: plan.TaskRunning, AgentID: "a-h0",
		Host: "h0", Endpoint: "h0:12049", URL: "nfs://h0:12049/", Controller: "http://127.0.0.1:9"})
	for i, host := range []string{"h0", "h1"} {
		n := "s3-head-" + strconv.Itoa(i)
		f.pods = append(f.pods, scheduler.PodInfo{Name: n, Kind: plan.S3Head, Goal: plan.GoalRun, TaskID: n + "__1", State: plan.TaskRunning, AgentID: "a-" + host,
			Host: host, Endpoint: host + ":9000", URL: "http://" + host + ":9000", Controller: "http://127.0.0.1:9"})
	}
	js := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	progress := func() scheduler.PlanView {
		phases := map[plan.PodKind]*scheduler.PlanPhase{}
		for _, k := range append([]plan.PodKind{plan.Node}, plan.HeadKinds...) {
			phases[k] = &scheduler.PlanPhase{Name: plan.PhaseName(k), Status: plan.Complete}
		}
		for _, p := range f.pods {
			st := scheduler.PlanStep{Step: plan.Step{Pod: p.Name, Status: plan.Complete, TaskID: p.TaskID, AgentID: p.AgentID, State: p.State}, Addresses: p.Addresses()}
			if ph := phases[p.Kind]; ph != nil {
				ph.Steps = append(ph.Steps, st)
			}
		}
		v := scheduler.PlanView{Status: plan.Complete}
		for _, k := range append([]plan.PodKind{plan.Node}, plan.HeadKinds...) {
			if k == plan.Node || len(phases[k].Steps) > 0 {
				v.Phases = append(v.Phases, *phases[k])
			}
		}
		return v
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/plan", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		js(w, 200, progress())
	})
	// Rolling restart, pause and resume answer the progress.
	mux.HandleFunc("POST /v1/plan/{action}", func(w http.ResponseWriter, r *http.Request) {
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
			HDFS: []string{"hdfs://h0:8020"}, WebHDFS: []string{"webhdfs://h0:9870"}, NFS: []string{"nfs://h0:12049/"}, S3: []string{"http://h0:9000", "http://h1:9000"},
			ZooKeeper: "zk:2181", ZKRoot: "/s/cluster"})
	})
	mux.HandleFunc("PUT /v1/counts", func(w http.ResponseWriter, r *http.Request) {
		var req scheduler.CountsRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			js(w, 400, map[string]string{"error": "bad"})
			return
		}
		given := 0
		for _, n := range []*int{req.Controllers, req.Nodes, req.Heads, req.NFSHeads, req.S3Heads} {
			if n != nil {
				given++
			}
		}
		if given != 1 || req.Controllers != nil {
			js(w, 400, map[string]string{"error": "want one count"})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for i := range f.pods {
			p := &f.pods[i]
			switch {
			case req.Nodes != nil && p.Kind == plan.Node && p.Name >= "node-"+strconv.Itoa(*req.Nodes):
				p.Goal, p.Draining = plan.GoalDecommission, true
			case p.Kind.IsHead() && req.Head(p.Kind) != nil && podIndex(p.Name) >= *req.Head(p.Kind):
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
	mux.HandleFunc("POST /v1/uninstall/agents/{agent}/forget", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, scheduler.PlanView{Status: plan.Complete, Phases: []scheduler.PlanPhase{{Name: "unreserve", Status: plan.Complete, Steps: []scheduler.PlanStep{}}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// podIndex is the number at the end of a pod's name.
func podIndex(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	return n
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
	if err := json.Unmarshal([]byte(out), &prog); err != nil || len(prog.Phases) != 4 || len(prog.Phases[0].Steps) != 3 ||
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
	for _, want := range []string{"http://127.0.0.1:9", "zk:2181/s/cluster", "hdfs://h0:8020", "webhdfs://h0:9870",
		"nfs         nfs://h0:12049/", "s3          http://h1:9000"} {
		if !strings.Contains(out, want) {
			t.Fatalf("endpoints: no %q in\n%s", want, out)
		}
	}

	// The heads: every kind listed with its addresses; one kind with
	// --kind; the HDFS heads (--set alone) lowered to none.
	out = mustRun(t, append([]string{"cluster", "heads"}, s...)...)
	for _, want := range []string{"hdfs-head-1", "hdfs://h1:8020 webhdfs://h1:9870", "nfs-head-0", "nfs://h0:12049/", "s3-head-1", "http://h1:9000"} {
		if !strings.Contains(out, want) || strings.Contains(out, "node-0") {
			t.Fatalf("heads: no %q, or a node, in\n%s", want, out)
		}
	}
	out = mustRun(t, append([]string{"cluster", "heads", "--kind", "nfs"}, s...)...)
	if !strings.Contains(out, "nfs-head-0") || strings.Contains(out, "hdfs-head-") || strings.Contains(out, "s3-head-") {
		t.Fatalf("heads --kind nfs:\n%s", out)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "heads", "--kind", "s3"}, s...)...)
	var s3 []scheduler.PodInfo
	if err := json.Unmarshal([]byte(out), &s3); err != nil || len(s3) != 2 || s3[1].URL != "http://h1:9000" || s3[1].Kind != plan.S3Head {
		t.Fatalf("heads --kind s3 json %q: %v", out, err)
	}
	out = mustRun(t, append([]string{"cluster", "heads", "--kind", "s3", "--set", "1"}, s...)...)
	for _, want := range []string{"s3-head-1: stopping (TASK_KILLING)", "s3-head-1: removed", "s3 heads: 1", "s3-head-0"} {
		if !strings.Contains(out, want) || strings.Contains(out, "hdfs-head-") {
			t.Fatalf("heads --kind s3 --set 1: no %q (or an HDFS head) in\n%s", want, out)
		}
	}
	out = mustRun(t, append([]string{"-o", "json", "cluster", "heads", "--kind", "nfs", "--set", "0"}, s...)...)
	if err := json.Unmarshal([]byte(out), &prog); err != nil || len(prog.Phases) != 3 || prog.Phases[2].Name != "s3-heads" {
		t.Fatalf("heads --kind nfs --set 0 json %q: %v", out, err)
	}
	out = mustRun(t, append([]string{"--output", "json", "cluster", "heads", "--kind", "hdfs"}, s...)...)
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
	if out = mustRun(t, append([]string{"cluster", "heads"}, s...)...); strings.Contains(out, "hdfs-head-") || strings.Contains(out, "nfs-head-") || !strings.Contains(out, "s3-head-0") {
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

// TestSchedulerHeadFlags: the NFS and S3 head flags reach the driver's
// configuration (defaults: no NFS or S3 heads, ports 12049 and 9000),
// the S3 keys from the environment only.
func TestSchedulerHeadFlags(t *testing.T) {
	t.Setenv(scheduler.S3CredentialsEnv, "")
	d := mustParseScheduler(t)
	if d.Spec.NFSHeads.Count != 0 || d.Spec.S3Heads.Count != 0 || d.NFSHeadPort != 12049 || d.S3HeadPort != 9000 || d.S3Anonymous || d.S3Credentials != "" ||
		d.Spec.NFSHeads.Resources != (plan.Resources{CPUs: 1, MemMB: 1024}) || d.Spec.S3Heads.Resources != (plan.Resources{CPUs: 1, MemMB: 1024}) {
		t.Fatalf("defaults: %+v", d)
	}
	if d.ForgetFramework {
		t.Fatal("--forget-framework is on by default")
	}
	if f := mustParseScheduler(t, "--forget-framework"); !f.ForgetFramework {
		t.Fatal("--forget-framework does not reach the driver")
	}
	t.Setenv(scheduler.S3CredentialsEnv, "AKID:secret,AK2:s2")
	c := mustParseScheduler(t, "--nfs-heads", "2", "--nfs-head-cpus", "0.5", "--nfs-head-mem", "512", "--nfs-head-port", "0",
		"--s3-heads", "3", "--s3-head-cpus", "2", "--s3-head-mem", "2048", "--s3-head-port", "9100", "--s3-anonymous=true")
	if c.Spec.NFSHeads != (plan.HeadSpec{Count: 2, Resources: plan.Resources{CPUs: 0.5, MemMB: 512}}) ||
		c.Spec.S3Heads != (plan.HeadSpec{Count: 3, Resources: plan.Resources{CPUs: 2, MemMB: 2048}}) ||
		c.NFSHeadPort != 0 || c.S3HeadPort != 9100 || !c.S3Anonymous || c.S3Credentials != "AKID:secret,AK2:s2" {
		t.Fatalf("flags: %+v", c)
	}
	if _, err := scheduler.New(c); err != nil {
		t.Fatalf("the driver refuses the flags' configuration: %v", err)
	}
	t.Setenv(scheduler.S3CredentialsEnv, "")
	c = mustParseScheduler(t, "--s3-heads", "1", "--s3-credentials-secret", "sluice/s3-credentials")
	if c.S3CredentialsSecret != "sluice/s3-credentials" || c.S3Credentials != "" || c.S3Anonymous {
		t.Fatalf("--s3-credentials-secret: %+v", c)
	}
	if _, err := scheduler.New(c); err != nil {
		t.Fatalf("the driver refuses S3 heads with a secret: %v", err)
	}
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
	mustFail(t, "--set -1: want 0 or more", "cluster", "heads", "--kind", "nfs", "--set", "-1", "--scheduler", srv.URL)
	mustFail(t, `--kind "ftp": want hdfs, nfs or s3`, "cluster", "heads", "--kind", "ftp", "--scheduler", srv.URL)
	mustFail(t, "--nfs-head-port 70000: not a port", "scheduler", "--nfs-head-port", "70000")
	mustFail(t, "--s3-head-port -1: not a port", "scheduler", "--s3-head-port", "-1")
	mustFail(t, "--nfs-heads -1: want 0 or more", "scheduler", "--nfs-heads", "-1")
	t.Setenv(scheduler.S3CredentialsEnv, "")
	mustFail(t, "--s3-heads 1: S3 heads need access keys (--s3-credentials-secret, or SLUICE_S3_CREDENTIALS=ACCESS:SECRET[,ACCESS:SECRET] in the scheduler's environment) or --s3-anonymous",
		"scheduler", "--s3-heads", "1")
	// Keys every S3 head would refuse at start stop the scheduler first,
	// without showing a secret.
	t.Setenv(scheduler.S3CredentialsEnv, "AK:Sec-One,AK:Sec-Two")
	mustFail(t, `SLUICE_S3_CREDENTIALS: s3keys: invalid access keys: line 1, pair 2: the access key is given twice`,
		"scheduler", "--s3-heads", "1")
	t.Setenv(scheduler.S3CredentialsEnv, "")
	mustFail(t, "--head-rpc-port 70000: not a port", "scheduler", "--head-rpc-port", "70000")
	mustFail(t, "--heads -1: want 0 or more", "scheduler", "--heads", "-1")
	mustFail(t, "connection refused", "cluster", "status", "--scheduler", "http://127.0.0.1:1")
	mustFail(t, `--node-disk-type "SSD": want ROOT, PATH or MOUNT`, "scheduler", "--node-disk-type", "SSD")
}
