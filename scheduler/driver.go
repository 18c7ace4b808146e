package scheduler

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/scheduler/plan"
	"github.com/sluice-streams/sluice/scheduler/plan/mesosconv"
)

// Driver runs the plan against Mesos. Make it with New, serve Handler,
// and call Run once.
type Driver struct {
	cfg Config
	log logrus.FieldLogger

	reqs   chan func()   // closures run by the owner goroutine
	ready  atomic.Bool   // subscribed with the plan loaded
	loaded atomic.Bool   // the plan is loaded: the owner goroutine serves d.reqs
	done   chan struct{} // closed when Run's loop has ended

	// Owned by Run's goroutine.
	runCtx   context.Context // Run's, for work started by API requests
	store    cluster.Session
	st       *state
	p        *plan.Plan
	eps      map[string]Endpoint
	fwID     string
	conv     mesosconv.Converter
	caller   calls.Caller // nil while not subscribed
	gen      int          // subscription generation
	cancel   context.CancelFunc
	lastSeen time.Time
	beat     time.Duration
	backoff  *backoff.ExponentialBackOff // waits between subscriptions
	offers   map[string]mesos.Offer      // outstanding offers by id
	accept   []string                    // the offer ids of the ACCEPT being built
	used     map[int]bool                // ports taken by the ACCEPT being built
	drains   map[string]bool
	// headKills: head tasks refreshHeads has killed (asked once each).
	headKills map[string]bool
	persist   error // a failed write, or ErrFrameworkRemoved: Run ends with it
	in        chan streamMsg
	drained   chan string
	wg        sync.WaitGroup

	// upd is the update plan's state (update.go).
	upd updateState
	// uninstalled: the uninstall plan finished, the framework is torn
	// down and the state deleted; Run idles until stopped.
	uninstalled bool
}

// streamMsg is what a subscription's goroutine reports.
type streamMsg struct {
	gen    int
	caller calls.Caller // set with resp once subscribed
	resp   mesos.Response
	ev     *scheduler.Event
	err    error // the subscription failed or the stream ended
}

// New checks cfg and returns a driver.
func New(cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Driver{
		cfg:       cfg,
		log:       cfg.Logger,
		reqs:      make(chan func()),
		done:      make(chan struct{}),
		in:        make(chan streamMsg, 64),
		drained:   make(chan string, 8),
		drains:    map[string]bool{},
		headKills: map[string]bool{},
		offers:    map[string]mesos.Offer{},
		backoff:   retry.NewBackoff(cfg.BackoffMin, cfg.BackoffMax),
	}, nil
}

// Ready reports whether the scheduler is subscribed with its plan loaded.
func (d *Driver) Ready() bool { return d.ready.Load() }

// do runs f on the owner goroutine and waits for it.
func (d *Driver) do(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	select {
	case d.reqs <- func() { defer close(ran); f() }:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.done:
		return ErrNotReady
	}
	<-ran
	return nil
}

