package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// PodInfo is one pod in GET /v1/pods.
type PodInfo struct {
	Name      string         `json:"name"`
	Kind      plan.PodKind   `json:"kind"`
	Goal      plan.Goal      `json:"goal"`
	TaskID    string         `json:"taskId,omitempty"`
	State     plan.TaskState `json:"state,omitempty"`
	AgentID   string         `json:"agentId,omitempty"`
	Host      string         `json:"host,omitempty"`
	AgentLost bool           `json:"agentLost,omitempty"`
	Draining  bool           `json:"draining,omitempty"`
	// Endpoint is the task's address (host:port; an HDFS head's
	// NameNode RPC port); URL is a controller's REST API, an HDFS head's
	// hdfs:// URI, an NFS head's nfs://HOST:PORT/ or an S3 head's
	// http://HOST:PORT endpoint.
	Endpoint string `json:"endpoint,omitempty"`
	URL      string `json:"url,omitempty"`
	// An HDFS head's WebHDFS URI and DataNode transfer address; the
	// controller any head reads tier 2 through.
	WebHDFS      string `json:"webhdfs,omitempty"`
	DataEndpoint string `json:"dataEndpoint,omitempty"`
	Controller   string `json:"controller,omitempty"`
}

// Addresses are the addresses a pod's clients use: a controller's REST
// URL, a node's host:port, an HDFS head's hdfs:// and webhdfs:// URIs,
// an NFS head's nfs:// URI, an S3 head's http:// endpoint.
func (p PodInfo) Addresses() []string {
	var out []string
	switch {
	case p.URL != "":
		out = append(out, p.URL)
	case p.Endpoint != "":
		out = append(out, p.Endpoint)
	}
	if p.WebHDFS != "" {
		out = append(out, p.WebHDFS)
	}
	return out
}

// PlanStep is a step of GET /v1/plan: the plan's, with the pod's
// addresses once its task runs.
type PlanStep struct {
	plan.Step
	Addresses []string `json:"addresses,omitempty"`
}

// PlanPhase is a phase of GET /v1/plan.
type PlanPhase struct {
	Name   string          `json:"name"`
	Status plan.StepStatus `json:"status"`
	Steps  []PlanStep      `json:"steps"`
}

// PlanView is GET /v1/plan (and the answer of PUT /v1/counts): the
// plan's progress with each pod's addresses.
type PlanView struct {
	Status plan.StepStatus `json:"status"`
	Phases []PlanPhase     `json:"phases"`
	// Paused: the plan starts no new step (POST /v1/plan/pause).
	Paused bool `json:"paused,omitempty"`
	// Errors are the configuration changes refused at the last start
	// (the stored value is kept for each).
	Errors []string `json:"errors,omitempty"`
}

// Endpoints is GET /v1/endpoints: how clients reach the service.
type Endpoints struct {
	Controllers []string `json:"controllers"` // REST URLs of the running controllers
	Nodes       []string `json:"nodes"`       // data-plane addresses of the running nodes
	HDFS        []string `json:"hdfs"`        // hdfs://HOST:PORT of the running HDFS heads
	WebHDFS     []string `json:"webhdfs"`     // webhdfs://HOST:PORT of the running HDFS heads
	NFS         []string `json:"nfs"`         // nfs://HOST:PORT/ of the running NFS heads
	S3          []string `json:"s3"`          // http://HOST:PORT of the running S3 heads (the S3 endpoint URL)
	ZooKeeper   string   `json:"zookeeper"`   // host:port,...
	ZKRoot      string   `json:"zkRoot"`      // the cluster's root znode (the tasks' --zk-root)
}

// CountsRequest is PUT /v1/counts: the fields given are changed.
type CountsRequest struct {
	Controllers *int `json:"controllers,omitempty"`
	Nodes       *int `json:"nodes,omitempty"`
	Heads       *int `json:"heads,omitempty"`    // HDFS heads; 0 allowed
	NFSHeads    *int `json:"nfsHeads,omitempty"` // NFS heads; 0 allowed
	S3Heads     *int `json:"s3Heads,omitempty"`  // S3 heads; 0 allowed
}

