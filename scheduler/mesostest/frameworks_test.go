package mesostest

import (
	"context"
	"errors"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// reserveFor reserves r dynamically to role, labelled with the pod.
func reserveFor(r mesos.Resource, role, pod string) mesos.Resource {
	typ := mesos.Resource_ReservationInfo_DYNAMIC
	r.Reservations = []mesos.Resource_ReservationInfo{{
		Type: &typ, Role: strPtr(role),
		Labels: &mesos.Labels{Labels: []mesos.Label{{Key: "pod", Value: strPtr(pod)}}},
	}}
	return r
}

// multiRole is the FrameworkInfo of a MULTI_ROLE framework in role.
func multiRole(name, role string) *mesos.FrameworkInfo {
	return &mesos.FrameworkInfo{User: "test", Name: name, Roles: []string{role}, Checkpoint: boolPtr(true),
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
}

func awaitCond(t *testing.T, m *Master, what string, cond func() bool) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Await(c, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestSeveralFrameworks: two frameworks in their own roles share one
// agent. An agent's resources are in one offer at a time; a
// reservation is offered only to a framework of its role; both may
// use the same task and executor ids; a failover or a removal of one
// leaves the other alone.
func TestSeveralFrameworks(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	a := subscribeWith(t, m, multiRole("alpha", "alpha"))
	oa := a.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" && cpus(o) == 4 })
	b := subscribeWith(t, m, multiRole("beta", "beta"))
	if a.fwID == b.fwID {
		t.Fatalf("both frameworks got id %s", a.fwID)
	}
	m.Allocate()
	for _, o := range m.Offers() {
		if o.FrameworkID != a.fwID {
			t.Fatalf("offer %+v to %s while alpha holds all of a1", o, o.FrameworkID)
		}
	}

	// beta cannot use alpha's offer: its task is lost, the offer stays
	// alpha's.
	b.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(executorTask("steal", "a1", mesos.Resources{scalar("cpus", 1)}, ""))}.WithOffers(oa.ID)))
	if st := b.update("steal", mesos.TASK_LOST); st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Fatalf("a launch on another framework's offer: %v %v", st.GetState(), st.GetReason())
	}

	// alpha reserves and launches, then declines the rest for a while:
	// beta is offered what is left, never alpha's reservation.
	res := mesos.Resources{reserveFor(scalar("cpus", 1), "alpha", "p"), reserveFor(scalar("mem", 128), "alpha", "p")}
	a.call(calls.Accept(calls.OfferOperations{calls.OpReserve(res...), calls.OpLaunch(executorTask("t1", "a1", res, ""))}.WithOffers(oa.ID)).With(calls.RefuseSeconds(time.Hour)))
	a.update("t1", mesos.TASK_RUNNING)
	ob := b.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	for _, r := range ob.Resources {
		if role := reservationRole(r); role != "*" {
			t.Fatalf("beta offered %v reserved to %q", r, role)
		}
	}
	if cpus(ob) != 3 {
		t.Fatalf("beta offered %v cpus, want the 3 alpha left", cpus(ob))
	}
	// The same task and executor ids in another framework are another task.
	b.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(executorTask("t1", "a1", mesos.Resources{scalar("cpus", 1), scalar("mem", 64)}, ""))}.WithOffers(ob.ID)))
	b.update("t1", mesos.TASK_RUNNING)
	roles := map[string]string{}
	for _, tv := range m.Tasks() {
		roles[tv.FrameworkID] = tv.Role
	}
	if len(roles) != 2 || roles[a.fwID] != "alpha" || roles[b.fwID] != "beta" {
		t.Fatalf("tasks by framework and role %v, want alpha's and beta's t1", roles)
	}
	if _, ok := m.Task("t1"); ok {
		t.Fatal("Task(t1) found one task while two frameworks use the id")
	}
	if err := m.FailTask("t1"); !errors.Is(err, ErrNoTask) {
		t.Fatalf("FailTask(t1) with two t1s: %v, want ErrNoTask", err)
	}
	if tv, ok := m.TaskOf(b.fwID, "t1"); !ok || tv.FrameworkID != b.fwID || tv.Role != "beta" {
		t.Fatalf("TaskOf(beta, t1): %+v %v", tv, ok)
	}
	av, err := m.Agent("a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(av.Roles["alpha"]) != 2 || len(av.Roles) != 1 {
		t.Fatalf("reservations by role %v, want alpha's cpus and mem", av.Roles)
	}

	// Implicit reconciliation answers for the caller's own tasks only.
	b.call(calls.Reconcile(nil))
	ev := b.next(func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_UPDATE && e.Update.Status.GetReason() == mesos.REASON_RECONCILIATION
	})
	if ev.Update.Status.GetExecutorID().GetValue() != "exec-t1" {
		t.Fatalf("reconciliation %+v", ev.Update.Status)
	}

	// alpha fails over: beta keeps its stream.
	subs := len(m.CallsOf(scheduler.Call_SUBSCRIBE))
	a2 := subscribe(t, m, a.fwID, codecs.MediaTypeProtobuf)
	if a2.fwID != a.fwID || len(m.CallsOf(scheduler.Call_SUBSCRIBE)) != subs+1 {
		t.Fatalf("failover got id %s, want %s", a2.fwID, a.fwID)
	}
	fws := m.Frameworks()
	if len(fws) != 2 || !fws[0].Subscribed || !fws[1].Subscribed || fws[1].Roles[0] != "beta" {
		t.Fatalf("frameworks after alpha's failover %+v", fws)
	}

	// alpha is removed: its task ends, beta's runs on, alpha's
	// reservation stays with its role.
	if err := m.RemoveFramework(a.fwID); err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveFramework(a.fwID); err == nil {
		t.Fatal("RemoveFramework of a removed framework: no error")
	}
	awaitCond(t, m, "alpha's task gone", func() bool {
		ts := m.Tasks()
		return len(ts) == 1 && ts[0].FrameworkID == b.fwID && ts[0].State == mesos.TASK_RUNNING
	})
	if fws := m.Frameworks(); len(fws) != 1 || fws[0].ID != b.fwID || !fws[0].Subscribed {
		t.Fatalf("frameworks after alpha's removal %+v", fws)
	}
	if av, _ := m.Agent("a1"); len(av.Roles["alpha"]) != 2 {
		t.Fatalf("alpha's reservation after its removal: %v", av.Roles)
	}
	if err := m.DisconnectScheduler(a.fwID); err == nil {
		t.Fatal("DisconnectScheduler of a removed framework: no error")
	}
	if err := m.FailTaskOf(b.fwID, "t1"); err != nil {
		t.Fatal(err)
	}
	b.update("t1", mesos.TASK_FAILED)
}