// Run wins the election, loads the state, subscribes and drives the
// plan until ctx ends (nil) or leadership, the ZooKeeper session or a
// state write is lost (an error: the process should exit and be
// restarted).
func (d *Driver) Run(ctx context.Context) error {
	defer close(d.done)
	ctx, cancelAll := context.WithCancel(ctx)
	defer d.wg.Wait()
	defer cancelAll()

	d.runCtx = ctx
	store, err := d.openSession(ctx)
	if err != nil {
		return fmt.Errorf("scheduler: ZooKeeper: %w", err)
	}
	defer store.Close()
	defer func() {
		if d.uninstalled {
			dropElection(store) // after Resign (deferred below, run before)
		}
	}()
	d.store = store
	lead, err := store.Elect(ctx, keyLeader, d.cfg.ID)
	if err != nil {
		return fmt.Errorf("scheduler: election: %w", err)
	}
	defer lead.Resign()
	if !lead.IsLeader() {
		d.log.WithField("id", d.cfg.ID).Info("scheduler: waiting to lead")
	}
	for !lead.IsLeader() {
		select {
		case _, ok := <-lead.Changed():
			if !ok {
				return fmt.Errorf("%w: the candidacy ended", ErrLeadership)
			}
		case <-ctx.Done():
			return nil
		}
	}
	if err := d.load(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // the read or write failed because Run is ending
		}
		return err
	}
	d.loaded.Store(true)
	d.log.WithFields(logrus.Fields{"framework": d.fwID, "master": d.cfg.Master}).Info("scheduler: leading; subscribing")

	tick := time.NewTicker(d.cfg.Tick)
	defer tick.Stop()
	resub := time.NewTimer(0) // subscribe at once
	defer resub.Stop()
	defer d.closeStream()
	for {
		if d.persist != nil {
			if ctx.Err() != nil {
				return nil // the write failed because Run is ending
			}
			return d.persist
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-lead.Changed():
			if !ok || !lead.IsLeader() {
				return fmt.Errorf("%w: another scheduler leads", ErrLeadership)
			}
		case <-store.Expired():
			return fmt.Errorf("%w: %w", ErrLeadership, zkstore.ErrSessionExpired)
		case <-resub.C:
			if !d.uninstalled {
				d.subscribe(ctx)
			}
		case m := <-d.in:
			if m.gen != d.gen {
				if m.resp != nil {
					m.resp.Close()
				}
				continue
			}
			if m.err != nil && d.uninstalled {
				continue
			}
			if m.err != nil {
				d.closeStream()
				wait := d.backoff.NextBackOff()
				d.logNoSubscription(m.err, wait)
				resub.Reset(wait)
				continue
			}
			if m.resp != nil {
				d.caller = m.caller
				d.lastSeen = time.Now()
				continue
			}
			d.lastSeen = time.Now()
			d.handle(ctx, m.ev)
		case now := <-tick.C:
			if d.caller != nil && d.beat > 0 && now.Sub(d.lastSeen) > 3*d.beat {
				d.log.Warn("scheduler: no heartbeat from the master; re-subscribing")
				d.closeStream()
				resub.Reset(d.backoff.NextBackOff())
				continue
			}
			if d.Ready() {
				d.exec(ctx, d.p.OnTick(now))
			}
		case pod := <-d.drained:
			delete(d.drains, pod)
			d.log.WithField("pod", pod).Info("scheduler: node drained")
			d.exec(ctx, d.p.OnDrained(pod))
		case f := <-d.reqs:
			f()
		}
	}
}

// openSession opens the session of Run: Config.OpenSession's, or a
// ZooKeeper one.
func (d *Driver) openSession(ctx context.Context) (cluster.Session, error) {
	if d.cfg.OpenSession != nil {
		return d.cfg.OpenSession(ctx)
	}
	return zkstore.Opener(d.cfg.ZK, d.cfg.ZKRoot, d.cfg.ZKSessionTimeout, d.log)(ctx)
}