// Head returns the request's count for a kind of head (nil: unchanged).
func (r CountsRequest) Head(k plan.PodKind) *int {
	switch k {
	case plan.HDFSHead:
		return r.Heads
	case plan.NFSHead:
		return r.NFSHeads
	case plan.S3Head:
		return r.S3Heads
	}
	return nil
}

// Health is GET /v1/health.
type Health struct {
	Status      string `json:"status"` // "ok", "starting", or "uninstalled" (200: see finishUninstall)
	FrameworkID string `json:"frameworkId,omitempty"`
}

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

// Handler returns the scheduler's HTTP API (see the package comment).
func (d *Driver) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", d.health)
	mux.HandleFunc("GET /v1/plan", d.read(func() any { return d.planView() }))
	mux.HandleFunc("GET /v1/pods", d.read(func() any { return d.podInfos() }))
	mux.HandleFunc("GET /v1/endpoints", d.read(func() any { return d.endpoints() }))
	mux.HandleFunc("PUT /v1/counts", d.setCounts)
	mux.HandleFunc("POST /v1/pods/{name}/restart", d.podAction(func(name string) error { return d.restart(name) }))
	mux.HandleFunc("POST /v1/pods/{name}/replace", d.podAction(func(name string) error {
		ds, err := d.p.Replace(name)
		if err != nil {
			return err
		}
		d.log.WithField("pod", name).Info("scheduler: replacing pod")
		d.exec(d.runCtx, ds)
		return nil
	}))
	d.updateRoutes(mux)
	mux.HandleFunc("POST /v1/uninstall/agents/{agent}/forget", d.planAction(d.forgetAgent))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, apiError{Error: err.Error()})
}

