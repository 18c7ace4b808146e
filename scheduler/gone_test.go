package scheduler

import (
	"testing"

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