// load reads the framework id, plan and endpoints from ZooKeeper, or
// makes a new plan from the configured spec (stored at once).
func (d *Driver) load(ctx context.Context) error {
	d.st = newState()
	fwID, p, eps, err := d.st.load(ctx, d.store)
	if err != nil {
		return err
	}
	if d.cfg.ForgetFramework && fwID != "" {
		if err := d.st.forgetFrameworkID(ctx, d.store); err != nil {
			return err
		}
		d.log.WithField("framework", fwID).Warn("scheduler: forgot the stored framework id (--forget-framework): registering as a new framework")
		fwID = ""
	}
	switch {
	case p == nil:
		spec := d.cfg.Spec
		if spec.ServiceID, err = newServiceID(); err != nil {
			return err
		}
		p = plan.New(spec)
		d.log.WithFields(countFields(d.cfg.Spec)).WithField("service", spec.ServiceID).Info("scheduler: new plan")
	default:
		d.takePlacement(p)
		if err := d.checkRole(p.Spec()); err != nil {
			return err
		}
		if p.Spec().ServiceID == "" {
			// Stored before service ids (format 1): new reservations
			// carry the id from now on.
			id, err := newServiceID()
			if err != nil {
				return err
			}
			if err := p.SetServiceID(id); err != nil {
				return err
			}
			d.log.WithField("service", id).Info("scheduler: the stored plan predates service ids; gave it one")
		}
		// Stored by a scheduler that knew fewer kinds of head: the
		// configured count and resources of each missing kind join the
		// stored plan (no decision: not subscribed yet, Start revives).
		for _, k := range p.UnsetHeads() {
			h := d.cfg.Spec.HeadSpec(k)
			p.SetHeadResources(k, h.Resources)
			p.SetHeads(k, h.Count)
			d.log.WithFields(logrus.Fields{"kind": k, "count": h.Count}).Info("scheduler: the stored plan predates this kind of head; taking the configured count")
		}
	}
	if err := d.takeConfiguration(ctx, p); err != nil {
		return err
	}
	if sp := p.Spec(); !sameCounts(sp, d.cfg.Spec) {
		d.log.WithFields(countFields(sp)).Info("scheduler: the stored counts win over the command line's; change them with PUT /v1/counts")
	}
	if p.Spec().S3Heads.Count > 0 {
		if err := d.cfg.s3Ready(); err != nil {
			return fmt.Errorf("%w (the stored plan wants %d S3 heads)", err, p.Spec().S3Heads.Count)
		}
	}
	if d.cfg.Uninstall || p.Uninstalling() {
		if !d.cfg.Uninstall {
			d.log.Warn("scheduler: the stored plan is uninstalling; an uninstall cannot be cancelled: going on")
		}
		p.Uninstall() // the kills are sent once subscribed
		d.log.WithField("service", p.Spec().ServiceID).Warn("scheduler: uninstalling: every task is killed, every reservation and volume destroyed")
	}
	if err := d.st.savePlan(ctx, d.store, p); err != nil {
		return err
	}
	d.p, d.eps, d.fwID = p, eps, fwID
	build := d.cfg.Build
	if build == nil {
		build = d.cfg.executorTask
	}
	p.SetPorts(d.cfg.Spec.Ports)
	d.conv = mesosconv.Converter{Framework: d.cfg.Name, ServiceID: p.Spec().ServiceID, Role: d.cfg.Role, Principal: d.cfg.Principal, FrameworkID: fwID, Build: d.taskBuilder(build)}
	if p.UninstallDone() && fwID == "" {
		// Nothing installed, or nothing left of it: no framework to
		// tear down, no subscription needed.
		d.finishUninstall(ctx)
		return d.persist
	}
	return nil
}

