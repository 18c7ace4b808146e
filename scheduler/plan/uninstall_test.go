package plan

import (
	"errors"
	"strings"
	"testing"
)

func decisions(ds []Decision) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// TestUninstall: every task is killed; each node's reservation and
// volume, and a stray reservation with the service's label, are
// destroyed and unreserved as their agents offer them; another
// service's reservation is left alone; the plan is done once nothing
// is left, and the flag survives a round trip.
func TestUninstall(t *testing.T) {
	p := deployed(t, svcA)
	n0, _ := p.Pod("node-0")
	n1, _ := p.Pod("node-1")
	ds := p.Uninstall()
	got := decisions(ds)
	for _, pod := range []string{"controller-0", "node-0", "node-1"} {
		if !strings.Contains(got, "KILL task="+pod+"__1") {
			t.Fatalf("no kill of %s:\n%s", pod, got)
		}
	}
	if p.UninstallDone() || p.Progress().Status == Complete {
		t.Fatal("done before the tasks ended")
	}
	// Counts and Replace are refused; nothing is relaunched.
	if ds := p.SetCounts(1, 5); len(ds) != 0 {
		t.Fatalf("SetCounts while uninstalling: %v", ds)
	}
	if _, err := p.Replace("node-0"); !errors.Is(err, ErrUninstalling) {
		t.Fatalf("Replace: %v", err)
	}
	// Offers while the tasks are being killed: nothing launched,
	// nothing released yet.
	offer := func(id, agent string, rs ...OfferedReservation) Offer {
		o := big(id, agent)
		o.Reservations = rs
		return o
	}
	r0 := OfferedReservation{Framework: "sluice", Service: svcA, Pod: "node-0", ReservationID: n0.ReservationID, Resources: n0.Reserved, Volume: n0.Volume}
	r1 := OfferedReservation{Framework: "sluice", Service: svcA, Pod: "node-1", ReservationID: n1.ReservationID, Resources: n1.Reserved, Volume: n1.Volume}
	for _, d := range p.OnOffers([]Offer{offer("u1", "a1", r0)}) {
		if d.Kind == Accept {
			t.Fatalf("accepted while killing: %v", d)
		}
	}
	// Restarted in the middle: still uninstalling, kills sent again.
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Unmarshal(b); err != nil || !p.Uninstalling() {
		t.Fatalf("round trip: %v, uninstalling %v", err, p.Uninstalling())
	}
	p.Start(t0)
	for _, pod := range []string{"controller-0", "node-0", "node-1"} {
		pd, _ := p.Pod(pod)
		p.OnStatus(Status{TaskID: pd.TaskID, AgentID: pd.AgentID, State: TaskRunning, Reconciliation: true})
	}
	if got := decisions(p.Uninstall()); strings.Count(got, "KILL") != 3 {
		t.Fatalf("kills after a restart:\n%s", got)
	}
	// A RUNNING update sent before the kill: killed again.
	if got := decisions(status("node-0", TaskRunning)(p)); !strings.Contains(got, "KILL task=node-0__1") {
		t.Fatalf("a late RUNNING while uninstalling:\n%s", got)
	}
	for _, pod := range []string{"controller-0", "node-0", "node-1"} {
		run(p, []step{{pod + " killed", status(pod, TaskKilled)}})
	}
	if st := p.Progress(); st.Phases[0].Name != "kill-tasks" || len(st.Phases[0].Steps) != 0 || st.Phases[1].Name != "unreserve" || len(st.Phases[1].Steps) != 2 || st.Status == Complete {
		t.Fatalf("progress after the kills: %+v", st)
	}
	if w := p.Progress().Phases[1].Steps[0].Waiting; !strings.Contains(w, "agent a1") || !strings.Contains(w, n0.ReservationID) {
		t.Fatalf("waiting: %q", w)
	}
	stray := OfferedReservation{Framework: "sluice", Service: svcA, Pod: "node-7", ReservationID: svcA + ".node-7.r9", Resources: Resources{CPUs: 1, MemMB: 512, DiskMB: 100}}
	foreign := OfferedReservation{Framework: "sluice", Service: svcB, Pod: "node-0", ReservationID: svcB + ".node-0.r1", Resources: Resources{CPUs: 1, MemMB: 512}, Volume: &Volume{ID: svcB + ".node-0.r1.vol", SizeMB: 10}}
	got = decisions(p.OnOffers([]Offer{offer("u2", "a1", r0, stray, foreign)}))
	for _, want := range []string{
		"[DESTROY pod=node-0 res=" + n0.ReservationID, "[UNRESERVE pod=node-0 res=" + n0.ReservationID + " cpus:1 mem:512 disk:1024]",
		"[UNRESERVE pod=node-7 res=" + stray.ReservationID,
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("want %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, svcB) {
		t.Fatalf("touched another service's reservation:\n%s", got)
	}
	if p.UninstallDone() {
		t.Fatal("done with node-1's reservation left")
	}
	p.OnOffers([]Offer{offer("u3", "a2", r1)})
	if p.UninstallDone() {
		t.Fatal("done before the releases were confirmed")
	}
	// The release on a1 did not take effect (the ACCEPT was refused):
	// a1 offers r0 again, and it is released again.
	if got := decisions(p.OnOffers([]Offer{offer("u4", "a1", r0)})); !strings.Contains(got, "[UNRESERVE pod=node-0 res="+n0.ReservationID) {
		t.Fatalf("a reservation offered after its release is not released again:\n%s", got)
	}
	// A restart keeps the releases to confirm.
	b, err = p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Unmarshal(b); err != nil || p.UninstallDone() {
		t.Fatalf("round trip with releases to confirm: %v, done %v", err, p.UninstallDone())
	}
	p.Start(t0)
	p.OnOffers([]Offer{offer("u5", "a1"), offer("u6", "a2")})
	if !p.UninstallDone() || p.Progress().Status != Complete {
		t.Fatalf("not done: %+v", p.Progress())
	}
}

// releaseNode0 ends controller-0's and node-0's tasks in an uninstall
// of svcA, then a1 offers node-0's reservation (offer id+"1") and offers
// again without it (id+"2"): what is left waits for a2.
func releaseNode0(p *Plan, id string) {
	for _, pod := range []string{"controller-0", "node-0"} {
		run(p, []step{{pod + " killed", status(pod, TaskKilled)}})
	}
	var n0 orphan
	for _, or := range p.orphans {
		if or.Pod == "node-0" {
			n0 = or
		}
	}
	p.OnOffers([]Offer{{ID: id + "1", AgentID: "a1", Reservations: []OfferedReservation{{Framework: "sluice", Service: svcA, Pod: "node-0", ReservationID: n0.ReservationID, Resources: n0.Reserved, Volume: n0.Volume}}}})
	p.OnOffers([]Offer{{ID: id + "2", AgentID: "a1"}})
}

// A node whose agent is lost when the uninstall starts is removed at
// once; its reservation waits for the agent, listed in the progress.
func TestUninstallAgentLost(t *testing.T) {
	p := deployed(t, svcA)
	p.OnAgentLost("a2")
	got := decisions(p.Uninstall())
	if strings.Contains(got, "node-1") {
		t.Fatalf("killed a task of a lost agent:\n%s", got)
	}
	releaseNode0(p, "v")
	pr := p.Progress()
	if p.UninstallDone() || len(pr.Phases[1].Steps) != 1 || pr.Phases[1].Steps[0].AgentID != "a2" {
		t.Fatalf("progress: %+v", pr)
	}
}

// ForgetAgent drops what waits for an agent that will not come back,
// and only while uninstalling.
func TestForgetAgent(t *testing.T) {
	p := deployed(t, svcA)
	if _, err := p.ForgetAgent("a2"); !errors.Is(err, ErrNothingOnAgent) {
		t.Fatalf("ForgetAgent before the uninstall: %v", err)
	}
	p.OnAgentLost("a2")
	p.Uninstall()
	releaseNode0(p, "w")
	if p.UninstallDone() {
		t.Fatal("done with a2's reservation left")
	}
	if _, err := p.ForgetAgent("a9"); !errors.Is(err, ErrNothingOnAgent) {
		t.Fatalf("ForgetAgent of an agent with nothing: %v", err)
	}
	dropped, err := p.ForgetAgent("a2")
	if err != nil || len(dropped) != 1 || !strings.Contains(dropped[0], ".node-1.r") {
		t.Fatalf("ForgetAgent: %v, %v", dropped, err)
	}
	if !p.UninstallDone() {
		t.Fatalf("not done: %+v", p.Progress())
	}
}
