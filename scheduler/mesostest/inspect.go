package mesostest

import (
	"context"
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// TaskView is a copy of what the master knows of a task.
type TaskView struct {
	ID, Name, AgentID, ExecutorID string
	// FrameworkID is the framework that launched the task; Role the
	// role its resources are allocated to (their reservation's role,
	// else the framework's first role).
	FrameworkID, Role string
	State             mesos.TaskState
	Resources         mesos.Resources
	Sandbox           string // the executor run's directory
	// Command is the CommandInfo of the task's executor (a copy) as the
	// master and the agent hold it and Mesos shows it in their state
	// endpoints: SECRET variables unresolved.
	Command mesos.CommandInfo
	// Unacknowledged counts status updates the agent still waits to
	// have acknowledged.
	Unacknowledged int
}

func (t *task) view() TaskView {
	return TaskView{
		ID: t.info.TaskID.Value, Name: t.info.Name, AgentID: t.agentID, ExecutorID: t.executor.id,
		FrameworkID: t.fwID, Role: t.role,
		State: t.state, Resources: t.resources.Clone(), Sandbox: t.executor.sandbox, Unacknowledged: len(t.pending),
		Command: cloneCommand(t.executor.info.Command),
	}
}

// cloneCommand copies ci deeply enough that a caller cannot change it.
func cloneCommand(ci *mesos.CommandInfo) mesos.CommandInfo {
	if ci == nil {
		return mesos.CommandInfo{}
	}
	var out mesos.CommandInfo
	b, err := ci.Marshal()
	if err == nil {
		err = out.Unmarshal(b)
	}
	if err != nil {
		panic("mesostest: copying a CommandInfo: " + err.Error())
	}
	return out
}

// VolumeView is a persistent volume on an agent and the real directory
// that holds its data.
type VolumeView struct {
	PersistenceID string
	ContainerPath string
	Role          string // the role the volume's disk is reserved to
	Dir           string
	Resource      mesos.Resource
}

// AgentView is a copy of an agent's bookkeeping.
type AgentView struct {
	ID, Hostname string
	Up           bool
	Total        mesos.Resources // reservations and volumes included
	Used         mesos.Resources // held by tasks and executors
	// Reserved lists the dynamically reserved resources, volumes
	// included, with their reservation labels.
	Reserved mesos.Resources
	Volumes  []VolumeView
	// Roles maps each role with reservations on the agent to what is
	// reserved to it (volumes included).
	Roles map[string]mesos.Resources
}

// OfferView is an outstanding offer.
type OfferView struct {
	ID, AgentID string
	FrameworkID string
	Resources   mesos.Resources
}

// ExecCall is a call the agent's executor endpoint received.
type ExecCall struct {
	AgentID string
	Call    *executor.Call
}

// CPUsMem sums the cpus and mem of rs.
func CPUsMem(rs mesos.Resources) (cpus, mem float64) {
	for _, r := range rs {
		switch r.Name {
		case "cpus":
			cpus += r.GetScalar().GetValue()
		case "mem":
			mem += r.GetScalar().GetValue()
		}
	}
	return cpus, mem
}

// ReservedWith returns those of rs whose reservation (the last of their
// reservations) carries the label key=value.
func ReservedWith(rs mesos.Resources, key, value string) mesos.Resources {
	var out mesos.Resources
	for _, r := range rs {
		mine := false
		if n := len(r.Reservations); n > 0 {
			for _, l := range r.Reservations[n-1].GetLabels().GetLabels() {
				mine = mine || (l.Key == key && l.GetValue() == value)
			}
		}
		if mine {
			out = append(out, r)
		}
	}
	return out
}

// Tasks lists the tasks the master knows (live, or terminal with an
// unacknowledged update, or lost with their agent), sorted by id.
func (m *Master) Tasks() []TaskView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TaskView
	for _, t := range m.tasksSortedLocked() {
		out = append(out, t.view())
	}
	return out
}

// Task returns one task's view. With several frameworks, a task id
// that more than one of them uses is not found (use Tasks).
func (m *Master) Task(id string) (TaskView, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, err := m.findTaskLocked(id); err == nil {
		return t.view(), true
	}
	return TaskView{}, false
}

// TaskOf returns the view of framework frameworkID's task id.
func (m *Master) TaskOf(frameworkID, id string) (TaskView, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.mu.tasks[taskKey(frameworkID, id)]; t != nil {
		return t.view(), true
	}
	return TaskView{}, false
}