func (d *Driver) frameworkInfo() *mesos.FrameworkInfo {
	role := d.cfg.Role
	checkpoint := true
	failover := d.cfg.FailoverTimeout.Seconds()
	fi := &mesos.FrameworkInfo{
		Name: d.cfg.Name, User: d.cfg.User, Role: &role,
		Checkpoint: &checkpoint, FailoverTimeout: &failover,
		Capabilities: []mesos.FrameworkInfo_Capability{
			{Type: mesos.FrameworkInfo_Capability_RESERVATION_REFINEMENT},
			{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
			// Offers from agents of other regions too: the plan places
			// pods there only where a constraint names the region.
			{Type: mesos.FrameworkInfo_Capability_REGION_AWARE},
		},
	}
	if d.cfg.Principal != "" {
		p := d.cfg.Principal
		fi.Principal = &p
	}
	if d.fwID != "" {
		fi.ID = &mesos.FrameworkID{Value: d.fwID}
	}
	return fi
}

// subscribe starts a new subscription; its goroutine reports on d.in.
func (d *Driver) subscribe(ctx context.Context) {
	d.closeStream()
	d.gen++
	gen := d.gen
	sctx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	call := calls.Subscribe(d.frameworkInfo())
	send := func(m streamMsg) bool {
		m.gen = gen
		select {
		case d.in <- m:
			return true
		case <-sctx.Done():
			return false
		}
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		var caller calls.Caller
		if d.cfg.Auth != nil {
			caller = d.cfg.Auth.Caller(d.cfg.Master)
		} else {
			caller = httpsched.NewCaller(httpcli.New(httpcli.Endpoint(d.cfg.Master)))
		}
		resp, err := caller.Call(sctx, call)
		if err != nil {
			send(streamMsg{err: err})
			return
		}
		defer resp.Close()
		if !send(streamMsg{caller: caller, resp: resp}) {
			return
		}
		for {
			ev := new(scheduler.Event)
			if err := resp.Decode(ev); err != nil {
				if sctx.Err() == nil {
					send(streamMsg{err: fmt.Errorf("event stream: %w", err)})
				}
				return
			}
			if !send(streamMsg{ev: ev}) {
				return
			}
		}
	}()
}

// closeStream ends the current subscription, if any.
func (d *Driver) closeStream() {
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
	d.caller = nil
	d.offers = map[string]mesos.Offer{}
	d.ready.Store(false)
}

func (d *Driver) handle(ctx context.Context, ev *scheduler.Event) {
	switch ev.Type {
	case scheduler.Event_SUBSCRIBED:
		sub := ev.Subscribed
		id := sub.FrameworkID.Value
		if id != d.fwID {
			if err := d.st.frameworkID.store(ctx, d.store, []byte(id)); err != nil {
				d.persist = err
				return
			}
			d.log.WithField("framework", id).Info("scheduler: registered")
		}
		d.fwID, d.conv.FrameworkID = id, id
		d.conv.Region = sub.GetMasterInfo().GetDomain().GetFaultDomain().GetRegion().Name
		d.beat = time.Duration(sub.GetHeartbeatIntervalSeconds() * float64(time.Second))
		d.backoff.Reset()
		d.ready.Store(true)
		d.log.WithField("framework", id).Info("scheduler: subscribed; reconciling")
		d.exec(ctx, d.p.Start(time.Now()))
		if d.p.Uninstalling() {
			d.exec(ctx, d.p.Uninstall())
			return
		}
		d.startUpdate(ctx)
		// Drains a previous scheduler began go on.
		for _, pod := range d.p.Pods() {
			if pod.Draining {
				d.startDrain(ctx, pod.Name)
			}
		}
	case scheduler.Event_OFFERS:
		var os []plan.Offer
		for _, o := range ev.Offers.Offers {
			d.offers[o.ID.Value] = o
			os = append(os, d.conv.Offer(o))
		}
		d.exec(ctx, d.p.OnOffers(os))
	case scheduler.Event_RESCIND:
		delete(d.offers, ev.Rescind.OfferID.Value)
		d.p.OnRescind(ev.Rescind.OfferID.Value)
	case scheduler.Event_UPDATE:
		st := ev.Update.Status
		d.log.WithFields(logrus.Fields{"task": st.TaskID.Value, "state": st.GetState().String(), "message": st.GetMessage()}).Debug("scheduler: status")
		d.exec(ctx, d.p.OnStatus(mesosconv.Status(st)))
		d.refreshHeads(ctx)
		if len(st.UUID) > 0 && d.persist == nil {
			// Acknowledged once the plan has seen and stored it.
			d.call(ctx, calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID).With(calls.Framework(d.fwID)))
		}
	case scheduler.Event_FAILURE:
		if a := ev.Failure.GetAgentID(); a != nil && ev.Failure.ExecutorID == nil {
			d.log.WithField("agent", a.Value).Warn("scheduler: agent lost")
			d.exec(ctx, d.p.OnAgentLost(a.Value))
		}
	case scheduler.Event_ERROR:
		msg := ev.Error.GetMessage()
		d.log.WithField("message", msg).Error("scheduler: the master reports an error")
		// Mesos says a removed framework is refused by this message
		// alone (src/master/master.cpp, validateFramework): there is no
		// code to test instead. Re-subscribing can never succeed.
		if msg == frameworkRemovedMessage && d.fwID != "" && d.p.UninstallDone() {
			// Torn down already (the scheduler stopped before it
			// deleted the state): the uninstall ends here.
			d.fwID = ""
			d.finishUninstall(ctx)
			return
		}
		if msg == frameworkRemovedMessage && d.fwID != "" {
			d.persist = fmt.Errorf("%w: framework %s (torn down, or its failover timeout of %s passed); "+
				"start `sluice scheduler --forget-framework` once to register as a new framework, "+
				"which adopts the pods' reservations and volumes (docs/OPERATIONS.md)",
				ErrFrameworkRemoved, d.fwID, d.cfg.FailoverTimeout)
		}
	}
}

