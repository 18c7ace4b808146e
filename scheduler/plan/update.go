package plan

import "fmt"

// UpdateStep is where a pod is in its update (or restart) step; "" when
// it is in none. At most one pod is in a step at a time.
type UpdateStep string

const (
	StepNone UpdateStep = ""
	// StepDrain: a node hands its containers to the other nodes (DRAIN;
	// the driver calls OnDrained).
	StepDrain UpdateStep = "drain"
	// StepKill: the pod's task is being killed.
	StepKill UpdateStep = "kill"
	// StepRelaunch: the task has ended; the pod is relaunched with the
	// target configuration (a node in place, its reservation resized).
	StepRelaunch UpdateStep = "relaunch"
	// StepReady: the new task runs; the driver checks that it is ready
	// (CHECK_READY; the driver calls OnReady). A node is given its
	// containers back by that check.
	StepReady UpdateStep = "ready"
)

// Refusal is a configuration change the plan cannot apply: the stored
// value is kept.
type Refusal struct {
	Field  string // e.g. "node disk"
	Stored string
	Wanted string
	Why    string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s: cannot change %s to %s (%s); keeping %s", r.Field, r.Stored, r.Wanted, r.Why, r.Stored)
}

// PodResources are the resources of a pod of kind k in the spec.
func (s Spec) PodResources(k PodKind) Resources { return s.resources(k) }

// MergeSpec returns the spec a scheduler restarted with configured
// should run, given the stored plan's spec and the configured spec of
// its last start (nil: unknown, e.g. a plan stored before it was kept).
// Changes Mesos cannot apply to a node's existing reservation and
// volume are refused and the stored value kept, each in one Refusal:
//
//   - the framework name and the role: every reservation is labelled
//     with the name and belongs to the role; Mesos has no operation that
//     moves a reservation (or the volume on it) to another role or
//     label;
//   - a node's disk size, disk type and volume path: the persistent
//     volume that holds the node's WAL was made with them (its
//     DiskInfo); it cannot be resized, moved to another disk or
//     mounted elsewhere without destroying it;
//   - the settings fixed at install (Spec.Install: the number of
//     containers, tier 2), which every controller and node runs with; a
//     plan stored before they were kept takes the configured ones.
//
// Counts: the stored ones win (they are changed through the API),
// except a count the configuration changed since its last start, which
// is taken. Resources (cpus, mem; a controller's and heads' disk) and
// timing are taken from configured: the update rolls them through the
// pods.
func MergeSpec(stored, configured Spec, last *Spec) (Spec, []Refusal) {
	out := stored
	var refused []Refusal
	refuse := func(field, have, want, why string) {
		refused = append(refused, Refusal{Field: field, Stored: have, Wanted: want, Why: why})
	}
	if configured.Framework != stored.Framework {
		refuse("framework name", stored.Framework, configured.Framework, "the pods' reservations are labelled with it")
	}
	if configured.Role != stored.Role {
		refuse("role", stored.Role, configured.Role, "the nodes' reservations and volumes belong to it; Mesos cannot move them to another role")
	}
	if configured.Node.DiskMB != stored.Node.DiskMB {
		refuse("node disk", fmt.Sprintf("%g MB", stored.Node.DiskMB), fmt.Sprintf("%g MB", configured.Node.DiskMB), "each node's persistent volume holds its WAL and cannot be resized in place")
	}
	if configured.nodeDiskType() != stored.nodeDiskType() {
		refuse("node disk type", string(stored.nodeDiskType()), string(configured.nodeDiskType()), "each node's persistent volume is on a disk of that type")
	}
	vp := configured.VolumePath
	if vp == "" {
		vp = "wal"
	}
	if svp := stored.VolumePath; vp != svp && !(svp == "" && vp == "wal") {
		refuse("node volume path", svp, vp, "each node's persistent volume is mounted there; its WAL would not be found")
	}
	out.Controller = configured.Controller
	out.Node.CPUs, out.Node.MemMB = configured.Node.CPUs, configured.Node.MemMB
	for _, k := range HeadKinds {
		h := out.HeadSpec(k)
		h.Resources = configured.HeadSpec(k).Resources
		if last != nil && last.HeadSpec(k).Count != configured.HeadSpec(k).Count {
			h.Count = configured.HeadSpec(k).Count
		}
		out.SetHeadSpec(k, h)
	}
	if last != nil && last.Controllers != configured.Controllers {
		out.Controllers = configured.Controllers
	}
	if last != nil && last.Nodes != configured.Nodes {
		out.Nodes = configured.Nodes
	}
	if in, want := stored.Install, configured.Install; in == nil {
		out.Install = want // stored before it was kept
	} else if want != nil {
		if want.Containers != in.Containers {
			refuse("containers", fmt.Sprint(in.Containers), fmt.Sprint(want.Containers), "every segment's container is its hash modulo the count: the controllers' map and the nodes' data are made for it")
		}
		if want.Tier2 != in.Tier2 {
			// Its Hadoop configuration stays with it.
			refuse("tier 2", quoteOrNone(in.Tier2), quoteOrNone(want.Tier2), "the history of every segment written so far is there")
		} else if want.HDFSConfigURL != in.HDFSConfigURL {
			kept := *in
			kept.HDFSConfigURL = want.HDFSConfigURL
			out.Install = &kept
		}
	}
	out.Timing = configured.Timing
	out.Principal = configured.Principal
	return out, refused
}

