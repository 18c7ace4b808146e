package plan

import (
	"errors"
	"fmt"
)

// GoalUninstall: the uninstall plan runs; the pod's task is killed and
// its reservation and volume released, and it is never launched again.
const GoalUninstall Goal = "uninstall"

// ErrUninstalling: the plan is uninstalling; it changes no count and
// replaces no pod.
var ErrUninstalling = errors.New("plan: the service is being uninstalled")

// Uninstall starts the uninstall plan (or, on a plan already
// uninstalling, issues its kills again: the driver calls it after every
// Start). Every pod's task is killed; once a pod's task is over the pod
// is removed and its reservation and volume become an orphan, destroyed
// and unreserved on the next offer from its agent, as are reservations
// in offers that carry this service's id and belong to no pod (left by
// an ACCEPT the plan never saw take effect). A pod whose agent is lost
// or unreachable is removed at once; its reservation waits for the
// agent to offer it. Nothing is launched or placed again; counts and
// Replace are refused (ErrUninstalling). The flag is stored
// (Marshal): a scheduler restarted in the middle goes on uninstalling.
// UninstallDone reports the end.
func (p *Plan) Uninstall() []Decision {
	p.uninstalling = true
	p.rebalance = nil
	var ds []Decision
	for _, pod := range p.ordered() {
		pod.Goal = GoalUninstall
		pod.Step, pod.Restart = StepNone, false
		pod.Draining = false
		switch {
		case pod.live() && pod.State != TaskUnreachable && !pod.AgentLost:
			ds = append(ds, p.kill(pod))
		default:
			if !pod.Confirmed {
				// The reservation was never seen: the ACCEPT did not take
				// effect, or if it did, the reservation carries the
				// service's id and is found in an offer (unreserveStrays).
				p.abandonPlacement(pod, false)
			}
			delete(p.reconciling, pod.TaskID)
			p.retire(pod)
		}
	}
	return append(ds, p.reviveIfNeeded()...)
}

// Uninstalling reports whether the uninstall plan runs.
func (p *Plan) Uninstalling() bool { return p.uninstalling }

// UninstallDone reports whether the uninstall plan has finished: no pod
// is left and every reservation and volume the plan knows of is
// released. The driver then tears the framework down and deletes the
// service's state.
func (p *Plan) UninstallDone() bool {
	return p.uninstalling && len(p.pods) == 0 && len(p.orphans) == 0 && len(p.released) == 0
}

// confirmReleased checks the reservations released on o's agent: one
// the offer no longer holds is gone; one it still holds was not (a
// refused ACCEPT, or part of it was in another offer) and is an orphan
// again, released anew from this offer. A reservation is in one offer
// at a time, and while uninstalling no task holds it, so an offer from
// its agent without it means it is gone. A master may drop an ACCEPT it
// had not carried out when the framework is torn down: the TEARDOWN
// waits for these confirmations.
func (p *Plan) confirmReleased(o Offer, ours map[string]OfferedReservation) {
	keep := p.released[:0]
	for _, r := range p.released {
		switch _, still := ours[r.ReservationID]; {
		case r.AgentID != o.AgentID:
			keep = append(keep, r)
		case still:
			p.orphans = append(p.orphans, r)
		}
	}
	p.released = keep
}

// unreserveStrays releases the reservations in o labelled with this
// service's id that neither a pod nor an orphan holds.
func (p *Plan) unreserveStrays(o Offer, ours map[string]OfferedReservation) []Op {
	held := map[string]bool{}
	for _, pod := range p.pods {
		held[pod.ReservationID] = true
	}
	for _, or := range p.orphans {
		held[or.ReservationID] = true
	}
	var ops []Op
	for _, id := range sortedKeys(ours) {
		r := ours[id]
		if held[id] || p.spec.ServiceID == "" || r.Service != p.spec.ServiceID {
			continue
		}
		unreserve, src := r.Resources, r.DiskSource
		if r.Volume != nil {
			ops = append(ops, Op{Kind: OpDestroy, Pod: r.Pod, ReservationID: id, Volume: r.Volume})
			unreserve.DiskMB += r.Volume.SizeMB
			src = r.Volume.Source
		}
		ops = append(ops, Op{Kind: OpUnreserve, Pod: r.Pod, ReservationID: id, Resources: unreserve, DiskSource: src, Ports: expandPorts(r.Ports)})
	}
	return ops
}

