package mesosconv

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestEveryTaskStateClassified goes over every value of the v1
// TaskState enum: a state added to the protos fails here until it is
// given a class deliberately.
func TestEveryTaskStateClassified(t *testing.T) {
	want := map[mesos.TaskState]plan.StateClass{
		mesos.TASK_STAGING:          plan.ClassActive,
		mesos.TASK_STARTING:         plan.ClassActive,
		mesos.TASK_RUNNING:          plan.ClassActive,
		mesos.TASK_KILLING:          plan.ClassActive,
		mesos.TASK_FINISHED:         plan.ClassEnded,
		mesos.TASK_FAILED:           plan.ClassEnded,
		mesos.TASK_KILLED:           plan.ClassEnded,
		mesos.TASK_ERROR:            plan.ClassEnded,
		mesos.TASK_DROPPED:          plan.ClassEnded,
		mesos.TASK_UNREACHABLE:      plan.ClassUnreachable,
		mesos.TASK_LOST:             plan.ClassLost,
		mesos.TASK_UNKNOWN:          plan.ClassLost,
		mesos.TASK_GONE:             plan.ClassGone,
		mesos.TASK_GONE_BY_OPERATOR: plan.ClassAgentRemoved,
	}
	for v, name := range mesos.TaskState_name {
		state := mesos.TaskState(v)
		c, ok := want[state]
		if !ok {
			t.Errorf("%s: not in this table; classify it in plan.TaskState.Class and here", name)
			continue
		}
		got := Status(mesos.TaskStatus{State: &state})
		if got.State != plan.TaskState(name) {
			t.Errorf("%s: converted to %q", name, got.State)
		}
		if got.State.Class() != c {
			t.Errorf("%s: class %d, want %d", name, got.State.Class(), c)
		}
	}
	if len(want) != len(mesos.TaskState_name) {
		t.Errorf("the table has %d states, the enum %d", len(want), len(mesos.TaskState_name))
	}
}

// TestStatusReasons: the reasons the plan acts on.
func TestStatusReasons(t *testing.T) {
	status := func(s mesos.TaskState, r mesos.TaskStatus_Reason) plan.Status {
		return Status(mesos.TaskStatus{State: &s, Reason: &r})
	}
	if st := status(mesos.TASK_RUNNING, mesos.REASON_RECONCILIATION); !st.Reconciliation || st.State != plan.TaskRunning {
		t.Errorf("a reconciliation answer: %+v", st)
	}
	if st := status(mesos.TASK_RUNNING, mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED); st.Reconciliation {
		t.Errorf("not a reconciliation answer: %+v", st)
	}
	// A framework that is not partition-aware hears TASK_LOST for a task on an agent marked gone.
	if st := status(mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED_BY_OPERATOR); st.State != plan.TaskGoneByOperator {
		t.Errorf("TASK_LOST, agent removed by operator: %q, want TASK_GONE_BY_OPERATOR", st.State)
	}
	if st := status(mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED); st.State != plan.TaskLost {
		t.Errorf("TASK_LOST, agent removed: %q, want TASK_LOST (the agent may come back)", st.State)
	}
	if st := status(mesos.TASK_RUNNING, mesos.REASON_AGENT_REMOVED_BY_OPERATOR); st.State != plan.TaskRunning {
		t.Errorf("a live state is never overridden: %q", st.State)
	}
}