// quoteOrNone quotes a URI for a Refusal, "none" for "".
func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

// SetSpec replaces the desired state (MergeSpec's result): counts are
// applied as SetCounts and SetHeads do; new resources take effect
// through the update (SetTargets). The framework, role, node disk and
// volume path are the caller's to keep (MergeSpec refuses changing
// them).
func (p *Plan) SetSpec(spec Spec) []Decision {
	for _, k := range HeadKinds {
		delete(p.unsetHeads, k)
	}
	p.setSpec(spec)
	return p.applyCounts()
}

// SetTargets gives the configuration id each kind of pod should run
// (the driver computes it from its configuration; "" for a kind: no
// update) and whether a node hands its containers over before its
// update (handover; it needs tier 2). A live pod launched with another
// id is updated, one at a time (see the package comment). Pods launched
// before ids were recorded (Pod.Config "") take adopt's id for their
// kind, when given: what they were launched with as far as is known.
func (p *Plan) SetTargets(targets, adopt map[PodKind]string, handover bool) []Decision {
	p.targets = map[PodKind]string{}
	for k, v := range targets {
		p.targets[k] = v
	}
	p.handover = handover
	for _, pod := range p.pods {
		if pod.Config == "" && pod.TaskID != "" {
			pod.Config = adopt[pod.Kind]
		}
	}
	return p.nextStep()
}

// Restart asks for a rolling restart of every pod of kind (""; every
// kind) that has been launched: each is restarted in the update's
// order, one at a time (a node through hand-over). It returns the pods
// to restart.
func (p *Plan) Restart(kind PodKind) ([]string, []Decision) {
	var names []string
	for _, pod := range p.ordered() {
		if pod.Goal != GoalRun || pod.TaskID == "" || (kind != "" && pod.Kind != kind) {
			continue
		}
		pod.Restart = true
		names = append(names, pod.Name)
	}
	return names, p.nextStep()
}

// Pause stops the plan from starting new steps: first placements,
// update and restart steps. The step in progress finishes, and failed
// pods are still relaunched. Resume undoes it. Both are stored.
func (p *Plan) Pause() { p.paused = true }

// Resume lets the plan start steps again.
func (p *Plan) Resume() []Decision {
	p.paused = false
	return append(p.nextStep(), p.reviveIfNeeded()...)
}

// Paused reports whether the plan is paused.
func (p *Plan) Paused() bool { return p.paused }

// OnReady tells the plan that the driver found pod's task taskID ready
// (CHECK_READY): its step is complete, and the next one starts.
func (p *Plan) OnReady(podName, taskID string) []Decision {
	pod := p.pods[podName]
	if pod == nil || pod.TaskID != taskID || pod.Step != StepReady || pod.State != TaskRunning {
		return nil
	}
	pod.Step, pod.Restart = StepNone, false
	return p.nextStep()
}

