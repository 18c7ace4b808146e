package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	sched "github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestAgentDecommissioned: the operator marks agents gone (the fake
// master's DecommissionAgent, what `dcos node decommission` does): each
// task there ends TASK_GONE_BY_OPERATOR, and the pod — a node with a new
// reservation and volume, a controller, a head — is launched on another
// agent until the plan is complete again.
func TestAgentDecommissioned(t *testing.T) {
	h := newHarness(t, 6)
	h.cfg.Spec.NFSHeads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 64}}
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	for _, name := range []string{"node-0", "controller-0", "nfs-head-0"} {
		before := r.pods(t)[name]
		var volume string
		if before.Kind == plan.Node {
			volume = persistenceID(t, h.m, before.TaskID)
		}
		if err := h.m.DecommissionAgent(before.AgentID); err != nil {
			t.Fatal(err)
		}
		eventually(t, name+" relaunched elsewhere", func() bool {
			p := r.pods(t)[name]
			return p.AgentID != before.AgentID && p.State == plan.TaskRunning && r.complete(t)()
		})
		if before.Kind == plan.Node {
			if now := persistenceID(t, h.m, r.pods(t)[name].TaskID); now == volume || now == "" {
				t.Fatalf("%s: volume %q after the decommission, %q before", name, now, volume)
			}
		}
	}
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}

// persistenceID is the persistent volume of a task the master knows.
func persistenceID(t *testing.T, m *mesostest.Master, taskID string) string {
	t.Helper()
	tv, ok := m.Task(taskID)
	if !ok {
		t.Fatalf("the master has no task %s", taskID)
	}
	for _, r := range tv.Resources {
		if p := r.GetDisk().GetPersistence(); p != nil {
			return p.ID
		}
	}
	return ""
}

// TestFrameworkRemoved: the master removes the framework (the operator's
// teardown, or the failover timeout): Run stops with ErrFrameworkRemoved
// instead of re-subscribing for ever, and keeps the stored framework id.
// Started again with ForgetFramework, the scheduler registers as a new
// framework and adopts the nodes' reservations and volumes: every pod
// runs again, the nodes on their agents with their volumes.
func TestFrameworkRemoved(t *testing.T) {
	h := newHarness(t, 3)
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	before := r.pods(t)
	volumes := map[string]string{}
	for name, p := range before {
		if p.Kind == plan.Node {
			volumes[name] = persistenceID(t, h.m, p.TaskID)
		}
	}
	oldID := h.m.FrameworkID()
	subs := len(h.m.CallsOf(sched.Call_SUBSCRIBE))
	if err := h.m.RemoveFramework(h.m.FrameworkID()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.errc:
		if !errors.Is(err, ErrFrameworkRemoved) || !strings.Contains(err.Error(), "--forget-framework") || !strings.Contains(err.Error(), oldID) {
			t.Fatalf("Run: %v, want ErrFrameworkRemoved naming %s and --forget-framework", err, oldID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run goes on after the framework was removed")
	}
	r.cancel()
	r.cancel = nil
	if n := len(h.m.CallsOf(sched.Call_SUBSCRIBE)); n != subs+1 {
		t.Fatalf("%d SUBSCRIBEs after the removal, want 1", n-subs)
	}
	if got := storedFrameworkID(t, h); got != oldID {
		t.Fatalf("stored framework id %q, want %q kept", got, oldID)
	}

	h.cfg.ForgetFramework = true
	r2 := h.start("s2")
	// Complete, and on tasks the master knows: right after the new
	// SUBSCRIBE the plan still holds the old framework's tasks until
	// reconciliation answers for them.
	eventually(t, "redeployed under a new framework", func() bool {
		if h.m.FrameworkID() == "" || !r2.complete(t)() {
			return false
		}
		// The stored plan shows the old tasks running until
		// reconciliation answers them: wait for the relaunched ones.
		for _, p := range r2.pods(t) {
			if tv, ok := h.m.Task(p.TaskID); !ok || tv.State != mesos.TASK_RUNNING {
				return false
			}
		}
		return true
	})
	newID := h.m.FrameworkID()
	if newID == oldID {
		t.Fatalf("registered again as %s", newID)
	}
	if got := storedFrameworkID(t, h); got != newID {
		t.Fatalf("stored framework id %q, want %q", got, newID)
	}
	after := r2.pods(t)
	for name, vol := range volumes {
		p := after[name]
		if p.AgentID != before[name].AgentID || persistenceID(t, h.m, p.TaskID) != vol {
			t.Fatalf("%s: on %s with volume %q, was on %s with %q", name, p.AgentID, persistenceID(t, h.m, p.TaskID), before[name].AgentID, vol)
		}
	}
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}

func storedFrameworkID(t *testing.T, h *harness) string {
	t.Helper()
	kv, err := openStore(t, h).Get(context.Background(), keyFrameworkID)
	if err != nil {
		t.Fatal(err)
	}
	return string(kv.Value)
}
