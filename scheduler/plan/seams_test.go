package plan

import (
	"strings"
	"testing"
)

// TestGrowLostRelaunches: a node's update-step ACCEPT (RESERVE of
// the growth + LAUNCH) does not take effect (offer rescinded, master
// failover, RESERVE refused): the task ends TASK_DROPPED/TASK_ERROR and
// the agent offers the reservation back at its OLD size. The node must
// be relaunched (resized again), not wait forever.
func TestGrowLostRelaunches(t *testing.T) {
	p, old, pd := resizeStep(t, testSpec(1, 1), grown1()) // old as Mesos holds it: 1 cpu, 512 MB
	accepted := false
	for _, d := range p.OnOffers([]Offer{big("o10", pd.AgentID, old)}) {
		accepted = accepted || d.Kind == Accept
	}
	if !accepted {
		t.Fatal("no relaunch on the whole old reservation")
	}
	// The ACCEPT was dropped: the new task never ran, the reservation
	// was not grown.
	status("node-0", TaskDropped)(p)
	for i, id := range []string{"o11", "o12", "o13"} {
		for _, d := range p.OnOffers([]Offer{big(id, pd.AgentID, old)}) {
			if d.Kind == Accept {
				return
			}
		}
		_ = i
	}
	got, _ := p.Pod("node-0")
	t.Fatalf("node-0 never relaunched after its resize was lost: plan believes reserved %s, agent holds %s; step %q state %s",
		got.Reserved, old.Resources, got.Step, got.State)
}

// TestOrphanWaitsForExecutorShare: the executor's share (0.1 cpus,
// 32 MB) comes out of a node's reservation, and the agent frees it only
// when the executor exits, after the task's terminal update. An orphan
// offered while the old executor still holds that share is not released
// from what the offer shows (the rest would stay reserved for good, and
// an uninstall would take the next offer without it for the release's
// confirmation): it is released whole once the offer holds all of it.
func TestOrphanWaitsForExecutorShare(t *testing.T) {
	p := New(testSpec(1, 2))
	for _, s := range deploy {
		s.do(p)
	}
	full := reserved(p, "node-1", true)
	pd, _ := p.Pod("node-1")
	p.SetCounts(1, 1) // node-1 drains
	p.OnDrained("node-1")
	status("node-1", TaskKilled)(p)
	if _, ok := p.Pod("node-1"); ok {
		t.Fatal("node-1 not retired")
	}
	unreserves := func(o Offer) (ops []Op) {
		for _, d := range p.OnOffers([]Offer{o}) {
			for _, op := range d.Ops {
				if op.Kind == OpUnreserve && op.ReservationID == full.ReservationID {
					ops = append(ops, op)
				}
			}
		}
		return ops
	}
	partial := full
	partial.Resources = full.Resources.minus(Resources{CPUs: 0.1, MemMB: 32})
	if ops := unreserves(big("o20", pd.AgentID, partial)); len(ops) != 0 {
		t.Fatalf("released while the executor holds part of it: %+v", ops)
	}
	ops := unreserves(big("o21", pd.AgentID, full))
	if len(ops) != 1 || ops[0].Resources != (Resources{CPUs: full.Resources.CPUs, MemMB: full.Resources.MemMB, DiskMB: full.Resources.DiskMB + full.Volume.SizeMB}) {
		t.Fatalf("UNRESERVE %+v, want all of %s and its volume's disk", ops, full.Resources)
	}
}

// TestDecommissionEndsReadyStep: the operator lowers the node
// count while the highest node is in its update's readiness check
// (StepReady). The driver's watchReady keeps checking a pod as long as
// its task is the same and its Step is StepReady, and every check PUTs
// drain=false on the node: it undoes the decommission's drain, which
// watchDrain requested once and then only polls, so the scale-down
// never ends. The pod must leave StepReady once it is decommissioned.
func TestDecommissionEndsReadyStep(t *testing.T) {
	p := New(testSpec(1, 2))
	for _, s := range deploy {
		s.do(p)
	}
	p.SetSpec(grown())
	setTargets("n2", false)(p)
	for _, s := range []func(*Plan) []Decision{
		status("node-0", TaskKilled), ownOffer("o7", "node-0"), status("node-0", TaskRunning), ready("node-0"),
		status("node-1", TaskKilled), ownOffer("o8", "node-1"), status("node-1", TaskRunning),
	} {
		s(p)
	}
	if pd, _ := p.Pod("node-1"); pd.Step != StepReady {
		t.Fatalf("node-1 step %q, want ready", pd.Step)
	}
	p.SetCounts(1, 1) // node-1 is drained for its decommission
	if pd, _ := p.Pod("node-1"); pd.Goal == GoalDecommission && pd.Step == StepReady {
		t.Fatalf("decommissioned node-1 still in step %q: the driver's readiness check goes on un-draining it", pd.Step)
	}
}

