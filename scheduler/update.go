package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// keyConfigured holds the spec the scheduler was configured with at its
// last start (JSON), so that a count the configuration changed since
// can be told from one changed through the API.
const keyConfigured = "scheduler/configured"

// updateState is the driver's part of the update plan; owned by Run's
// goroutine.
type updateState struct {
	configured durable
	// refused are the configuration changes the stored plan cannot take
	// (GET /v1/plan "errors").
	refused []string
	// pending are the decisions of the configuration taken at load,
	// carried out once subscribed.
	pending []plan.Decision
	checks  map[string]bool // readiness checks running, by task id
}

// configIDs returns the configuration id of each kind of pod for spec:
// a hash of what shapes its TaskInfo (the executor's command line,
// environment and artifacts, as TaskCommand builds them for a pod of the
// kind, with the fixed ports) and of its resources. A change of any of
// them is an update of that kind's pods.
func (c Config) configIDs(sp plan.Spec) map[plan.PodKind]string {
	out := map[plan.PodKind]string{}
	for _, k := range append([]plan.PodKind{plan.Controller, plan.Node}, plan.HeadKinds...) {
		op := plan.Op{Kind: plan.OpLaunch, Pod: string(k) + "-N", PodKind: k}
		ep := Endpoint{Host: "HOST", Controller: "CONTROLLER"}
		switch k {
		case plan.Controller:
			ep.Port = c.ControllerPort
		case plan.Node:
			ep.Port = c.NodePort
			op.Volume = &plan.Volume{ContainerPath: sp.VolumePath}
		case plan.HDFSHead:
			ep.Port, ep.DataPort, ep.HTTPPort = c.HeadRPCPort, c.HeadDataPort, c.HeadHTTPPort
		case plan.NFSHead:
			ep.Port = c.NFSHeadPort
		case plan.S3Head:
			ep.Port = c.S3HeadPort
		}
		cmd := c.TaskCommand(op, ep)
		b, err := cmd.Marshal()
		if err != nil {
			b = []byte(cmd.String())
		}
		h := sha256.New()
		h.Write(b)
		fmt.Fprintf(h, "\x00%s", sp.PodResources(k))
		out[k] = hex.EncodeToString(h.Sum(nil))[:16]
	}
	return out
}

// takeConfiguration makes the stored plan p follow the configured spec
// (plan.MergeSpec): refusals are logged and kept for GET /v1/plan, the
// rest is applied; the configured spec is stored as the last one.
// Called from load, before subscribing: decisions wait in u.pending.
func (d *Driver) takeConfiguration(ctx context.Context, p *plan.Plan) error {
	u := &d.upd
	u.configured = durable{key: keyConfigured}
	if err := u.configured.load(ctx, d.store); err != nil {
		return err
	}
	var last *plan.Spec
	if u.configured.exists {
		var sp plan.Spec
		if err := json.Unmarshal(u.configured.value, &sp); err != nil {
			return fmt.Errorf("scheduler: stored %s: %w", keyConfigured, err)
		}
		last = &sp
	}
	stored := p.Spec()
	merged, refused := plan.MergeSpec(stored, d.cfg.Spec, last)
	// A refused name is kept everywhere: the reservations' labels and
	// the framework carry the stored one.
	d.cfg.Name = merged.Framework
	if in := merged.Install; in != nil {
		// Fixed at install: the tasks run with the stored settings
		// whatever the command line says (a change is refused above).
		d.cfg.Containers, d.cfg.Tier2, d.cfg.HDFSConfigURL = in.Containers, in.Tier2, in.HDFSConfigURL
	}
	if merged.Nodes < stored.Nodes && d.cfg.Tier2 == "" {
		refused = append(refused, plan.Refusal{Field: "node count", Stored: fmt.Sprint(stored.Nodes), Wanted: fmt.Sprint(merged.Nodes),
			Why: "lowering it needs tier 2 (--tier2): a node's containers move to the others through it"})
		merged.Nodes = stored.Nodes
	}
	u.refused = nil
	for _, r := range refused {
		u.refused = append(u.refused, r.String())
		d.log.WithField("refused", r.String()).Error("scheduler: configuration change refused; the stored value stays")
	}
	// Pods launched before ids were recorded ran the stored spec's
	// resources; what else they ran is not known.
	u.pending = p.SetTargets(nil, d.cfg.configIDs(stored), false) // a restart the stored plan wants may begin
	u.pending = append(u.pending, p.SetSpec(merged)...)
	if !reflect.DeepEqual(merged, stored) {
		d.log.WithFields(countFields(merged)).Info("scheduler: configuration changed; the update rolls it through the pods")
	}
	b, err := json.Marshal(d.cfg.Spec)
	if err != nil {
		return fmt.Errorf("scheduler: %s: %w", keyConfigured, err)
	}
	return u.configured.store(ctx, d.store, b)
}

