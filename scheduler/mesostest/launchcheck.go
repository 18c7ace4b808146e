package mesostest

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Mesos' minimum executor resources (src/master/constants.hpp:
// MIN_CPUS, MIN_MEM).
const (
	minExecutorCPUs  = 0.01
	minExecutorMemMB = 32
)

// checkLaunchLocked applies Mesos' task and executor validation
// (src/master/validation.cpp, task::internal::validateResources and
// validateExecutor) beyond what launchLocked checks: it returns the
// TASK_ERROR message for a task Mesos refuses, "" for one it takes.
// newExecutor: the task's executor does not run on the agent yet, so
// its resources count (the offer check, in launchLocked, adds them).
//
//   - A task with no resources at all is refused ("Task uses no
//     resources").
//   - An executor's resources may hold no shared resource (a volume
//     with DiskInfo.shared set).
//   - An executor with less than MIN_CPUS cpus or MIN_MEM mem is taken,
//     but a real master logs a warning at every such launch ("Please
//     update your executor, as this will be mandatory in future
//     releases"): recorded in Warnings.
func (m *Master) checkLaunchLocked(ti mesos.TaskInfo, newExecutor bool) string {
	if len(ti.Resources) == 0 {
		return "Task uses no resources"
	}
	if ti.Executor == nil || !newExecutor {
		return ""
	}
	res := mesos.Resources(ti.Executor.Resources)
	for _, r := range res {
		if r.Shared != nil {
			return fmt.Sprintf("Executor resources %v should not contain any shared resources", res)
		}
	}
	cpus, mem := CPUsMem(res)
	id := ti.Executor.ExecutorID.Value
	if cpus < minExecutorCPUs {
		m.mu.warnings = append(m.mu.warnings, fmt.Sprintf("Executor '%s' for task '%s' uses less CPUs (%g) than the minimum required (%g)", id, ti.TaskID.Value, cpus, minExecutorCPUs))
	}
	if mem < minExecutorMemMB {
		m.mu.warnings = append(m.mu.warnings, fmt.Sprintf("Executor '%s' for task '%s' uses less memory (%g MB) than the minimum required (%d MB)", id, ti.TaskID.Value, mem, minExecutorMemMB))
	}
	return ""
}

// Warnings lists, in order, what a real master would have logged as a
// warning about the framework's calls (executors below Mesos' minimum
// resources).
func (m *Master) Warnings() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.mu.warnings...)
}

// ExecutorView is a running executor and the resources it holds.
type ExecutorView struct {
	ID, AgentID string
	Resources   mesos.Resources
}

// Executors lists the executors whose process has not exited, by agent
// then id.
func (m *Master) Executors() []ExecutorView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ExecutorView
	for _, id := range m.mu.order {
		for _, er := range m.mu.agents[id].executorsSorted() {
			if !er.exited {
				out = append(out, ExecutorView{ID: er.id, AgentID: id, Resources: er.res.Clone()})
			}
		}
	}
	return out
}
