package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Goal is what the operator wants of a pod.
type Goal string

const (
	GoalRun          Goal = "run"
	GoalDecommission Goal = "decommission" // lowering the count: drain, kill, destroy, unreserve
)

// Pod is one controller, node or head instance and what the plan
// knows of it. A node pod keeps its agent, reservation and volume across task
// restarts: it is relaunched only where its volume is.
type Pod struct {
	Name  string  `msgpack:"name"`
	Kind  PodKind `msgpack:"kind"`
	Index int     `msgpack:"index"`
	Goal  Goal    `msgpack:"goal"`

	AgentID       string    `msgpack:"agent"`
	ReservationID string    `msgpack:"reservation"`
	Reserved      Resources `msgpack:"reserved"` // besides the volume
	Volume        *Volume   `msgpack:"volume"`
	// Confirmed: the reservation is known to exist (seen in an offer or
	// used by a running task). An unconfirmed placement whose agent
	// offers without the reservation is forgotten (the ACCEPT failed).
	Confirmed bool `msgpack:"confirmed"`

	TaskID    string    `msgpack:"task"`
	State     TaskState `msgpack:"state"`
	Attempts  int       `msgpack:"attempts"`
	AgentLost bool      `msgpack:"agentLost"`
	Draining  bool      `msgpack:"draining"`
	// Where is the agent's hostname, fault domain and attributes, from
	// its offers (nil in plans stored before the key, until the agent
	// offers again): what placement constraints count.
	Where *Where `msgpack:"where,omitempty"`
	// Ports are the ports reserved with a node's reservation (none in
	// plans stored before the key: such a node takes its ports
	// unreserved).
	Ports []int `msgpack:"ports,omitempty"`

	// Config is the configuration id the pod was last launched with
	// (SetTargets; "" in plans stored before ids were kept). Restart:
	// a rolling restart wants it relaunched. Step: where it is in its
	// update or restart step (update.go).
	Config string `msgpack:"config,omitempty"`
	// Resizing is the size (cpus, mem) a node's update step asked its
	// reservation to take, until the relaunched task runs: only then is
	// it known to have taken effect (Reserved). nil when none is asked.
	Resizing *Resources `msgpack:"resizing,omitempty"`
	Restart  bool       `msgpack:"restart,omitempty"`
	Step     UpdateStep `msgpack:"step,omitempty"`
}

func (p *Pod) live() bool { return p.TaskID != "" && !p.State.Terminal() }

func (p *Pod) persistent() bool { return p.Kind == Node }

// orphan is a reservation (and volume) no pod owns any more, to be
// destroyed and unreserved when its agent offers it.
type orphan struct {
	AgentID       string    `msgpack:"agent"`
	Pod           string    `msgpack:"pod"`
	ReservationID string    `msgpack:"reservation"`
	Reserved      Resources `msgpack:"reserved"`
	Volume        *Volume   `msgpack:"volume"`
}

// Plan is the scheduler's deterministic core: events in, decisions
// out. It does no I/O and reads no clock (times are arguments). It is
// not safe for concurrent use: the driver calls it from one goroutine.
type Plan struct {
	spec    Spec
	timing  Timing
	pods    map[string]*Pod
	orphans []orphan
	seq     int
	// unsetHeads: the head kinds the stored plan predates (its spec has
	// no count for them); see UnsetHeads.
	unsetHeads map[PodKind]bool
	// rebalance lists nodes added by a scale-up whose Rebalance is due
	// once they all run.
	rebalance []string
	// targets: the configuration id of each kind (SetTargets); handover:
	// nodes are drained before their update; paused: no step starts
	// (stored).
	targets  map[PodKind]string
	handover bool
	paused   bool
	// uninstalling: the uninstall plan runs (uninstall.go); released:
	// the reservations it released, until an offer from their agent
	// confirms they are gone.
	uninstalling bool
	released     []orphan

	suppressed      bool
	reconciling     map[string]TaskRef
	reconcileSentAt time.Time
	lastImplicit    time.Time
	held            []Offer // offers held while explicit reconciliation runs
	// waiting: why each pod that wants a launch was last passed over by
	// an offer (ports, placement constraint, region), for Progress.
	waiting map[string]string
	// resizeRefused: the nodes whose reservation an update could not
	// grow, and why (resize; not stored).
	resizeRefused map[string]string
}

