package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

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
	// Endpoint is the task's address (host:port); for a controller, URL
	// is its REST API.
	Endpoint string `json:"endpoint,omitempty"`
	URL      string `json:"url,omitempty"`
}

// Endpoints is GET /v1/endpoints: how clients reach the service.
type Endpoints struct {
	Controllers []string `json:"controllers"` // REST URLs of the running controllers
	Nodes       []string `json:"nodes"`       // data-plane addresses of the running nodes
	ZooKeeper   string   `json:"zookeeper"`   // host:port,...
	ZKRoot      string   `json:"zkRoot"`      // the cluster's root znode (the tasks' --zk-root)
}

// CountsRequest is PUT /v1/counts: the fields given are changed.
type CountsRequest struct {
	Controllers *int `json:"controllers,omitempty"`
	Nodes       *int `json:"nodes,omitempty"`
}

// Health is GET /v1/health.
type Health struct {
	Status      string `json:"status"` // "ok" or "starting"
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
	mux.HandleFunc("GET /v1/plan", d.read(func() any { return d.p.Progress() }))
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

func (d *Driver) setCounts(w http.ResponseWriter, r *http.Request) {
	var req CountsRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err == nil {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&req)
	}
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %v", ErrBadRequest, err)
	case req.Controllers == nil && req.Nodes == nil:
		err = fmt.Errorf(`%w: want {"nodes":N} and/or {"controllers":C}`, ErrBadRequest)
	case req.Controllers != nil && *req.Controllers < 1, req.Nodes != nil && *req.Nodes < 1:
		err = fmt.Errorf("%w: counts must be at least 1", ErrBadRequest)
	}
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	var prog plan.Progress
	err = d.mutate(r.Context(), func() error {
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
		d.log.WithFields(logrus.Fields{"controllers": c, "nodes": n}).Info("scheduler: counts changed")
		d.exec(d.runCtx, d.p.SetCounts(c, n))
		prog = d.p.Progress()
		return nil
	})
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusOK, prog)
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
				if p.Kind == plan.Controller {
					pi.URL = "http://" + ep.Addr()
				}
			}
		}
		out = append(out, pi)
	}
	return out
}

func (d *Driver) endpoints() Endpoints {
	e := Endpoints{Controllers: []string{}, Nodes: []string{}, ZooKeeper: strings.Join(d.cfg.ZK, ","), ZKRoot: d.cfg.ClusterRoot()}
	for _, p := range d.podInfos() {
		if p.State != plan.TaskRunning || p.Endpoint == "" {
			continue
		}
		if p.Kind == plan.Controller {
			e.Controllers = append(e.Controllers, p.URL)
		} else {
			e.Nodes = append(e.Nodes, p.Endpoint)
		}
	}
	return e
}
