package plan

import "testing"

// TestNoSecondGrowWhileExecutorHoldsShare: a node's growth took effect
// (RESERVE + LAUNCH), the new task failed before TASK_RUNNING, and the
// agent offers the reservation back while the failed task's executor
// (listed in the offer) still holds its share. The plan waits for it
// rather than grow the reservation a second time.
func TestNoSecondGrowWhileExecutorHoldsShare(t *testing.T) {
	p, old, pd := resizeStep(t, testSpec(1, 1), grown1())
	grows := 0
	for _, d := range p.OnOffers([]Offer{big("o10", pd.AgentID, old)}) {
		for _, op := range d.Ops {
			if op.Kind == OpReserve {
				grows++
			}
		}
	}
	if grows != 1 {
		t.Fatalf("first relaunch: %d RESERVEs", grows)
	}
	// The ACCEPT took effect: the reservation is now 2 cpus, 1024 MB.
	status("node-0", TaskFailed)(p) // failed before it was healthy
	grownRes := old
	grownRes.Resources.CPUs, grownRes.Resources.MemMB = 2, 1024
	partial := grownRes
	partial.Resources = grownRes.Resources.minus(Resources{CPUs: 0.1, MemMB: 32}) // the executor's share
	failed, _ := p.Pod("node-0")
	withExecutor := big("o11", pd.AgentID, partial)
	withExecutor.ExecutorIDs = []string{failed.TaskID} // Mesos lists it until it exits
	for _, d := range p.OnOffers([]Offer{withExecutor}) {
		for _, op := range d.Ops {
			if op.Kind == OpReserve {
				t.Fatalf("reservation already at 2 cpus/1024 MB grown again by %+v (agent ends with %g cpus, %g MB)",
					op.Resources, grownRes.Resources.CPUs+op.Resources.CPUs, grownRes.Resources.MemMB+op.Resources.MemMB)
			}
		}
	}
}

// TestRefusalGoesWithReplace: the refusal to grow a reservation of
// another principal tells the operator to replace the pod; once it is
// replaced (reserved anew under the framework's principal) the refusal
// is no longer listed.
func TestRefusalGoesWithReplace(t *testing.T) {
	base, target := testSpec(1, 1), grown1()
	base.Principal, target.Principal = "old", "sa"
	p, old, pd := resizeStep(t, base, target)
	old.Principal = "old"
	p.OnOffers([]Offer{big("o10", pd.AgentID, old)})
	status("node-0", TaskRunning)(p)
	ready("node-0")(p)
	if len(p.ResizeRefusals()) != 1 {
		t.Fatalf("refusals %q", p.ResizeRefusals())
	}
	if _, err := p.Replace("node-0"); err != nil {
		t.Fatal(err)
	}
	status("node-0", TaskKilled)(p)
	p.OnOffers([]Offer{big("o11", "a9")})
	status("node-0", TaskRunning)(p)
	got, _ := p.Pod("node-0")
	if got.AgentID != "a9" || got.Reserved.CPUs != 2 {
		t.Fatalf("not replaced: %+v", got)
	}
	if r := p.ResizeRefusals(); len(r) != 0 {
		t.Fatalf("node-0 replaced at %s, still listed as refused: %q", got.Reserved, r)
	}
}

// TestMixedResizePartlyTookEffect: cpus grow, mem shrinks; of the ACCEPT
// only the UNRESERVE took effect (the RESERVE dropped, the LAUNCH
// failed): the agent holds cpus of the old size and mem of the new,
// which neither size fits whole. The relaunch resizes from it, each
// dimension from the size the offer holds.
func TestMixedResizePartlyTookEffect(t *testing.T) {
	base := testSpec(1, 1)
	base.Node.MemMB = 1024
	target := base
	target.Node.CPUs, target.Node.MemMB = 2, 512
	p, old, pd := resizeStep(t, base, target)
	p.OnOffers([]Offer{big("o10", pd.AgentID, old)})
	status("node-0", TaskError)(p)
	partly := old
	partly.Resources.MemMB = 512
	for i, id := range []string{"o11", "o12", "o13"} {
		_ = i
		for _, d := range p.OnOffers([]Offer{big(id, pd.AgentID, partly)}) {
			if d.Kind == Accept {
				return
			}
		}
	}
	t.Fatalf("node-0 never relaunched: agent holds %s", partly.Resources)
}

// TestForgottenPlacementDropsResizing: the agent lost a node's
// reservation (TASK_GONE) after a grow ACCEPT: the placement is forgotten
// (useOffer step 2) with the size it asked for, so the new placement's
// TASK_RUNNING does not take that as its reservation's size.
func TestForgottenPlacementDropsResizing(t *testing.T) {
	p, old, pd := resizeStep(t, testSpec(1, 1), grown1())
	p.OnOffers([]Offer{big("o10", pd.AgentID, old)})
	status("node-0", TaskGone)(p)
	p.SetSpec(testSpec(1, 1))                   // the operator goes back to 1 cpu, 512 MB
	p.OnOffers([]Offer{big("o11", pd.AgentID)}) // without the reservation: placed anew
	status("node-0", TaskRunning)(p)
	got, _ := p.Pod("node-0")
	if got.Reserved.CPUs != 1 || got.Reserved.MemMB != 512 {
		t.Fatalf("node-0 placed anew with 1 cpu 512 MB; plan believes %s (resizing %v)", got.Reserved, got.Resizing)
	}
}