// New returns a plan for spec with no tasks known.
func New(spec Spec) *Plan {
	p := &Plan{pods: map[string]*Pod{}, reconciling: map[string]TaskRef{}, unsetHeads: map[PodKind]bool{}, waiting: map[string]string{}, resizeRefused: map[string]string{}}
	p.setSpec(spec)
	p.ensurePods()
	return p
}

func (p *Plan) setSpec(spec Spec) {
	if spec.VolumePath == "" {
		spec.VolumePath = "wal"
	}
	p.spec = spec
	p.timing = spec.Timing.withDefaults()
}

// Spec returns the desired state.
func (p *Plan) Spec() Spec { return p.spec }

// Pods returns copies of the pods in deploy order (controllers, nodes,
// then the heads of each kind in HeadKinds' order, each by index).
func (p *Plan) Pods() []Pod {
	var out []Pod
	for _, pod := range p.ordered() {
		out = append(out, *pod)
	}
	return out
}

// Pod returns a copy of one pod.
func (p *Plan) Pod(name string) (Pod, bool) {
	if pod := p.pods[name]; pod != nil {
		return *pod, true
	}
	return Pod{}, false
}

func podName(kind PodKind, i int) string { return fmt.Sprintf("%s-%d", kind, i) }

func (p *Plan) ordered() []*Pod {
	out := make([]*Pod, 0, len(p.pods))
	for _, pod := range p.pods {
		out = append(out, pod)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind.rank() != b.Kind.rank() {
			return a.Kind.rank() < b.Kind.rank()
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Name < b.Name // only a damaged stored plan gets here
	})
	return out
}

// ensurePods creates the pods the counts call for; it returns the new
// node pods' names.
func (p *Plan) ensurePods() (addedNodes []string) {
	for _, kind := range append([]PodKind{Controller, Node}, HeadKinds...) {
		for i := 0; i < p.spec.count(kind); i++ {
			name := podName(kind, i)
			if pod := p.pods[name]; pod != nil {
				if pod.Goal == GoalDecommission && !pod.Draining && !pod.live() {
					pod.Goal = GoalRun // raised again before anything was done
				}
				continue
			}
			p.pods[name] = &Pod{Name: name, Kind: kind, Index: i, Goal: GoalRun}
			if kind == Node {
				addedNodes = append(addedNodes, name)
			}
		}
	}
	sort.Strings(addedNodes)
	return addedNodes
}

// SetCounts changes the desired numbers of controllers and nodes.
// Raising starts new pods (and, for nodes, a Rebalance once they all
// run). Lowering removes the highest indexes: a node with a live task
// is drained first (Drain; the driver calls OnDrained when its
// containers are handed over), then killed, then its volume destroyed
// and its reservation released; a controller is killed at once.
func (p *Plan) SetCounts(controllers, nodes int) []Decision {
	p.spec.Controllers, p.spec.Nodes = controllers, nodes
	return p.applyCounts()
}

// SetHeads changes the desired number of heads of one kind (0: none;
// a kind that is no head is ignored). Raising starts new head pods
// once every controller runs; lowering kills the highest indexes at
// once (a head keeps no state).
func (p *Plan) SetHeads(kind PodKind, n int) []Decision {
	if !kind.IsHead() {
		return nil
	}
	delete(p.unsetHeads, kind)
	h := p.spec.HeadSpec(kind)
	h.Count = n
	p.spec.SetHeadSpec(kind, h)
	return p.applyCounts()
}

// SetHeadResources sets the resources of the heads of one kind placed
// from now on (running heads keep theirs).
func (p *Plan) SetHeadResources(kind PodKind, r Resources) {
	h := p.spec.HeadSpec(kind)
	h.Resources = r
	p.spec.SetHeadSpec(kind, h)
}