// frameworkRemovedMessage is the ERROR event's message to a framework
// the master has removed when it subscribes with its id.
const frameworkRemovedMessage = "Framework has been removed"

// exec stores the plan, then carries out its decisions. A failed write
// stops everything (d.persist); a failed Mesos call is logged: the
// plan's reconciliation and offer cycle recover from lost calls.
func (d *Driver) exec(ctx context.Context, ds []plan.Decision) {
	if d.persist != nil || d.uninstalled {
		return
	}
	if err := d.st.savePlan(ctx, d.store, d.p); err != nil {
		d.persist = err
		return
	}
	for _, dec := range ds {
		switch dec.Kind {
		case plan.Drain:
			d.startDrain(ctx, dec.Pod)
			continue
		case plan.CheckReady:
			d.startReadyCheck(ctx, dec)
			continue
		case plan.Rebalance:
			d.log.WithField("pods", dec.Pods).Info("scheduler: nodes added; the controller rebalances containers onto them")
			continue
		}
		if dec.Kind == plan.Decline && dec.Reason != "" {
			d.log.WithFields(logrus.Fields{"offers": dec.OfferIDs, "reason": dec.Reason}).Debug("scheduler: offer declined")
		}
		d.accept, d.used = dec.OfferIDs, map[int]bool{}
		call, err := d.conv.Call(dec)
		d.accept, d.used = nil, nil
		if err != nil {
			d.log.WithError(err).WithField("decision", dec.String()).Error("scheduler: decision dropped")
			continue
		}
		if dec.Kind == plan.Accept {
			// The endpoints the builder chose are stored before the launch.
			if err := d.st.saveEndpoints(ctx, d.store, d.eps); err != nil {
				d.persist = err
				return
			}
		}
		for _, id := range dec.OfferIDs {
			delete(d.offers, id)
		}
		d.log.WithField("decision", dec.String()).Debug("scheduler: call")
		d.call(ctx, call)
	}
	if d.p.UninstallDone() {
		d.finishUninstall(ctx)
	}
}

func (d *Driver) call(ctx context.Context, call *scheduler.Call) {
	if d.caller == nil {
		d.log.WithField("call", call.Type.String()).Warn("scheduler: not subscribed; call dropped")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := d.caller.Call(cctx, call)
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		d.log.WithError(err).WithField("call", call.Type.String()).Warn("scheduler: call failed")
	}
}

// countFields are a spec's counts, for the log.
func countFields(sp plan.Spec) logrus.Fields {
	return logrus.Fields{"controllers": sp.Controllers, "nodes": sp.Nodes, "heads": sp.Heads, "nfsHeads": sp.NFSHeads.Count, "s3Heads": sp.S3Heads.Count}
}

// sameCounts reports whether two specs want as many pods of each kind.
func sameCounts(a, b plan.Spec) bool {
	if a.Controllers != b.Controllers || a.Nodes != b.Nodes {
		return false
	}
	for _, k := range plan.HeadKinds {
		if a.HeadSpec(k).Count != b.HeadSpec(k).Count {
			return false
		}
	}
	return true
}

