package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	sched "github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

func TestRoleFor(t *testing.T) {
	for name, want := range map[string]string{"sluice": "sluice-role", "/sluice-b": "sluice-b-role", "/prod/team/sluice": "prod__team__sluice-role"} {
		if got := RoleFor(name); got != want || ValidRole(got) != nil {
			t.Errorf("RoleFor(%q) = %q (%v), want %q", name, got, ValidRole(got), want)
		}
	}
	for _, bad := range []string{"", "/a", "a/", "a//b", "a/./b", "..", "-a", "a b", "a\tb", "a/*"} {
		if err := ValidRole(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ValidRole(%q) = %v", bad, err)
		}
	}
	for _, good := range []string{"*", "sluice-role", "prod/sluice", "a.b_c"} {
		if err := ValidRole(good); err != nil {
			t.Errorf("ValidRole(%q) = %v", good, err)
		}
	}
}

// TestStoredRole: the role of a stored plan's reservations wins over a
// derived one, and a given one that differs is refused, naming both.
func TestStoredRole(t *testing.T) {
	h := newHarness(t, 3)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	r.stop(t)

	h.cfg.Role = "other-role"
	d, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(context.Background())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"other-role"`) || !strings.Contains(err.Error(), `"sluice"`) {
		t.Fatalf("a different --role: %v", err)
	}

	h.cfg.RoleDerived = true
	subs := len(h.m.CallsOf(sched.Call_SUBSCRIBE))
	r = h.start("s2")
	eventually(t, "subscribed again", r.healthy)
	calls := h.m.CallsOf(sched.Call_SUBSCRIBE)
	if len(calls) <= subs || calls[len(calls)-1].Subscribe.FrameworkInfo.GetRole() != "sluice" {
		t.Fatalf("a derived role did not give way to the stored one: %+v", calls[len(calls)-1].Subscribe.FrameworkInfo)
	}
}

// TestUninstall deploys, then restarts the scheduler with Uninstall:
// every task ends, every reservation and volume is released, the
// framework is torn down, the state deleted, and the plan is COMPLETE;
// once stopped, the scheduler leaves nothing under its root.
func TestUninstall(t *testing.T) {
	h := newHarness(t, 3)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	vols := 0
	for _, a := range []string{"a0", "a1", "a2"} {
		v, _ := h.m.Agent(a)
		for _, vol := range v.Volumes {
			vols++
			if id := vol.PersistenceID; !strings.Contains(id, ".node-") || !plan.ValidServiceID(strings.Split(id, ".")[0]) {
				t.Fatalf("volume id without the service id: %s", id)
			}
		}
	}
	if vols != 2 {
		t.Fatalf("%d volumes before the uninstall, want 2", vols)
	}
	r.stop(t)

	h.cfg.Uninstall = true
	r = h.start("s2")
	eventually(t, "uninstalled", r.complete(t))
	p, err := r.c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range p.Phases {
		names = append(names, ph.Name+"="+string(ph.Status))
	}
	if strings.Join(names, " ") != "kill-tasks=COMPLETE unreserve=COMPLETE deregister=COMPLETE" {
		t.Fatalf("phases %v", names)
	}
	for _, tv := range h.m.Tasks() {
		if tv.State == mesos.TASK_RUNNING {
			t.Fatalf("task %s still runs", tv.ID)
		}
	}
	for _, a := range []string{"a0", "a1", "a2"} {
		v, err := h.m.Agent(a)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Reserved) > 0 || len(v.Volumes) > 0 {
			t.Fatalf("agent %s keeps %d reserved resources and %d volumes", a, len(v.Reserved), len(v.Volumes))
		}
	}
	if hl, err := r.c.Health(context.Background()); err != nil || hl.Status != "uninstalled" {
		t.Fatalf("health after the uninstall: %+v, %v", hl, err)
	}
	if len(h.m.CallsOf(sched.Call_TEARDOWN)) != 1 || h.m.Subscribed() {
		t.Fatalf("teardowns %d, subscribed %v", len(h.m.CallsOf(sched.Call_TEARDOWN)), h.m.Subscribed())
	}
	if _, err := r.c.SetCounts(context.Background(), CountsRequest{Nodes: ptr(3)}); err == nil {
		t.Fatal("counts changed after the uninstall")
	}
	zst := h.store(t)
	keys := func() []string { return clustertest.Keys(context.Background(), zst) }
	for _, k := range keys() {
		if !strings.HasPrefix(k, "scheduler/leader") && k != "scheduler" {
			t.Fatalf("key %s left after the uninstall (all: %v)", k, keys())
		}
	}
	r.stop(t)
	if left := keys(); len(left) != 0 {
		t.Fatalf("keys left once the scheduler stopped: %v", left)
	}
	// Started again (Marathon restarts it until Cosmos removes it): still
	// COMPLETE at once, no new framework.
	subs := len(h.m.CallsOf(sched.Call_SUBSCRIBE))
	r = h.start("s3")
	eventually(t, "complete again", r.complete(t))
	if n := len(h.m.CallsOf(sched.Call_SUBSCRIBE)); n != subs {
		t.Fatalf("subscribed again after the uninstall: %d calls, had %d", n, subs)
	}
}

// TestUninstallAgentDown: an uninstall waits for a node's agent that is
// down, naming it in the plan, until the operator forgets the agent.
func TestUninstallAgentDown(t *testing.T) {
	h := newHarness(t, 3)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	down := r.pods(t)["node-1"].AgentID
	if err := h.m.KillAgent(down); err != nil {
		t.Fatal(err)
	}
	eventually(t, "node-1's agent lost", func() bool { return r.pods(t)["node-1"].AgentLost })
	r.stop(t)

	h.cfg.Uninstall = true
	r = h.start("s2")
	waiting := func() bool {
		p, err := r.c.Plan(context.Background())
		if err != nil || len(p.Phases) != 3 {
			return false
		}
		steps := p.Phases[1].Steps
		return len(steps) == 1 && steps[0].AgentID == down && strings.Contains(steps[0].Waiting, "agent "+down) && p.Phases[0].Status == plan.Complete
	}
	eventually(t, "the uninstall waits for the lost agent only", waiting)
	if _, err := r.c.ForgetAgent(context.Background(), "no-such-agent"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("forgetting an agent nothing waits for: %v", err)
	}
	if _, err := r.c.ForgetAgent(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	eventually(t, "uninstalled", r.complete(t))
	if n := len(h.m.CallsOf(sched.Call_TEARDOWN)); n != 1 {
		t.Fatalf("%d teardowns", n)
	}
}