// uninstallProgress is Progress while uninstalling: the phase
// "kill-tasks" (a step per pod whose task is being killed) and
// "unreserve" (a step per reservation still to release, waiting for an
// offer from its agent).
func (p *Plan) uninstallProgress() Progress {
	kill := Phase{Name: "kill-tasks", Steps: []Step{}}
	for _, pod := range p.ordered() {
		kill.Steps = append(kill.Steps, Step{Pod: pod.Name, Status: Starting, TaskID: pod.TaskID, AgentID: pod.AgentID, State: pod.State})
	}
	unres := Phase{Name: "unreserve", Steps: []Step{}}
	for _, or := range p.orphans {
		st := Step{Pod: or.Pod, Status: Pending, AgentID: or.AgentID,
			Waiting: fmt.Sprintf("an offer from agent %s with reservation %s", or.AgentID, or.ReservationID)}
		if or.Volume != nil {
			st.Waiting += " and volume " + or.Volume.ID
		}
		unres.Steps = append(unres.Steps, st)
	}
	for _, r := range p.released {
		unres.Steps = append(unres.Steps, Step{Pod: r.Pod, Status: Starting, AgentID: r.AgentID,
			Waiting: fmt.Sprintf("an offer from agent %s without reservation %s (released)", r.AgentID, r.ReservationID)})
	}
	phases := []Phase{kill, unres}
	var all []Step
	for i := range phases {
		phases[i].Status = summarize(phases[i].Steps)
		all = append(all, phases[i].Steps...)
	}
	return Progress{Status: summarize(all), Phases: phases}
}

// ErrNothingOnAgent: ForgetAgent found nothing of the service waiting
// for that agent.
var ErrNothingOnAgent = errors.New("plan: nothing waits for that agent")

// ForgetAgent is the operator's way out of an uninstall stuck on an
// agent that will not come back (marked gone, its host destroyed): the
// pods, reservations and releases waiting for an offer from agentID are
// dropped, as Mesos drops a gone agent's resources. It fails with
// ErrNothingOnAgent when the plan is not uninstalling or nothing waits
// for that agent. It returns what it dropped, for the log.
func (p *Plan) ForgetAgent(agentID string) ([]string, error) {
	if !p.uninstalling {
		return nil, fmt.Errorf("%w: only an uninstall forgets an agent", ErrNothingOnAgent)
	}
	var dropped []string
	for _, pod := range p.ordered() {
		if pod.AgentID == agentID {
			dropped = append(dropped, "pod "+pod.Name)
			delete(p.reconciling, pod.TaskID)
			delete(p.pods, pod.Name)
		}
	}
	p.orphans, dropped = dropOnAgent(p.orphans, agentID, "reservation ", dropped)
	p.released, dropped = dropOnAgent(p.released, agentID, "released reservation ", dropped)
	if len(dropped) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNothingOnAgent, agentID)
	}
	return dropped, nil
}

// dropOnAgent removes the reservations on agentID from ors, in place,
// and appends each one's ReservationID, after what, to dropped.
func dropOnAgent(ors []orphan, agentID, what string, dropped []string) ([]orphan, []string) {
	keep := ors[:0]
	for _, or := range ors {
		if or.AgentID == agentID {
			dropped = append(dropped, what+or.ReservationID)
			continue
		}
		keep = append(keep, or)
	}
	return keep, dropped
}