// UnsetHeads lists, in HeadKinds' order, the kinds of head the stored
// plan predates: its spec has no count for them (the driver then takes
// the configured ones with SetHeadResources and SetHeads).
func (p *Plan) UnsetHeads() []PodKind {
	var out []PodKind
	for _, k := range HeadKinds {
		if p.unsetHeads[k] {
			out = append(out, k)
		}
	}
	return out
}

// applyCounts makes the pods match the spec's counts.
func (p *Plan) applyCounts() []Decision {
	if p.uninstalling {
		return nil // nothing is placed again once the uninstall began
	}
	var ds []Decision
	added := p.ensurePods()
	if len(added) > 0 {
		p.rebalance = append(p.rebalance, added...)
	}
	for _, pod := range p.ordered() {
		if pod.Index < p.spec.count(pod.Kind) || pod.Goal == GoalDecommission {
			continue
		}
		pod.Goal = GoalDecommission
		pod.Step, pod.Restart = StepNone, false // no update step for a pod that goes
		p.dropFromRebalance(pod.Name)
		switch {
		case pod.Kind == Node && pod.live() && pod.State == TaskRunning:
			pod.Draining = true
			ds = append(ds, Decision{Kind: Drain, Pod: pod.Name, AgentID: pod.AgentID})
		case pod.live():
			ds = append(ds, p.kill(pod))
		default:
			p.retire(pod)
		}
	}
	return append(ds, p.reviveIfNeeded()...)
}

func (p *Plan) dropFromRebalance(name string) {
	out := p.rebalance[:0]
	for _, n := range p.rebalance {
		if n != name {
			out = append(out, n)
		}
	}
	p.rebalance = out
}

// OnDrained tells the plan that a draining node's containers now live
// elsewhere: its task is killed.
func (p *Plan) OnDrained(podName string) []Decision {
	pod := p.pods[podName]
	if pod != nil && pod.Goal == GoalRun && pod.Step == StepDrain && pod.Draining {
		return p.updateDrained(pod)
	}
	if pod == nil || pod.Goal != GoalDecommission || !pod.Draining {
		return nil
	}
	pod.Draining = false
	if pod.live() {
		return []Decision{p.kill(pod)}
	}
	p.retire(pod)
	return p.reviveIfNeeded()
}

// Replace abandons a node's reservation and volume (the operator's
// "replace", e.g. for an agent that will not come back): the pod is
// launched anew wherever resources are offered; the old reservation is
// destroyed if its agent ever offers it again.
func (p *Plan) Replace(podName string) ([]Decision, error) {
	pod := p.pods[podName]
	if pod == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPod, podName)
	}
	if p.uninstalling {
		return nil, fmt.Errorf("%w: pod %s is not replaced", ErrUninstalling, podName)
	}
	var ds []Decision
	if pod.live() && !pod.AgentLost {
		ds = append(ds, p.kill(pod))
	}
	p.abandonPlacement(pod, true)
	if pod.State == TaskUnreachable {
		pod.State = TaskLost
	}
	if pod.Step != StepNone {
		// In an update step: the new placement runs the target
		// configuration; what is left of the step is its readiness. A
		// drain of the old placement no longer concerns it (OnDrained).
		pod.Step, pod.Draining = StepRelaunch, false
	}
	return append(ds, p.reviveIfNeeded()...), nil
}

// abandonPlacement forgets where pod was placed, to place it anew
// wherever resources are offered. With keep, its reservation (and
// volume) becomes an orphan, destroyed if its agent ever offers it
// again; without (the agent is gone for good), it is forgotten.
func (p *Plan) abandonPlacement(pod *Pod, keep bool) {
	if keep && pod.ReservationID != "" {
		p.orphans = append(p.orphans, orphan{AgentID: pod.AgentID, Pod: pod.Name, ReservationID: pod.ReservationID, Reserved: pod.leastReserved(), Volume: pod.Volume})
	}
	pod.AgentID, pod.ReservationID, pod.Reserved, pod.Volume, pod.Confirmed, pod.AgentLost = "", "", Resources{}, nil, false, false
	pod.Where, pod.Ports, pod.Resizing = nil, nil, nil
	delete(p.resizeRefused, pod.Name)
}