// outdated reports whether pod runs another configuration than the
// target, or a restart is asked for it.
func (p *Plan) outdated(pod *Pod) bool {
	if pod.Goal != GoalRun || pod.TaskID == "" {
		return false
	}
	if pod.Restart {
		return true
	}
	t := p.targets[pod.Kind]
	return t != "" && pod.Config != t
}

// inStep returns the pod in an update step, or nil.
func (p *Plan) inStep() *Pod {
	for _, pod := range p.ordered() {
		if pod.Step != StepNone && pod.Goal == GoalRun {
			return pod
		}
	}
	return nil
}

// nextStep starts the next update step: when not paused, none is in
// progress, no explicit reconciliation runs and every pod wanted runs,
// the first outdated pod in deploy order is drained (a node, with
// handover) or killed.
func (p *Plan) nextStep() []Decision {
	if p.paused || len(p.reconciling) > 0 || p.inStep() != nil {
		return nil
	}
	var next *Pod
	for _, pod := range p.ordered() {
		if pod.Goal != GoalRun {
			continue
		}
		if pod.State != TaskRunning || pod.Draining {
			return nil // the deployment (or a recovery) goes first
		}
		if next == nil && p.outdated(pod) {
			next = pod
		}
	}
	if next == nil {
		return nil
	}
	if next.Kind == Node && p.handover {
		next.Step, next.Draining = StepDrain, true
		return []Decision{{Kind: Drain, Pod: next.Name, AgentID: next.AgentID}}
	}
	next.Step = StepKill
	return []Decision{p.kill(next)}
}

// updateDrained: a node drained for its update is killed.
func (p *Plan) updateDrained(pod *Pod) []Decision {
	pod.Draining = false
	pod.Step = StepKill
	if pod.live() {
		return []Decision{p.kill(pod)}
	}
	pod.Step = StepRelaunch
	return p.reviveIfNeeded()
}

// stepStatus moves pod's update step on a status update: a terminal
// one makes it relaunch, TASK_RUNNING of the relaunched task asks for
// the readiness check.
func (p *Plan) stepStatus(pod *Pod) []Decision {
	switch {
	case pod.Step == StepKill && pod.State.Terminal():
		pod.Step = StepRelaunch
	case pod.Step == StepRelaunch && pod.State == TaskRunning:
		pod.Step = StepReady
		return []Decision{{Kind: CheckReady, Pod: pod.Name, TaskID: pod.TaskID, AgentID: pod.AgentID}}
	case pod.Step == StepReady && pod.State.Terminal():
		pod.Step = StepRelaunch // failed before it was ready: relaunched, checked again
	}
	return nil
}

// resumeSteps are the decisions a restarted scheduler owes the step in
// progress (Start): the kill again (it may have been lost), the
// readiness check again.
func (p *Plan) resumeSteps() []Decision {
	pod := p.inStep()
	if pod == nil {
		return nil
	}
	switch {
	case pod.Step == StepKill && pod.live():
		return []Decision{p.kill(pod)}
	case pod.Step == StepReady && pod.State == TaskRunning:
		return []Decision{{Kind: CheckReady, Pod: pod.Name, TaskID: pod.TaskID, AgentID: pod.AgentID}}
	}
	return nil
}