// findTaskLocked finds a live task by id whatever its framework: an id
// no framework uses, or that several use, is ErrNoTask.
func (m *Master) findTaskLocked(id string) (*task, error) {
	var found *task
	for _, t := range m.mu.tasks {
		if t.info.TaskID.Value != id {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%w: %s is used by frameworks %s and %s", ErrNoTask, id, found.fwID, t.fwID)
		}
		found = t
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoTask, id)
	}
	return found, nil
}

// CompletedTasks lists tasks the master has forgotten: terminal and
// acknowledged, or lost with a restarted agent; oldest first.
func (m *Master) CompletedTasks() []TaskView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]TaskView(nil), m.mu.completed...)
}

// Agent returns one agent's bookkeeping.
func (m *Master) Agent(id string) (AgentView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.mu.agents[id]
	if a == nil {
		return AgentView{}, fmt.Errorf("%w: %s", ErrNoAgent, id)
	}
	v := AgentView{ID: a.id, Hostname: a.hostname, Up: a.up, Total: a.total.Clone(), Used: a.used.Clone()}
	for _, r := range a.total {
		if r.IsDynamicallyReserved() {
			v.Reserved = append(v.Reserved, r)
			if v.Roles == nil {
				v.Roles = map[string]mesos.Resources{}
			}
			role := reservationRole(r)
			v.Roles[role] = append(v.Roles[role], r)
		}
		if r.IsPersistentVolume() {
			p := r.GetDisk().GetPersistence().GetID()
			v.Volumes = append(v.Volumes, VolumeView{
				PersistenceID: p, ContainerPath: r.GetDisk().GetVolume().GetContainerPath(),
				Role: reservationRole(r), Dir: m.volumeDir(a.id, r), Resource: r,
			})
		}
	}
	return v, nil
}

// Offers lists the outstanding offers.
func (m *Master) Offers() []OfferView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []OfferView
	for _, id := range m.mu.order {
		for _, o := range m.mu.offers {
			if o.agentID == id {
				out = append(out, OfferView{ID: o.id, AgentID: o.agentID, FrameworkID: o.fwID, Resources: o.resources.Clone()})
			}
		}
	}
	return out
}

// Calls returns every scheduler call received, in order (rejected ones
// included). The calls are shared: do not modify them.
func (m *Master) Calls() []*scheduler.Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*scheduler.Call(nil), m.mu.calls...)
}

// CallsOf returns the scheduler calls of one type, in order.
func (m *Master) CallsOf(t scheduler.Call_Type) []*scheduler.Call {
	var out []*scheduler.Call
	for _, c := range m.Calls() {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

func (m *Master) recordExecCallLocked(agentID string, c *executor.Call) {
	m.mu.execCalls = append(m.mu.execCalls, ExecCall{AgentID: agentID, Call: c})
}

// ExecutorCalls returns every call the agents' executor endpoints
// received, in order.
func (m *Master) ExecutorCalls() []ExecCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ExecCall(nil), m.mu.execCalls...)
}

// OperationErrors lists the offer operations the master refused (an
// invalid operation is dropped, as Mesos does), as text, in order.
func (m *Master) OperationErrors() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.mu.opErrors...)
}

// FrameworkView is what the master knows of a registered framework.
type FrameworkView struct {
	ID, Name, Principal string
	Roles               []string
	Subscribed          bool // has an open event stream
	PartitionAware      bool
}

// Frameworks lists the registered frameworks in the order they first
// subscribed (removed ones are not listed).
func (m *Master) Frameworks() []FrameworkView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []FrameworkView
	for _, id := range m.mu.fwOrder {
		fw := m.mu.fws[id]
		out = append(out, FrameworkView{
			ID: fw.id, Name: fw.info.Name, Principal: fw.principal(),
			Roles: append([]string(nil), m.roles(fw)...), Subscribed: fw.stream != nil, PartitionAware: fw.partitionAware,
		})
	}
	return out
}

// FrameworkID is the id of the only registered framework; with none it
// is "", with several the first registered (use Frameworks to tell them
// apart).
func (m *Master) FrameworkID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.mu.fwOrder) == 0 {
		return ""
	}
	return m.mu.fwOrder[0]
}

// Subscribed reports whether the framework FrameworkID names has an
// open event stream.
func (m *Master) Subscribed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.mu.fwOrder) == 0 {
		return false
	}
	return m.mu.fws[m.mu.fwOrder[0]].stream != nil
}

// Await blocks until cond returns true or ctx ends. cond is evaluated
// now and after every change of the master's state; it may call the
// inspection methods (it runs without the master's lock held).
func (m *Master) Await(ctx context.Context, cond func() bool) error {
	for {
		m.mu.Lock()
		ch := m.mu.changed
		m.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("mesostest: await: %w", ctx.Err())
		}
	}
}