// leastReserved is what a node's reservation holds at the least: its
// Reserved, or less where a resize it asked for shrinks it and may have
// taken effect. An orphan is released once an offer holds that much of
// it (useOffer).
func (pod *Pod) leastReserved() Resources {
	r := pod.Reserved
	if z := pod.Resizing; z != nil {
		r.CPUs, r.MemMB = min(r.CPUs, z.CPUs), min(r.MemMB, z.MemMB)
	}
	return r
}

func (p *Plan) kill(pod *Pod) Decision {
	pod.State = TaskKilling
	return Decision{Kind: Kill, TaskID: pod.TaskID, AgentID: pod.AgentID, Pod: pod.Name}
}

// retire removes a decommissioned pod whose task is gone, keeping its
// reservation as an orphan to clean up.
func (p *Plan) retire(pod *Pod) {
	if pod.ReservationID != "" {
		p.orphans = append(p.orphans, orphan{AgentID: pod.AgentID, Pod: pod.Name, ReservationID: pod.ReservationID, Reserved: pod.leastReserved(), Volume: pod.Volume})
	}
	delete(p.pods, pod.Name)
	delete(p.resizeRefused, pod.Name)
}

func (p *Plan) podByTask(taskID string) *Pod {
	for _, pod := range p.pods {
		if pod.TaskID == taskID && taskID != "" {
			return pod
		}
	}
	return nil
}

// Start is called once the driver has subscribed (first time or after
// a failover): it revives offers and reconciles every task the plan
// believes live, explicitly. Offers are held, not used, until each of
// those tasks has been answered.
func (p *Plan) Start(now time.Time) []Decision {
	p.suppressed = false
	p.lastImplicit = now
	p.reconciling = map[string]TaskRef{}
	p.held = nil
	ds := []Decision{{Kind: Revive}}
	var refs []TaskRef
	for _, pod := range p.ordered() {
		if pod.live() || pod.State == TaskUnreachable {
			ref := TaskRef{TaskID: pod.TaskID, AgentID: pod.AgentID}
			refs = append(refs, ref)
			p.reconciling[pod.TaskID] = ref
		}
	}
	if len(refs) > 0 {
		p.reconcileSentAt = now
		ds = append(ds, Decision{Kind: Reconcile, Tasks: refs})
	}
	return append(ds, p.resumeSteps()...)
}

// Reconciling reports whether explicit reconciliation is still waiting
// for answers.
func (p *Plan) Reconciling() bool { return len(p.reconciling) > 0 }

// OnTick is the driver's timer: it resends explicit reconciliation for
// tasks still unanswered after Timing.ReconcileRetry, and asks for
// implicit reconciliation every Timing.ImplicitReconcile.
func (p *Plan) OnTick(now time.Time) []Decision {
	if len(p.reconciling) > 0 {
		if now.Sub(p.reconcileSentAt) < p.timing.ReconcileRetry {
			return nil
		}
		p.reconcileSentAt = now
		var refs []TaskRef
		for _, id := range sortedKeys(p.reconciling) {
			refs = append(refs, p.reconciling[id])
		}
		return []Decision{{Kind: Reconcile, Tasks: refs}}
	}
	if now.Sub(p.lastImplicit) >= p.timing.ImplicitReconcile {
		p.lastImplicit = now
		return []Decision{{Kind: Reconcile}}
	}
	return nil
}

// OnStatus takes a task status update. (Acknowledging it is the
// driver's business.)
func (p *Plan) OnStatus(st Status) []Decision {
	var ds []Decision
	_, wasReconciling := p.reconciling[st.TaskID]
	delete(p.reconciling, st.TaskID)
	pod := p.podByTask(st.TaskID)
	switch {
	case pod == nil:
		// A task of ours the plan no longer wants (an older attempt, or
		// a pod removed meanwhile): make sure it is gone.
		if !st.State.Terminal() && st.State != TaskUnreachable {
			ds = append(ds, Decision{Kind: Kill, TaskID: st.TaskID, AgentID: st.AgentID})
		}
	case pod.State == TaskKilling && !st.State.Terminal() && st.Reconciliation:
		// Still being killed; a reconciliation answer changes nothing.
	default:
		ds = append(ds, p.podStatus(pod, st)...)
	}
	if wasReconciling && len(p.reconciling) == 0 && len(p.held) > 0 {
		held := p.held
		p.held = nil
		ds = append(ds, p.useOffers(held)...)
	}
	return ds
}