// resize returns the operations that change a node's reservation to
// the target before the node is relaunched in its update step, from
// offered, the reservation as an offer shows it: RESERVE of what it
// grows by (from free, with the same labels and principal: Mesos adds
// two resources into one when their reservation stacks are equal,
// src/common/resources.cpp's addable) and UNRESERVE of what it shrinks
// by (a part of a reservation may be unreserved). res is what the task
// is launched with; ok is false when the relaunch must wait for another
// offer.
//
// The difference is taken from what the reservation holds, not from
// what the offer shows free of it: the old task's executor may still
// hold its share when the offer comes (then the offer shows less, and
// the relaunch waits until it is all free). What it holds is the pod's
// Reserved, or, when an earlier ACCEPT of this step asked for another
// size (Pod.Resizing) and its task never ran, that size if the ACCEPT
// took effect: the larger of the two that the offer holds whole.
//
// A reservation made by another principal than the framework's (an
// install that turned strict mode on) cannot grow: Mesos refuses a
// RESERVE whose principal is not the framework's (validate(Reserve) in
// src/master/validation.cpp) and would not merge reservations of two
// principals. The node is then relaunched at the size it has, and the
// refusal kept for ResizeRefusals. Out of an update step nothing changes
// (res: the pod's Reserved).
func (p *Plan) resize(pod *Pod, offered OfferedReservation, free *Resources) (ops []Op, res Resources, ok bool) {
	target := Resources{CPUs: p.spec.Node.CPUs, MemMB: p.spec.Node.MemMB}
	if pod.Step == StepNone || target.CPUs <= 0 || target.MemMB <= 0 {
		return nil, pod.Reserved, true
	}
	const eps = 1e-9
	have := Resources{CPUs: offered.Resources.CPUs, MemMB: offered.Resources.MemMB}
	// For cpus and mem each: the larger of the two sizes the offer holds
	// (a partly applied ACCEPT may have changed one and not the other).
	pick := func(known, asked, offered float64) (float64, bool) {
		best, ok := 0.0, false
		for _, v := range []float64{known, asked} {
			if v <= offered+eps && (!ok || v > best) {
				best, ok = v, true
			}
		}
		return best, ok
	}
	asked := pod.Reserved
	if pod.Resizing != nil {
		asked = *pod.Resizing
	}
	cpus, okCPUs := pick(pod.Reserved.CPUs, asked.CPUs, have.CPUs)
	mem, okMem := pick(pod.Reserved.MemMB, asked.MemMB, have.MemMB)
	if !okCPUs || !okMem {
		return nil, pod.Reserved, false
	}
	size := Resources{CPUs: cpus, MemMB: mem}
	var grow, shrink Resources
	if d := target.CPUs - size.CPUs; d > eps {
		grow.CPUs = d
	} else if d < -eps {
		shrink.CPUs = -d
	}
	if d := target.MemMB - size.MemMB; d > eps {
		grow.MemMB = d
	} else if d < -eps {
		shrink.MemMB = -d
	}
	delete(p.resizeRefused, pod.Name)
	if grow != (Resources{}) && offered.Principal != p.spec.Principal {
		p.resizeRefused[pod.Name] = fmt.Sprintf("%s: cannot grow reservation %s to %s: it was made by principal %q and the framework's is %q, and Mesos lets only a reservation's own principal add to it; %s keeps %s (replace the pod to reserve anew)",
			pod.Name, pod.ReservationID, target, offered.Principal, p.spec.Principal, pod.Name, size)
		return nil, size, true
	}
	if !grow.fitsIn(*free) {
		return nil, pod.Reserved, false
	}
	*free = free.minus(grow)
	if grow != (Resources{}) {
		ops = append(ops, Op{Kind: OpReserve, Pod: pod.Name, ReservationID: pod.ReservationID, Resources: grow})
	}
	if shrink != (Resources{}) {
		ops = append(ops, Op{Kind: OpUnreserve, Pod: pod.Name, ReservationID: pod.ReservationID, Resources: shrink})
	}
	return ops, target, true
}

// ResizeRefusals lists the nodes whose reservation an update could not
// grow (resize), each in one sentence, by pod name.
func (p *Plan) ResizeRefusals() []string {
	var out []string
	for _, name := range sortedKeys(p.resizeRefused) {
		out = append(out, p.resizeRefused[name])
	}
	return out
}

// updatePhase is the "update" phase of Progress: the pods in or
// awaiting an update or restart step, in deploy order; nil when none.
func (p *Plan) updatePhase() *Phase {
	var ph Phase
	ph.Name = "update"
	for _, pod := range p.ordered() {
		if pod.Step == StepNone && !p.outdated(pod) {
			continue
		}
		st := Step{Pod: pod.Name, TaskID: pod.TaskID, AgentID: pod.AgentID, State: pod.State, Status: Pending}
		switch {
		case pod.Step != StepNone:
			st.Status, st.Waiting = Starting, string(pod.Step)
		case p.paused:
			st.Waiting = "paused"
		}
		ph.Steps = append(ph.Steps, st)
	}
	if len(ph.Steps) == 0 {
		return nil
	}
	return &ph
}