// TestReplaceDuringUpdateDrain: the operator replaces a node while
// it is drained for its update (StepDrain, Draining). Replace kills it
// and places it anew, but leaves Step and Draining: the driver's drain
// watcher goes on, and when it reports the (old) node drained, OnDrained
// kills the replacement that already runs.
func TestReplaceDuringUpdateDrain(t *testing.T) {
	p := New(testSpec(1, 2))
	for _, s := range deploy {
		s.do(p)
	}
	p.SetSpec(grown())
	setTargets("n2", true)(p)
	if pd, _ := p.Pod("node-0"); pd.Step != StepDrain {
		t.Fatalf("node-0 step %q", pd.Step)
	}
	if _, err := p.Replace("node-0"); err != nil {
		t.Fatal(err)
	}
	status("node-0", TaskKilled)(p)
	p.OnOffers([]Offer{big("o9", "a9")})
	status("node-0", TaskRunning)(p)
	pd, _ := p.Pod("node-0")
	if pd.AgentID != "a9" || pd.State != TaskRunning {
		t.Fatalf("node-0 not replaced: %+v", pd)
	}
	for _, d := range p.OnDrained("node-0") {
		if d.Kind == Kill && d.TaskID == pd.TaskID {
			t.Fatalf("the update's drain, reported after the Replace, kills the replacement %s: %v", pd.TaskID, d)
		}
	}
}

// TestGrowRefusedForAnotherPrincipal: a node reserved under another
// principal (the install turned strict mode on: the framework's
// principal is now its service account) cannot grow: Mesos refuses a
// RESERVE whose principal is not the framework's and would not merge
// reservations of two principals. The node is relaunched at the size it
// has, and the refusal is reported.
func TestGrowRefusedForAnotherPrincipal(t *testing.T) {
	base, target := testSpec(1, 1), grown1()
	base.Principal, target.Principal = "sluice-principal", "sluice-sa"
	p, old, pd := resizeStep(t, base, target)
	old.Principal = "sluice-principal"
	var launch *Op
	for _, d := range p.OnOffers([]Offer{big("o10", pd.AgentID, old)}) {
		for i, op := range d.Ops {
			switch op.Kind {
			case OpReserve, OpUnreserve:
				t.Fatalf("%s of a reservation made by another principal: %+v", op.Kind, op)
			case OpLaunch:
				launch = &d.Ops[i]
			}
		}
	}
	if launch == nil || launch.Resources != pd.Reserved {
		t.Fatalf("LAUNCH %+v, want node-0 relaunched at its size %s", launch, pd.Reserved)
	}
	if got := p.ResizeRefusals(); len(got) != 1 || !strings.Contains(got[0], `principal "sluice-principal"`) {
		t.Fatalf("refusals %q", got)
	}
	status("node-0", TaskRunning)(p)
	if got, _ := p.Pod("node-0"); got.Reserved != pd.Reserved || got.Resizing != nil {
		t.Fatalf("node-0 reserved %s (resizing %v), want %s", got.Reserved, got.Resizing, pd.Reserved)
	}
}

// resizeStep deploys base (controller-0, node-0 running), gives the
// plan target and starts node-0's update step without hand-over, which
// must begin with node-0's KILL; node-0's task is then killed. It
// returns node-0's reservation as Mesos held it before the step and
// node-0 once killed.
func resizeStep(t *testing.T, base, target Spec) (p *Plan, old OfferedReservation, pd Pod) {
	t.Helper()
	p = New(base)
	for _, s := range deploy[:4] {
		s.do(p)
	}
	status("node-0", TaskRunning)(p)
	old = reserved(p, "node-0", true)
	p.SetSpec(target)
	pending := p.SetTargets(map[PodKind]string{Controller: "c1", Node: "n2"}, map[PodKind]string{Controller: "c1", Node: "n1"}, false)
	if len(pending) != 1 || pending[0].Kind != Kill || pending[0].Pod != "node-0" {
		t.Fatalf("update starts with %v, want node-0's KILL", pending)
	}
	status("node-0", TaskKilled)(p)
	pd, _ = p.Pod("node-0")
	return p, old, pd
}

// grown1 is testSpec(1, 1) with node-0 of 2 cpus and 1024 MB.
func grown1() Spec {
	s := testSpec(1, 1)
	s.Node.CPUs, s.Node.MemMB = 2, 1024
	return s
}