// startUpdate runs once subscribed (after plan.Start): the decisions
// taken at load, and the targets, which start the update once every pod
// is reconciled and runs.
func (d *Driver) startUpdate(ctx context.Context) {
	u := &d.upd
	ds := u.pending
	u.pending = nil
	ds = append(ds, d.p.SetTargets(d.cfg.configIDs(d.p.Spec()), nil, d.cfg.Tier2 != "")...)
	d.exec(ctx, ds)
}

// startReadyCheck starts the readiness check of a pod's new task
// (plan.CheckReady), once per task.
func (d *Driver) startReadyCheck(ctx context.Context, dec plan.Decision) {
	u := &d.upd
	if u.checks == nil {
		u.checks = map[string]bool{}
	}
	if u.checks[dec.TaskID] {
		return
	}
	u.checks[dec.TaskID] = true
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.watchReady(ctx, dec.Pod, dec.TaskID)
	}()
}

// watchReady checks, every Config.DrainPoll, that the task is ready,
// then calls plan.OnReady. It ends when the pod runs another task or
// left its step.
func (d *Driver) watchReady(ctx context.Context, pod, taskID string) {
	t := time.NewTicker(d.cfg.DrainPoll)
	defer t.Stop()
	defer d.do(ctx, func() { delete(d.upd.checks, taskID) })
	for {
		var (
			current bool
			kind    plan.PodKind
			ep      Endpoint
			urls    []string
		)
		if err := d.do(ctx, func() {
			pd, _ := d.p.Pod(pod)
			current = pd.TaskID == taskID && pd.Step == plan.StepReady
			kind, ep, urls = pd.Kind, d.eps[pod], d.controllerURLs()
		}); err != nil || !current {
			return
		}
		err := d.checkReady(ctx, kind, pod, taskID, ep, urls)
		if err == nil {
			d.log.WithFields(logrus.Fields{"pod": pod, "task": taskID}).Info("scheduler: pod ready")
			_ = d.do(ctx, func() { d.exec(d.runCtx, d.p.OnReady(pod, taskID)) })
			return
		}
		d.log.WithError(err).WithField("pod", pod).Debug("scheduler: pod not ready yet")
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// checkReady is the readiness of a pod's task, beyond the executor's
// health check (which TASK_RUNNING already passed): a controller serves
// its REST API (GET /v1/nodes); a node is registered and live in a
// controller's GET /v1/nodes, and not draining (it is un-drained first:
// a node drained for its update gets its containers back); a head
// accepts a connection on its port.
func (d *Driver) checkReady(ctx context.Context, kind plan.PodKind, pod, taskID string, ep Endpoint, urls []string) error {
	if ep.TaskID != taskID || ep.Port == 0 {
		return fmt.Errorf("no endpoint recorded for task %s", taskID)
	}
	switch {
	case kind == plan.Controller:
		_, err := d.listNodes(ctx, "http://"+ep.Addr())
		return err
	case kind.IsHead():
		var dl net.Dialer
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := dl.DialContext(cctx, "tcp", ep.Addr())
		if err != nil {
			return err
		}
		return c.Close()
	}
	if len(urls) == 0 {
		return fmt.Errorf("no controller runs")
	}
	var last error
	for _, base := range urls {
		body, _ := json.Marshal(map[string]bool{"drain": false})
		if err := d.controllerCall(ctx, http.MethodPut, base+"/v1/nodes/"+url.PathEscape(pod)+"/drain", body, nil); err != nil && !errors.Is(err, errControllerNotFound) {
			last = err
			continue
		}
		nodes, err := d.listNodes(ctx, base)
		if err != nil {
			last = err
			continue
		}
		for _, n := range nodes {
			if n.ID == pod && n.Live && !n.Draining {
				return nil
			}
		}
		return fmt.Errorf("node %s not live (or still draining) in %s/v1/nodes", pod, base)
	}
	return last
}

// restartPlan is POST /v1/plan/restart[?kind=K]: a rolling restart.
func (d *Driver) restartPlan(kind plan.PodKind) error {
	switch kind {
	case "", plan.Controller, plan.Node, plan.HDFSHead, plan.NFSHead, plan.S3Head:
	default:
		return fmt.Errorf("%w: kind %q: want controller, node, hdfs-head, nfs-head or s3-head", ErrBadRequest, kind)
	}
	names, ds := d.p.Restart(kind)
	if len(names) == 0 {
		return fmt.Errorf("%w: no launched pod of kind %q to restart", ErrBadRequest, kind)
	}
	d.log.WithField("pods", names).Info("scheduler: rolling restart")
	d.exec(d.runCtx, ds)
	return nil
}

// pausePlan and resumePlan are POST /v1/plan/pause and /resume.
func (d *Driver) pausePlan() {
	d.log.Info("scheduler: plan paused")
	d.p.Pause()
	d.exec(d.runCtx, nil) // stored
}

func (d *Driver) resumePlan() {
	d.log.Info("scheduler: plan resumed")
	d.exec(d.runCtx, d.p.Resume())
}

// planAction serves a POST on the plan: f runs on the owner goroutine
// once subscribed; the answer is the plan view.
func (d *Driver) planAction(f func(r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var v PlanView
		err := d.mutate(r.Context(), func() error {
			if err := f(r); err != nil {
				return err
			}
			v = d.planView()
			return nil
		})
		if err != nil {
			writeError(w, errorCode(err), err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// updateRoutes adds the plan's routes to mux.
func (d *Driver) updateRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/plan/restart", d.planAction(func(r *http.Request) error {
		return d.restartPlan(plan.PodKind(r.URL.Query().Get("kind")))
	}))
	mux.HandleFunc("POST /v1/plan/pause", d.planAction(func(*http.Request) error { d.pausePlan(); return nil }))
	mux.HandleFunc("POST /v1/plan/resume", d.planAction(func(*http.Request) error { d.resumePlan(); return nil }))
}

// RestartPlan is POST /v1/plan/restart: a rolling restart of every pod
// of kind ("": every pod).
func (c *Client) RestartPlan(ctx context.Context, kind plan.PodKind) (PlanView, error) {
	var p PlanView
	path := "/v1/plan/restart"
	if kind != "" {
		path += "?kind=" + url.QueryEscape(string(kind))
	}
	return p, c.call(ctx, http.MethodPost, path, nil, &p)
}

// PausePlan is POST /v1/plan/pause.
func (c *Client) PausePlan(ctx context.Context) (PlanView, error) {
	var p PlanView
	return p, c.call(ctx, http.MethodPost, "/v1/plan/pause", nil, &p)
}

// ResumePlan is POST /v1/plan/resume.
func (c *Client) ResumePlan(ctx context.Context) (PlanView, error) {
	var p PlanView
	return p, c.call(ctx, http.MethodPost, "/v1/plan/resume", nil, &p)
}