func (p *Plan) podStatus(pod *Pod, st Status) []Decision {
	pod.State = st.State
	step := p.stepStatus(pod)
	switch st.State.Class() {
	case ClassActive:
		if pod.Goal == GoalUninstall && st.State != TaskKilling {
			return []Decision{p.kill(pod)} // an update sent before the kill
		}
		if st.State != TaskRunning {
			return nil
		}
		pod.AgentLost = false
		if pod.ReservationID != "" {
			pod.Confirmed = true
		}
		if pod.Resizing != nil {
			// The task runs on the resized reservation: the resize took
			// effect.
			pod.Reserved, pod.Resizing = *pod.Resizing, nil
		}
		return append(append(step, p.rebalanceIfReady()...), p.nextStep()...)
	case ClassUnreachable:
		pod.AgentLost = pod.persistent()
		return p.reviveIfNeeded() // a controller or head is relaunched elsewhere
	case ClassUnclassified:
		return nil // wait for a state the plan knows (see ClassUnclassified)
	case ClassLost:
		pod.AgentLost = pod.persistent() // a node waits for its agent
	case ClassGone:
		// Relaunched in place if the agent offers the reservation still,
		// placed anew if it offers without it (useOffer).
	case ClassAgentRemoved:
		// The agent is gone for good, and a node's volume with it.
		// Mesos never lets a gone agent register again: no orphan
		// (a decommissioned pod is retired below with nothing to clean).
		p.abandonPlacement(pod, false)
	}
	if pod.Goal == GoalDecommission || pod.Goal == GoalUninstall {
		if pod.Draining {
			// The task died while its containers were being handed over:
			// the drain goes on without it; OnDrained retires the pod.
			return nil
		}
		p.retire(pod)
	}
	return p.reviveIfNeeded()
}

// OnAgentLost marks the tasks on a lost agent (Mesos FAILURE event for
// the agent). Node pods wait for the agent to come back: they are never
// moved unless the operator calls Replace.
func (p *Plan) OnAgentLost(agentID string) []Decision {
	for _, pod := range p.ordered() {
		if pod.AgentID != agentID || !pod.live() {
			continue
		}
		pod.State = TaskLost
		pod.AgentLost = pod.persistent()
		delete(p.reconciling, pod.TaskID)
		if (pod.Goal == GoalDecommission || pod.Goal == GoalUninstall) && !pod.Draining {
			p.retire(pod)
		}
	}
	return p.reviveIfNeeded()
}

// OnRescind forgets a rescinded offer the plan was holding.
func (p *Plan) OnRescind(offerID string) {
	out := p.held[:0]
	for _, o := range p.held {
		if o.ID != offerID {
			out = append(out, o)
		}
	}
	p.held = out
}

// OnOffers decides what to do with offers: each is accepted (reserve,
// create a volume, launch; or launch on an existing reservation; or
// destroy and unreserve an orphan) or declined with a filter. During
// explicit reconciliation offers are held and used once it ends.
func (p *Plan) OnOffers(offers []Offer) []Decision {
	if len(p.reconciling) > 0 {
		p.held = append(p.held, offers...)
		return nil
	}
	return p.useOffers(offers)
}

func (p *Plan) needsLaunch(pod *Pod) bool {
	if pod.Goal != GoalRun {
		return false
	}
	if pod.TaskID == "" || pod.State.Terminal() {
		return true
	}
	return pod.State == TaskUnreachable && !pod.persistent()
}

func (p *Plan) controllersReady() bool {
	for _, pod := range p.pods {
		if pod.Kind == Controller && pod.Goal == GoalRun && pod.State != TaskRunning {
			return false
		}
	}
	return true
}