// taskBuilder wraps build: it picks the task's port from the offer being
// accepted and records the task's endpoint.
func (d *Driver) taskBuilder(build TaskBuilder) mesosconv.TaskBuilder {
	return func(op plan.Op, agentID string, res mesos.Resources) mesos.TaskInfo {
		want := []int{d.cfg.NodePort}
		switch op.PodKind {
		case plan.Controller:
			want = []int{d.cfg.ControllerPort}
		case plan.HDFSHead:
			want = []int{d.cfg.HeadRPCPort, d.cfg.HeadDataPort, d.cfg.HeadHTTPPort}
		case plan.NFSHead:
			want = []int{d.cfg.NFSHeadPort}
		case plan.S3Head:
			want = []int{d.cfg.S3HeadPort}
		}
		var offer *mesos.Offer
		for _, id := range d.accept {
			if o, ok := d.offers[id]; ok {
				offer = &o
				break
			}
		}
		host := ""
		if offer != nil {
			host = offer.Hostname
		}
		ports := make([]int, len(want))
		for i, w := range want {
			if i < len(op.Ports) {
				ports[i] = op.Ports[i] // the plan took it from the offer; res holds it
				continue
			}
			port, portRes := portFrom(offer, w, d.used)
			if portRes != nil {
				res = append(res, *portRes)
			} else if w == 0 {
				d.log.WithField("pod", op.Pod).Warn("scheduler: the offer has no port for the task")
			}
			ports[i] = port
		}
		ep := Endpoint{TaskID: op.TaskID, Host: host, Port: ports[0]}
		if op.PodKind == plan.HDFSHead {
			ep.DataPort, ep.HTTPPort = ports[1], ports[2]
		}
		if op.PodKind.IsHead() {
			// Heads are placed once every controller runs: the first
			// one's REST API serves this head (see refreshHeads).
			if urls := d.controllerURLs(); len(urls) > 0 {
				ep.Controller = urls[0]
			} else {
				d.log.WithField("pod", op.Pod).Warn("scheduler: no running controller to give the head")
			}
		}
		d.eps[op.Pod] = ep
		return build(op, ep, res)
	}
}

// restart kills a pod's task; the plan relaunches it in place.
func (d *Driver) restart(name string) error {
	pod, ok := d.p.Pod(name)
	if !ok {
		return fmt.Errorf("%w: %s", plan.ErrNoPod, name)
	}
	if pod.TaskID == "" || pod.State.Terminal() {
		return fmt.Errorf("%w: pod %s has no live task (state %q)", ErrBadRequest, name, pod.State)
	}
	d.log.WithFields(logrus.Fields{"pod": name, "task": pod.TaskID}).Info("scheduler: restarting pod")
	// The plan relaunches it in place on the terminal status.
	d.exec(d.runCtx, []plan.Decision{{Kind: plan.Kill, TaskID: pod.TaskID, AgentID: pod.AgentID, Pod: name}})
	return nil
}

// refreshHeads restarts the running heads whose controller (the URL on
// their command line) does not run there while another controller
// runs: the relaunch gives them a running one. Called after each status
// update. With no controller running nothing is done, so a controller
// restarting in place at the same address leaves its heads alone.
func (d *Driver) refreshHeads(ctx context.Context) {
	urls := d.controllerURLs()
	if len(urls) == 0 || d.persist != nil {
		return
	}
	current := map[string]bool{}
	for _, pod := range d.p.Pods() {
		current[pod.TaskID] = true
	}
	for id := range d.headKills {
		if !current[id] {
			delete(d.headKills, id) // relaunched since: forget it
		}
	}
	live := map[string]bool{}
	for _, u := range urls {
		live[u] = true
	}
	var ds []plan.Decision
	for _, pod := range d.p.Pods() {
		ep, ok := d.eps[pod.Name]
		if !pod.Kind.IsHead() || pod.State != plan.TaskRunning || !ok || ep.TaskID != pod.TaskID || ep.Controller == "" || live[ep.Controller] || d.headKills[pod.TaskID] {
			continue
		}
		d.log.WithFields(logrus.Fields{"pod": pod.Name, "controller": ep.Controller, "now": urls[0]}).Info("scheduler: the head's controller moved; restarting the head")
		d.headKills[pod.TaskID] = true
		ds = append(ds, plan.Decision{Kind: plan.Kill, TaskID: pod.TaskID, AgentID: pod.AgentID, Pod: pod.Name})
	}
	if len(ds) > 0 {
		d.exec(ctx, ds)
	}
}