func errorCode(err error) int {
	switch {
	case errors.Is(err, plan.ErrNoPod):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotReady):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (d *Driver) health(w http.ResponseWriter, r *http.Request) {
	if !d.Ready() && d.uninstalledNow(r.Context()) {
		writeJSON(w, http.StatusOK, Health{Status: "uninstalled"})
		return
	}
	if !d.Ready() {
		writeJSON(w, http.StatusServiceUnavailable, Health{Status: "starting"})
		return
	}
	var h Health
	if err := d.do(r.Context(), func() { h = Health{Status: "ok", FrameworkID: d.fwID} }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// read serves a view computed on the owner goroutine; the plan must be
// loaded.
func (d *Driver) read(view func() any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !d.loaded.Load() {
			writeError(w, http.StatusServiceUnavailable, fmt.Errorf("%w: no plan loaded (not leading yet)", ErrNotReady))
			return
		}
		var v any
		err := d.do(r.Context(), func() {
			if d.p != nil {
				v = view()
			}
		})
		if err == nil && v == nil {
			err = fmt.Errorf("%w: no plan loaded", ErrNotReady)
		}
		if err != nil {
			writeError(w, errorCode(err), err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// mutate runs f on the owner goroutine once subscribed.
func (d *Driver) mutate(ctx context.Context, f func() error) error {
	if !d.Ready() {
		return ErrNotReady
	}
	var err error
	if derr := d.do(ctx, func() {
		if !d.Ready() {
			err = ErrNotReady
			return
		}
		if err = f(); err == nil {
			err = d.persist
		}
	}); derr != nil {
		return derr
	}
	return err
}

// maxCount bounds each count of PUT /v1/counts: the plan makes a pod
// per unit at once, so a count is also a memory bound.
const maxCount = 10000

// countsBodyLimit bounds the body of PUT /v1/counts.
const countsBodyLimit = 1 << 16

// parseCounts decodes and checks the body of PUT /v1/counts: JSON with
// only the CountsRequest keys, at least one of them, controllers and
// nodes 1..maxCount, each kind of head 0..maxCount. Errors wrap
// ErrBadRequest.
func parseCounts(body []byte) (CountsRequest, error) {
	var req CountsRequest
	if len(body) > countsBodyLimit {
		return req, fmt.Errorf("%w: body over %d bytes", ErrBadRequest, countsBodyLimit)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if dec.More() {
		return req, fmt.Errorf("%w: more than one JSON value", ErrBadRequest)
	}
	counts := []*int{req.Controllers, req.Nodes, req.Heads, req.NFSHeads, req.S3Heads}
	given := false
	for _, n := range counts {
		given = given || n != nil
	}
	if !given {
		return req, fmt.Errorf(`%w: want {"nodes":N}, {"controllers":C}, {"heads":H}, {"nfsHeads":H} and/or {"s3Heads":H}`, ErrBadRequest)
	}
	if req.Controllers != nil && *req.Controllers < 1 || req.Nodes != nil && *req.Nodes < 1 {
		return req, fmt.Errorf("%w: controller and node counts must be at least 1", ErrBadRequest)
	}
	for _, k := range plan.HeadKinds {
		if n := req.Head(k); n != nil && *n < 0 {
			return req, fmt.Errorf("%w: %s %d: want 0 or more", ErrBadRequest, headNoun(k), *n)
		}
	}
	for _, n := range counts {
		if n != nil && *n > maxCount {
			return req, fmt.Errorf("%w: count %d: at most %d", ErrBadRequest, *n, maxCount)
		}
	}
	return req, nil
}

func (d *Driver) setCounts(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, countsBodyLimit+1))
	var req CountsRequest
	if err == nil {
		req, err = parseCounts(body)
	}
	if err != nil && !errors.Is(err, ErrBadRequest) {
		err = fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	var prog PlanView
	err = d.mutate(r.Context(), func() error {
		if d.p.Uninstalling() {
			return fmt.Errorf("%w: %w: the counts do not change", ErrBadRequest, plan.ErrUninstalling)
		}
		sp := d.p.Spec()
		c, n := sp.Controllers, sp.Nodes
		if req.Controllers != nil {
			c = *req.Controllers
		}
		if req.Nodes != nil {
			n = *req.Nodes
		}
		if n < sp.Nodes && d.cfg.Tier2 == "" {
			return fmt.Errorf("%w: lowering the nodes from %d to %d needs tier 2 (--tier2): a node's containers move to the others through it", ErrBadRequest, sp.Nodes, n)
		}
		heads := map[plan.PodKind]plan.HeadSpec{}
		for _, k := range plan.HeadKinds {
			want := req.Head(k)
			have := sp.HeadSpec(k)
			if want == nil || *want == have.Count {
				continue
			}
			res := have.Resources
			if res.CPUs <= 0 || res.MemMB <= 0 {
				res = d.cfg.Spec.HeadSpec(k).Resources // a plan that never had this kind
			}
			if *want > have.Count && (res.CPUs <= 0 || res.MemMB <= 0) {
				return fmt.Errorf("%w: no resources for %s: give the scheduler %s", ErrBadRequest, headNoun(k), headResourceFlags(k))
			}
			if k == plan.S3Head && *want > 0 {
				if err := d.cfg.s3Ready(); err != nil {
					return fmt.Errorf("%w: %w", ErrBadRequest, err)
				}
			}
			heads[k] = plan.HeadSpec{Count: *want, Resources: res}
		}
		fields := countFields(sp)
		fields["controllers"], fields["nodes"] = c, n
		for k, h := range heads {
			fields[countField(k)] = h.Count
		}
		d.log.WithFields(fields).Info("scheduler: counts changed")
		ds := d.p.SetCounts(c, n)
		for _, k := range plan.HeadKinds {
			if h, ok := heads[k]; ok {
				d.p.SetHeadResources(k, h.Resources)
				ds = append(ds, d.p.SetHeads(k, h.Count)...)
			}
		}
		d.exec(d.runCtx, ds)
		prog = d.planView()
		return nil
	})
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusOK, prog)
}

// countField is a kind of head's key in CountsRequest and the log.
func countField(k plan.PodKind) string {
	switch k {
	case plan.NFSHead:
		return "nfsHeads"
	case plan.S3Head:
		return "s3Heads"
	}
	return "heads"
}

// headResourceFlags are `sluice scheduler`'s flags for a kind of
// head's resources.
func headResourceFlags(k plan.PodKind) string {
	switch k {
	case plan.NFSHead:
		return "--nfs-head-cpus and --nfs-head-mem"
	case plan.S3Head:
		return "--s3-head-cpus and --s3-head-mem"
	}
	return "--head-cpus and --head-mem"
}

func (d *Driver) podAction(f func(name string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		var info PodInfo
		err := d.mutate(r.Context(), func() error {
			if err := f(name); err != nil {
				return err
			}
			for _, p := range d.podInfos() {
				if p.Name == name {
					info = p
				}
			}
			return nil
		})
		if err != nil {
			writeError(w, errorCode(err), err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	}
}

func (d *Driver) podInfos() []PodInfo {
	out := []PodInfo{}
	for _, p := range d.p.Pods() {
		pi := PodInfo{Name: p.Name, Kind: p.Kind, Goal: p.Goal, TaskID: p.TaskID, State: p.State, AgentID: p.AgentID, AgentLost: p.AgentLost, Draining: p.Draining}
		if ep, ok := d.eps[p.Name]; ok && ep.TaskID == p.TaskID && p.TaskID != "" {
			pi.Host = ep.Host
			if ep.Port != 0 {
				pi.Endpoint = ep.Addr()
				switch p.Kind {
				case plan.Controller, plan.S3Head:
					pi.URL = "http://" + ep.Addr()
				case plan.HDFSHead:
					pi.URL = "hdfs://" + ep.Addr()
				case plan.NFSHead:
					pi.URL = "nfs://" + ep.Addr() + "/"
				}
			}
			if p.Kind.IsHead() {
				pi.Controller = ep.Controller
			}
			if p.Kind == plan.HDFSHead {
				if ep.HTTPPort != 0 {
					pi.WebHDFS = "webhdfs://" + net.JoinHostPort(ep.Host, strconv.Itoa(ep.HTTPPort))
				}
				if ep.DataPort != 0 {
					pi.DataEndpoint = net.JoinHostPort(ep.Host, strconv.Itoa(ep.DataPort))
				}
			}
		}
		out = append(out, pi)
	}
	return out
}

func (d *Driver) endpoints() Endpoints {
	e := Endpoints{Controllers: []string{}, Nodes: []string{}, HDFS: []string{}, WebHDFS: []string{}, NFS: []string{}, S3: []string{}, ZooKeeper: strings.Join(d.cfg.ZK, ","), ZKRoot: d.cfg.ClusterRoot()}
	for _, p := range d.podInfos() {
		if p.State != plan.TaskRunning || p.Endpoint == "" {
			continue
		}
		switch p.Kind {
		case plan.Controller:
			e.Controllers = append(e.Controllers, p.URL)
		case plan.HDFSHead:
			e.HDFS = append(e.HDFS, p.URL)
			if p.WebHDFS != "" {
				e.WebHDFS = append(e.WebHDFS, p.WebHDFS)
			}
		case plan.NFSHead:
			e.NFS = append(e.NFS, p.URL)
		case plan.S3Head:
			e.S3 = append(e.S3, p.URL)
		default:
			e.Nodes = append(e.Nodes, p.Endpoint)
		}
	}
	return e
}

// planView is the plan's progress with the running pods' addresses.
func (d *Driver) planView() PlanView {
	addrs := map[string][]string{}
	for _, p := range d.podInfos() {
		if p.State == plan.TaskRunning {
			addrs[p.Name] = p.Addresses()
		}
	}
	prog := d.p.Progress()
	v := PlanView{Status: prog.Status, Phases: []PlanPhase{}, Paused: prog.Paused, Errors: append(append([]string(nil), d.upd.refused...), d.p.ResizeRefusals()...)}
	for _, ph := range prog.Phases {
		vp := PlanPhase{Name: ph.Name, Status: ph.Status, Steps: []PlanStep{}}
		for _, st := range ph.Steps {
			vp.Steps = append(vp.Steps, PlanStep{Step: st, Addresses: addrs[st.Pod]})
		}
		v.Phases = append(v.Phases, vp)
	}
	d.uninstallView(&v)
	return v
}