// pendingWork reports whether offers are still wanted.
func (p *Plan) pendingWork() bool {
	if len(p.orphans) > 0 || len(p.released) > 0 {
		return true
	}
	for _, pod := range p.pods {
		if p.needsLaunch(pod) {
			return true
		}
	}
	return false
}

func (p *Plan) reviveIfNeeded() []Decision {
	if p.suppressed && p.pendingWork() {
		p.suppressed = false
		return []Decision{{Kind: Revive}}
	}
	return nil
}

func (p *Plan) rebalanceIfReady() []Decision {
	if len(p.rebalance) == 0 {
		return nil
	}
	for _, name := range p.rebalance {
		if pod := p.pods[name]; pod != nil && pod.State != TaskRunning {
			return nil
		}
	}
	pods := p.rebalance
	p.rebalance = nil
	return []Decision{{Kind: Rebalance, Pods: pods}}
}

func (p *Plan) launch(pod *Pod, reservationID string, res Resources, vol *Volume, ports []int) Op {
	delete(p.waiting, pod.Name)
	pod.Attempts++
	pod.TaskID = fmt.Sprintf("%s__%d", pod.Name, pod.Attempts)
	pod.State = TaskStaging
	pod.AgentLost = false
	pod.Config = p.targets[pod.Kind]
	return Op{Kind: OpLaunch, Pod: pod.Name, PodKind: pod.Kind, Index: pod.Index, ReservationID: reservationID, Resources: res, Volume: vol, TaskID: pod.TaskID, Ports: ports}
}

func (p *Plan) useOffers(offers []Offer) []Decision {
	offers = append([]Offer(nil), offers...)
	sort.Slice(offers, func(i, j int) bool { return offers[i].ID < offers[j].ID })
	var ds []Decision
	for _, o := range offers {
		ops, why := p.useOffer(o)
		if len(ops) > 0 {
			ds = append(ds, Decision{Kind: Accept, OfferIDs: []string{o.ID}, AgentID: o.AgentID, Ops: ops})
			continue
		}
		refuse := p.timing.LongRefuse
		if p.pendingWork() {
			refuse = p.timing.ShortRefuse
		}
		ds = append(ds, Decision{Kind: Decline, OfferIDs: []string{o.ID}, RefuseSeconds: refuse.Seconds(), Reason: why})
	}
	if !p.suppressed && !p.pendingWork() && len(offers) > 0 {
		p.suppressed = true
		ds = append(ds, Decision{Kind: Suppress})
	}
	return ds
}

// useOffer returns the operations for offer o and, when it has none,
// why the pods that want a launch could not use it ("" if none wants).
func (p *Plan) useOffer(o Offer) ([]Op, string) {
	var ops []Op
	var why []string
	passOver := func(pod *Pod, reason string) {
		reason = "offer from " + o.Hostname + ": " + reason
		p.waiting[pod.Name] = reason
		why = append(why, pod.Name+": "+reason)
	}
	takenPorts := map[int]bool{}
	for _, pod := range p.pods {
		if pod.AgentID == o.AgentID {
			pod.Where = whereOf(o) // refreshed: attributes may change
		}
	}
	ours := p.ownReservations(o)
	if p.uninstalling {
		p.confirmReleased(o, ours)
	}
	// 1. Orphaned reservations on this agent: destroy and unreserve.
	keep := p.orphans[:0]
	for _, or := range p.orphans {
		r, ok := ours[or.ReservationID]
		if or.AgentID != o.AgentID || !ok || !or.Reserved.fitsIn(r.Resources) {
			// Not here, or part of it still held: by the old task's
			// executor, whose share the agent frees only when the
			// executor exits. Released whole, or the rest would stay
			// reserved when the offer that shows it is taken for the
			// release's confirmation (uninstall.go).
			keep = append(keep, or)
			continue
		}
		unreserve, src := r.Resources, r.DiskSource
		if r.Volume != nil {
			ops = append(ops, Op{Kind: OpDestroy, Pod: or.Pod, ReservationID: or.ReservationID, Volume: r.Volume})
			unreserve.DiskMB += r.Volume.SizeMB
			src = r.Volume.Source
		}
		ops = append(ops, Op{Kind: OpUnreserve, Pod: or.Pod, ReservationID: or.ReservationID, Resources: unreserve, DiskSource: src, Ports: expandPorts(r.Ports)})
		if p.uninstalling {
			p.released = append(p.released, or)
		}
	}
	p.orphans = keep
	if p.uninstalling {
		return append(ops, p.unreserveStrays(o, ours)...), ""
	}

	// 2. Pods placed on this agent: relaunch in place on their
	// reservation, never anywhere else.
	hosts := map[PodKind]string{} // kind -> a pod of that kind placed on this agent
	for _, pod := range p.ordered() {
		if pod.AgentID == o.AgentID && (pod.ReservationID != "" || pod.live()) {
			hosts[pod.Kind] = pod.Name
		}
	}
	ready := p.controllersReady()
	free := o.Unreserved
	for _, pod := range p.ordered() {
		if pod.AgentID != o.AgentID || pod.ReservationID == "" {
			continue
		}
		r, ok := ours[pod.ReservationID]
		if !ok {
			if (!pod.Confirmed || pod.State.Class() == ClassGone) && !pod.live() {
				// The ACCEPT that was to reserve never took effect, or
				// the agent lost the reservation with the task
				// (TASK_GONE): place the pod anew.
				pod.AgentID, pod.ReservationID, pod.Reserved, pod.Volume, pod.Confirmed, pod.AgentLost = "", "", Resources{}, nil, false, false
				pod.Where, pod.Ports, pod.Resizing = nil, nil, nil
				delete(hosts, pod.Kind)
			}
			continue
		}
		pod.Confirmed = true
		// A relaunch in place is not held back by the controllers:
		// only a node's (or head's) first placement waits for them.
		if !p.needsLaunch(pod) || (pod.Step == StepNone && !pod.Reserved.fitsIn(r.Resources)) {
			continue
		}
		if pod.Step != StepNone && slices.Contains(o.ExecutorIDs, pod.TaskID) {
			// The last task's executor still holds its share of the
			// reservation: the offer does not show it whole, and a resize
			// from what it shows would grow it again (resize).
			continue
		}
		// Its ports are in its reservation; a node placed before they
		// were reserved takes them unreserved.
		ports, reservedPorts := pod.Ports, len(pod.Ports) > 0
		if reservedPorts && !portsIn(pod.Ports, r.Ports) {
			passOver(pod, fmt.Sprintf("its reservation %s offers ports %v, not its %v", pod.ReservationID, r.Ports, pod.Ports))
			continue
		}
		if !reservedPorts {
			var ok bool
			var reason string
			if ports, ok, reason = p.pickPorts(pod.Kind, o.Ports, takenPorts); !ok {
				passOver(pod, reason)
				continue
			}
		}
		// In its update step a node's reservation is resized to the
		// target first (update.go).
		resOps, res, ok := p.resize(pod, r, &free)
		if !ok {
			continue
		}
		ops = append(ops, resOps...)
		vol := pod.Volume
		if r.Volume == nil {
			ops = append(ops, Op{Kind: OpCreate, Pod: pod.Name, ReservationID: pod.ReservationID, Volume: vol})
		}
		config := pod.Config
		op := p.launch(pod, pod.ReservationID, res, vol, ports)
		op.ReservedPorts = reservedPorts
		ops = append(ops, op)
		if pod.Step == StepNone {
			pod.Config = config // a relaunch out of turn keeps its resources
		}
		pod.Resizing = nil
		if res != pod.Reserved {
			asked := res
			pod.Resizing = &asked // taken once the task runs (podStatus)
		}
	}

	// 3. New placements from unreserved resources, one pod of a kind
	// per agent.
	disks := append([]Disk(nil), o.Disks...)
	for _, pod := range p.ordered() {
		if !p.needsLaunch(pod) || (pod.persistent() && pod.ReservationID != "") {
			continue
		}
		if pod.Kind != Controller && !ready {
			continue // nodes and heads wait for every controller
		}
		if p.paused && pod.Attempts == 0 {
			continue // a paused plan places no new pod
		}
		if h, ok := hosts[pod.Kind]; ok && h != pod.Name {
			continue
		}
		pl, err := p.placement(pod.Kind)
		if err != nil {
			passOver(pod, err.Error())
			continue
		}
		if o.Remote && !pl.NamesRegion() {
			passOver(pod, "region "+o.Region+" is not the master's (a constraint on @region places pods there)")
			continue
		}
		where := whereOf(o)
		if ok, reason := pl.Allows(where, p.placedWhere(pod)); !ok {
			passOver(pod, "placement "+reason)
			continue
		}
		need := p.spec.resources(pod.Kind)
		var src *DiskSource
		var podPorts []int
		if typ := p.spec.nodeDiskType(); pod.persistent() && typ != DiskRoot {
			// The volume comes from a PATH or MOUNT disk, the rest
			// from the unreserved scalars.
			rest := Resources{CPUs: need.CPUs, MemMB: need.MemMB}
			i := pickDisk(disks, typ, need.DiskMB)
			if i < 0 || !rest.fitsIn(free) {
				continue
			}
			ports, ok, reason := p.pickPorts(pod.Kind, o.Ports, takenPorts)
			if !ok {
				passOver(pod, reason)
				continue
			}
			podPorts = ports
			if typ == DiskMount {
				need.DiskMB = disks[i].SizeMB // a MOUNT disk is taken whole
			}
			disks[i].SizeMB -= need.DiskMB
			ds := disks[i].Source
			src = &ds
			free = free.minus(rest)
		} else {
			if !need.fitsIn(free) {
				continue
			}
			ports, ok, reason := p.pickPorts(pod.Kind, o.Ports, takenPorts)
			if !ok {
				passOver(pod, reason)
				continue
			}
			podPorts = ports
			free = free.minus(need)
		}
		hosts[pod.Kind] = pod.Name
		pod.AgentID = o.AgentID
		pod.Where = where
		if !pod.persistent() {
			ops = append(ops, p.launch(pod, "", need, nil, podPorts))
			continue
		}
		p.seq++
		pod.ReservationID = p.reservationID(pod.Name, p.seq)
		pod.Reserved = Resources{CPUs: need.CPUs, MemMB: need.MemMB}
		pod.Volume = &Volume{ID: pod.ReservationID + ".vol", ContainerPath: p.spec.VolumePath, SizeMB: need.DiskMB, Source: src}
		pod.Confirmed = false
		pod.Ports = podPorts // reserved with the rest: a relaunch in place finds them
		launch := p.launch(pod, pod.ReservationID, pod.Reserved, pod.Volume, podPorts)
		launch.ReservedPorts = len(podPorts) > 0
		ops = append(ops,
			Op{Kind: OpReserve, Pod: pod.Name, ReservationID: pod.ReservationID, Resources: need, DiskSource: src, Ports: podPorts},
			Op{Kind: OpCreate, Pod: pod.Name, ReservationID: pod.ReservationID, Volume: pod.Volume},
			launch,
		)
	}
	if len(ops) > 0 {
		return ops, ""
	}
	return ops, strings.Join(why, "; ")
}

// nodeDiskType is the spec's node disk type, ROOT when unset.
func (s Spec) nodeDiskType() DiskType {
	if s.NodeDiskType == "" {
		return DiskRoot
	}
	return s.NodeDiskType
}

// pickDisk returns the index of the disk of type typ that a volume of
// sizeMB goes on, or -1 if none is big enough: the smallest that fits
// (a MOUNT disk is taken whole, so the least is wasted), the first of
// equals.
func pickDisk(disks []Disk, typ DiskType, sizeMB float64) int {
	const eps = 1e-9
	best := -1
	for i, d := range disks {
		if d.Source.Type != typ || d.SizeMB+eps < sizeMB || (typ == DiskMount && d.SizeMB <= 0) {
			continue
		}
		if best < 0 || d.SizeMB < disks[best].SizeMB {
			best = i
		}
	}
	return best
}
