package mesostest

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/resources"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// AgentSpec describes a simulated agent. Its resources are unreserved
// ("*") until a framework reserves them.
type AgentSpec struct {
	ID       string
	Hostname string // default "host-" + ID
	CPUs     float64
	MemMB    float64
	DiskMB   float64
	Ports    []mesos.Value_Range
	// Disks are the agent's PATH and MOUNT disks, offered besides DiskMB
	// (the root disk) as disk resources with their DiskInfo.Source.
	Disks []AgentDisk
	// Extra resources, added as given (e.g. statically reserved ones).
	Extra mesos.Resources
	// Attributes are offered as TEXT attributes (Offer.attributes).
	// Region and Zone are the agent's fault domain (Offer.domain): both
	// or neither, and only on a master with Options.Region.
	Attributes   map[string]string
	Region, Zone string
	// Env is the agent's environment, "NAME=value" each: what its
	// executors and command tasks start with (a Mesos agent passes its
	// own environment, or its --executor_environment_variables), before
	// what Mesos adds and the CommandInfo's environment. Never the test
	// process's. Default DefaultAgentEnv.
	Env []string
}

// DefaultAgentEnv is the environment of an agent whose AgentSpec.Env is
// empty, what an agent host started by its init system has: a system
// PATH, and HOME and TMPDIR (the machine's temporary directory).
func DefaultAgentEnv() []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root",
		"TMPDIR=" + os.TempDir(),
	}
}

// AgentDisk is a PATH or MOUNT disk of an agent: Mesos offers it as one
// disk resource of SizeMB whose DiskInfo.Source has the type and root.
// A PATH disk may be reserved and made into volumes in parts; a MOUNT
// disk only whole.
type AgentDisk struct {
	Type   mesos.Resource_DiskInfo_Source_Type // PATH or MOUNT
	Root   string
	SizeMB float64
}

func (d AgentDisk) resource() mesos.Resource {
	t := mesos.SCALAR
	root := d.Root
	src := &mesos.Resource_DiskInfo_Source{Type: d.Type}
	if d.Type == mesos.Resource_DiskInfo_Source_MOUNT {
		src.Mount = &mesos.Resource_DiskInfo_Source_Mount{Root: &root}
	} else {
		src.Path = &mesos.Resource_DiskInfo_Source_Path{Root: &root}
	}
	return mesos.Resource{Name: "disk", Type: &t, Scalar: &mesos.Value_Scalar{Value: d.SizeMB}, Disk: &mesos.Resource_DiskInfo{Source: src}}
}

func (s AgentSpec) resources() mesos.Resources {
	var rs mesos.Resources
	scalar := func(name string, v float64) {
		if v > 0 {
			t := mesos.SCALAR
			rs.Add1(mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}})
		}
	}
	scalar("cpus", s.CPUs)
	scalar("mem", s.MemMB)
	scalar("disk", s.DiskMB)
	if len(s.Ports) > 0 {
		t := mesos.RANGES
		rs.Add1(mesos.Resource{Name: "ports", Type: &t, Ranges: &mesos.Value_Ranges{Range: append([]mesos.Value_Range(nil), s.Ports...)}})
	}
	for _, d := range s.Disks {
		rs.Add1(d.resource())
	}
	rs.Add(s.Extra...)
	return rs
}

type agent struct {
	id, hostname string
	total        mesos.Resources // everything, reserved and volumes included
	used         mesos.Resources // held by launched tasks and live executors
	disks        []AgentDisk     // the PATH and MOUNT disks (AgentSpec.Disks)
	env          []string        // the agent's environment (AgentSpec.Env)
	up           bool
	gone         bool             // marked gone by the operator: never back
	srv          *httptest.Server // the agent's /api/v1/executor endpoint
	executors    map[string]*executorRun
	runs         int
	place        agentPlace // attributes and fault domain
}

func (a *agent) releaseTask(t *task) {
	if !t.released {
		a.used.Subtract(t.resources...)
		t.released = true
	}
}

func (a *agent) executorsSorted() []*executorRun {
	out := make([]*executorRun, 0, len(a.executors))
	for _, er := range a.executors {
		out = append(out, er)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

type task struct {
	info          mesos.TaskInfo
	fwID          string
	role          string // the role its resources are allocated to
	agentID       string
	executor      *executorRun
	state         mesos.TaskState
	status        mesos.TaskStatus // latest
	resources     mesos.Resources
	pending       []mesos.TaskStatus // agent-side, unacknowledged; the head is in flight
	sentAt        time.Time
	released      bool
	killRequested bool
	seen          map[string]bool // uuids of the executor's updates taken
}

func (t *task) newStatus(state mesos.TaskState, source mesos.TaskStatus_Source, reason *mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	st := mesos.TaskStatus{
		TaskID:     t.info.TaskID,
		State:      &state,
		Source:     &source,
		Reason:     reason,
		AgentID:    &mesos.AgentID{Value: t.agentID},
		ExecutorID: &mesos.ExecutorID{Value: t.executor.id},
		UUID:       newUUID(),
	}
	if msg != "" {
		st.Message = &msg
	}
	return st
}

// executorRun is one run of an executor process on an agent.
type executorRun struct {
	m        *Master
	agent    *agent
	id       string
	fwID     string
	info     mesos.ExecutorInfo
	command  bool // the agent plays Mesos' command executor for a plain CommandInfo task
	cmd      *exec.Cmd
	sandbox  string
	stream   *stream
	queued   []mesos.TaskInfo
	tasks    []*task
	res      mesos.Resources
	exitedCh chan struct{}

	exited            bool
	agentDown         bool
	shutdownRequested bool
	graceTimer        *time.Timer
}

// terminate signals the process group: SIGKILL when hard, else SIGTERM.
func (er *executorRun) terminate(hard bool) {
	if er.cmd == nil || er.cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-er.cmd.Process.Pid, sig)
}

// AddAgent adds an agent that is up at once; its resources are offered
// by the next allocation pass (run before AddAgent returns).
func (m *Master) AddAgent(spec AgentSpec) error {
	if spec.ID == "" {
		return errors.New("mesostest: AgentSpec.ID is empty")
	}
	if spec.Hostname == "" {
		spec.Hostname = "host-" + spec.ID
	}
	for _, d := range spec.Disks {
		if (d.Type != mesos.Resource_DiskInfo_Source_PATH && d.Type != mesos.Resource_DiskInfo_Source_MOUNT) || d.Root == "" || d.SizeMB <= 0 {
			return fmt.Errorf("mesostest: agent %s: disk %+v: want a PATH or MOUNT disk with a root and a size", spec.ID, d)
		}
	}
	place, err := m.placeOf(spec)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.agents[spec.ID] != nil {
		return fmt.Errorf("%w: %s", ErrAgentExists, spec.ID)
	}
	if len(spec.Env) == 0 {
		spec.Env = DefaultAgentEnv()
	}
	a := &agent{id: spec.ID, hostname: spec.Hostname, total: spec.resources(), disks: spec.Disks, env: append([]string(nil), spec.Env...), up: true, executors: map[string]*executorRun{}, place: place}
	a.srv = httptest.NewServer(m.executorHandler(a))
	m.mu.agents[a.id] = a
	m.mu.order = append(m.mu.order, a.id)
	m.allocateLocked()
	m.changedLocked()
	return nil
}

// KillAgent simulates losing an agent: its executors' processes are
// killed (KillAgent returns once they are gone), its offers rescinded,
// each of its live tasks reported TASK_LOST (TASK_UNREACHABLE for a
// PARTITION_AWARE framework) by the master, and the scheduler gets a
// FAILURE event naming the agent. Reservations and volumes stay with
// the agent for RestartAgent.
func (m *Master) KillAgent(id string) error {
	m.mu.Lock()
	a := m.mu.agents[id]
	if a == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoAgent, id)
	}
	procs := m.agentDownLocked(a)
	for _, t := range m.tasksSortedLocked() {
		if t.agentID != id {
			continue
		}
		t.released = true
		t.pending = nil
		if isTerminal(t.state) {
			m.forgetTaskLocked(t)
			continue
		}
		state, reason := mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED
		if m.partitionAwareLocked(t.fwID) {
			state, reason = mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED
		}
		st := t.newStatus(state, mesos.SOURCE_MASTER, &reason, "Agent "+id+" lost")
		st.UUID = nil // master-generated updates need no acknowledgement
		t.state, t.status = state, st
		m.sendToLocked(t.fwID, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
	m.agentFailureLocked(id)
	m.changedLocked()
	m.mu.Unlock()
	waitExited(procs)
	return nil
}

// agentDownLocked takes agent a down: its offers are rescinded and its
// executors cut off; the caller kills their processes (waitExited)
// once the lock is released.
func (m *Master) agentDownLocked(a *agent) []*executorRun {
	a.up = false
	for oid, o := range m.mu.offers {
		if o.agentID == a.id {
			m.rescindLocked(oid, true)
		}
	}
	var procs []*executorRun
	for _, er := range a.executorsSorted() {
		er.agentDown = true
		if er.stream != nil {
			er.stream.close()
			er.stream = nil
		}
		procs = append(procs, er)
	}
	a.executors = map[string]*executorRun{}
	a.used = nil
	return procs
}

// waitExited kills the executors' processes and waits for them.
func waitExited(procs []*executorRun) {
	for _, er := range procs {
		er.terminate(true)
	}
	for _, er := range procs {
		<-er.exitedCh
	}
}

// DecommissionAgent marks an agent gone, as the operator API's
// MARK_AGENT_GONE does (what `dcos node decommission` calls): the agent
// never comes back, its reservations and volumes are lost, and each task
// on it (running, or unreachable after KillAgent) ends
// TASK_GONE_BY_OPERATOR with REASON_AGENT_REMOVED_BY_OPERATOR (TASK_LOST
// with REASON_AGENT_REMOVED for a framework that is not
// PARTITION_AWARE), sent by the master. An agent that was up is also
// reported in a FAILURE event. Reconciling one of its tasks afterwards
// answers TASK_GONE_BY_OPERATOR.
func (m *Master) DecommissionAgent(id string) error {
	m.mu.Lock()
	a := m.mu.agents[id]
	if a == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoAgent, id)
	}
	if a.gone {
		m.mu.Unlock()
		return nil
	}
	wasUp := a.up
	var procs []*executorRun
	if wasUp {
		procs = m.agentDownLocked(a)
	}
	a.gone = true
	a.total = nil // reservations and volumes went with the agent
	for _, t := range m.tasksSortedLocked() {
		if t.agentID != id {
			continue
		}
		t.released = true
		t.pending = nil
		if !isTerminal(t.state) {
			state, reason := mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR
			if !m.partitionAwareLocked(t.fwID) {
				state, reason = mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED
			}
			st := t.newStatus(state, mesos.SOURCE_MASTER, &reason, "Agent "+id+" marked gone by the operator")
			st.UUID = nil
			t.state, t.status = state, st
			m.sendToLocked(t.fwID, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
		}
		m.forgetTaskLocked(t)
	}
	if wasUp {
		m.agentFailureLocked(id)
	}
	m.changedLocked()
	m.mu.Unlock()
	waitExited(procs)
	return nil
}

// RestartAgent brings a killed agent back with the same id, its
// reservations and persistent volumes (and their contents) intact and
// no tasks: the tasks it ran are forgotten, so reconciling them answers
// TASK_GONE (TASK_LOST when not partition-aware), as Mesos answers for a
// task its registered agent does not know. An agent marked gone
// (DecommissionAgent) cannot restart: ErrAgentGone.
func (m *Master) RestartAgent(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.mu.agents[id]
	if a == nil {
		return fmt.Errorf("%w: %s", ErrNoAgent, id)
	}
	if a.gone {
		return fmt.Errorf("%w: %s was marked gone", ErrAgentGone, id)
	}
	if a.up {
		return nil
	}
	for _, t := range m.tasksSortedLocked() {
		if t.agentID == id {
			m.forgetTaskLocked(t)
		}
	}
	a.up = true
	m.allocateLocked()
	m.changedLocked()
	return nil
}

// partitionAwareLocked reports whether framework fwID has the
// PARTITION_AWARE capability.
func (m *Master) partitionAwareLocked(fwID string) bool {
	fw := m.mu.fws[fwID]
	return fw != nil && fw.partitionAware
}

// agentFailureLocked tells every subscribed framework that an agent was
// lost, as Mesos' master does when it removes one.
func (m *Master) agentFailureLocked(agentID string) {
	for _, fwID := range m.mu.fwOrder {
		m.sendToLocked(fwID, &scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: agentID}}})
	}
}

func (m *Master) freeLocked(a *agent) mesos.Resources {
	free := a.total.Clone()
	free.Subtract(a.used...)
	for _, o := range m.mu.offers {
		if o.agentID == a.id {
			free.Subtract(o.resources...)
		}
	}
	return free
}

func containsAll(have, want mesos.Resources) bool { return resources.ContainsAll(have, want) }

// ---- ACCEPT and its operations ----

func (m *Master) acceptLocked(fw *framework, offerIDs []mesos.OfferID, ops []mesos.Offer_Operation, filters *mesos.Filters) {
	var (
		agentID string
		pool    mesos.Resources
		valid   = len(offerIDs) > 0
	)
	for _, oid := range offerIDs {
		o := m.mu.offers[oid.Value]
		if o == nil || o.fwID != fw.id || (agentID != "" && o.agentID != agentID) {
			valid = false
			continue
		}
		agentID = o.agentID
		pool.Add(o.resources...)
		delete(m.mu.offers, oid.Value)
	}
	if !valid {
		state := mesos.TASK_LOST
		if fw.partitionAware {
			state = mesos.TASK_DROPPED
		}
		for _, op := range ops {
			if op.Type == mesos.Offer_Operation_LAUNCH && op.Launch != nil {
				for _, ti := range op.Launch.TaskInfos {
					m.masterStatusLocked(fw, ti.TaskID, state, mesos.REASON_INVALID_OFFERS, "Task launched with invalid offers")
				}
			}
		}
		m.mu.opErrors = append(m.mu.opErrors, "accept: invalid or stale offers")
		return
	}
	a := m.mu.agents[agentID]
	for i := range ops {
		if err := m.applyLocked(fw, a, &pool, &ops[i]); err != nil {
			m.mu.opErrors = append(m.mu.opErrors, fmt.Sprintf("%v: %v", ops[i].Type, err))
		}
	}
	m.addFilterLocked(fw, agentID, pool, filters)
}

func (m *Master) masterStatusLocked(fw *framework, id mesos.TaskID, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	source := mesos.SOURCE_MASTER
	m.sendToLocked(fw.id, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
		TaskID: id, State: &state, Source: &source, Reason: &reason, Message: &msg,
	}}})
}

var (
	errInsufficient = errors.New("resources not in the offer")
	// errPrincipal: a RESERVE or CREATE whose principal is missing or
	// is not the framework's (the fake master records it in OpErrors).
	errPrincipal = errors.New("mesostest: principal mismatch")
	// errDisk: a RESERVE or CREATE of disk that does not match the
	// agent's PATH and MOUNT disks.
	errDisk = errors.New("mesostest: no such disk")
)

func (m *Master) applyLocked(fw *framework, a *agent, pool *mesos.Resources, op *mesos.Offer_Operation) error {
	swap := func(from, to mesos.Resources) error {
		if !containsAll(*pool, from) {
			return fmt.Errorf("%w: %v", errInsufficient, from)
		}
		pool.Subtract(from...)
		pool.Add(to...)
		a.total.Subtract(from...)
		a.total.Add(to...)
		return nil
	}
	switch op.Type {
	case mesos.Offer_Operation_RESERVE:
		if op.Reserve == nil {
			return errors.New("missing reserve")
		}
		res := mesos.Resources(op.Reserve.Resources)
		for i := range res {
			if !res[i].IsDynamicallyReserved() {
				return fmt.Errorf("resource %v is not dynamically reserved", res[i])
			}
		}
		if err := m.checkReserveRoles(fw, res); err != nil {
			return err
		}
		if err := checkReservePrincipal(fw, res); err != nil {
			return err
		}
		if err := a.checkDisks(res); err != nil {
			return err
		}
		src := mesos.Resources(op.Reserve.Source)
		if len(src) == 0 {
			src = res.ToUnreserved()
		}
		return swap(src, res)
	case mesos.Offer_Operation_UNRESERVE:
		if op.Unreserve == nil {
			return errors.New("missing unreserve")
		}
		res := mesos.Resources(op.Unreserve.Resources)
		for i := range res {
			if res[i].IsPersistentVolume() {
				return errors.New("cannot unreserve a persistent volume; DESTROY it first")
			}
		}
		return swap(res, res.ToUnreserved())
	case mesos.Offer_Operation_CREATE:
		if op.Create == nil {
			return errors.New("missing create")
		}
		vols := mesos.Resources(op.Create.Volumes)
		if err := checkVolumes(vols); err != nil {
			return err
		}
		if err := checkCreatePrincipal(fw, vols); err != nil {
			return err
		}
		if err := a.checkDisks(vols); err != nil {
			return err
		}
		var src mesos.Resources
		for _, v := range vols {
			p := v.GetDisk().GetPersistence()
			if p == nil || p.ID == "" || v.GetDisk().GetVolume() == nil {
				return errors.New("a volume needs disk.persistence.id and disk.volume")
			}
			if a.hasVolume(reservationRole(v), p.ID) {
				return fmt.Errorf("persistence id %q already in use on agent %s for role %q", p.ID, a.id, reservationRole(v))
			}
			src.Add1(withoutVolume(v))
		}
		if err := swap(src, vols); err != nil {
			return err
		}
		for _, v := range vols {
			if err := os.MkdirAll(m.volumeDir(a.id, v), 0o755); err != nil {
				return err
			}
		}
		return nil
	case mesos.Offer_Operation_DESTROY:
		if op.Destroy == nil {
			return errors.New("missing destroy")
		}
		vols := mesos.Resources(op.Destroy.Volumes)
		var dst mesos.Resources
		for _, v := range vols {
			dst.Add1(withoutVolume(v))
		}
		if err := swap(vols, dst); err != nil {
			return err
		}
		for _, v := range vols {
			os.RemoveAll(m.volumeDir(a.id, v))
		}
		return nil
	case mesos.Offer_Operation_LAUNCH:
		if op.Launch == nil {
			return errors.New("missing launch")
		}
		var errs []error
		for _, ti := range op.Launch.TaskInfos {
			if err := m.launchLocked(fw, a, pool, ti); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case mesos.Offer_Operation_LAUNCH_GROUP:
		if op.LaunchGroup != nil {
			for _, ti := range op.LaunchGroup.TaskGroup.Tasks {
				m.masterStatusLocked(fw, ti.TaskID, mesos.TASK_ERROR, mesos.REASON_TASK_GROUP_INVALID, "mesostest does not run LAUNCH_GROUP")
			}
		}
		return errors.New("LAUNCH_GROUP is not simulated")
	default:
		return fmt.Errorf("operation %v is not simulated", op.Type)
	}
}

// principal is the framework's principal, which the fake master takes
// as authenticated (a real master makes sure that the two agree when the
// framework subscribes); "" when the framework gave none.
func (fw *framework) principal() string { return fw.info.GetPrincipal() }

// checkReservePrincipal refuses a RESERVE by a framework with a
// principal unless every resource's own (last) reservation carries that
// principal, as Mesos' master validation does. Without a principal
// anything goes.
func checkReservePrincipal(fw *framework, res mesos.Resources) error {
	want := fw.principal()
	if want == "" {
		return nil
	}
	for _, r := range res {
		var ri *mesos.Resource_ReservationInfo
		if n := len(r.Reservations); n > 0 {
			ri = &r.Reservations[n-1]
		} else {
			ri = r.Reservation
		}
		switch {
		case ri == nil || ri.Principal == nil:
			return fmt.Errorf("%w: RESERVE by principal %q of a resource whose reservation has no principal", errPrincipal, want)
		case *ri.Principal != want:
			return fmt.Errorf("%w: RESERVE by principal %q of a resource reserved with principal %q", errPrincipal, want, *ri.Principal)
		}
	}
	return nil
}

// checkCreatePrincipal refuses a CREATE by a framework with a principal
// unless every volume's disk.persistence carries that principal, as
// Mesos' master validation does.
func checkCreatePrincipal(fw *framework, vols mesos.Resources) error {
	want := fw.principal()
	if want == "" {
		return nil
	}
	for _, v := range vols {
		p := v.GetDisk().GetPersistence()
		switch {
		case p == nil || p.Principal == nil:
			return fmt.Errorf("%w: CREATE by principal %q of a volume with no principal in disk.persistence", errPrincipal, want)
		case *p.Principal != want:
			return fmt.Errorf("%w: CREATE by principal %q of a volume with principal %q in disk.persistence", errPrincipal, want, *p.Principal)
		}
	}
	return nil
}

// checkDisks refuses disk resources that do not match a disk of the
// agent: a Source the agent has no disk at, or a part of a MOUNT disk
// (a real master's resource arithmetic never splits one). A disk
// without Source is root disk, for which the offer check suffices.
func (a *agent) checkDisks(rs mesos.Resources) error {
	for _, r := range rs {
		src := r.GetDisk().GetSource()
		if r.Name != "disk" || src == nil {
			continue
		}
		root := src.GetPath().GetRoot()
		if src.Type == mesos.Resource_DiskInfo_Source_MOUNT {
			root = src.GetMount().GetRoot()
		}
		var disk *AgentDisk
		for i := range a.disks {
			if a.disks[i].Type == src.Type && a.disks[i].Root == root {
				disk = &a.disks[i]
			}
		}
		switch {
		case disk == nil:
			return fmt.Errorf("%w: agent %s has no %v disk at %q", errDisk, a.id, src.Type, root)
		case src.Type == mesos.Resource_DiskInfo_Source_MOUNT && r.GetScalar().GetValue() != disk.SizeMB:
			return fmt.Errorf("%w: %g MB of the %g MB MOUNT disk at %q: a MOUNT disk is used whole", errDisk, r.GetScalar().GetValue(), disk.SizeMB, root)
		}
	}
	return nil
}

// withoutVolume is the disk a volume is made of: the volume's resource
// without persistence and volume, but on the same disk (Source kept).
func withoutVolume(v mesos.Resource) mesos.Resource {
	src := v.GetDisk().GetSource()
	v.Disk = nil
	if src != nil {
		v.Disk = &mesos.Resource_DiskInfo{Source: src}
	}
	return v
}

func (a *agent) hasVolume(role, id string) bool {
	for _, r := range a.total {
		if p := r.GetDisk().GetPersistence(); p != nil && p.ID == id && reservationRole(r) == role {
			return true
		}
	}
	return false
}

// volumeDir is where volume v lives on the agent: like a Mesos agent's
// volumes/roles/<role>/<persistence id>, as persistence ids are unique
// per role on an agent.
func (m *Master) volumeDir(agentID string, v mesos.Resource) string {
	return filepath.Join(m.opts.Dir, "agents", agentID, "volumes", "roles", reservationRole(v), v.GetDisk().GetPersistence().GetID())
}

// reservationRole is the role r is reserved to: its last reservation's
// role (refinement format), else its role field ("*" when unreserved).
func reservationRole(r mesos.Resource) string {
	if n := len(r.Reservations); n > 0 {
		return r.Reservations[n-1].GetRole()
	}
	return r.GetRole()
}

func (m *Master) launchLocked(fw *framework, a *agent, pool *mesos.Resources, ti mesos.TaskInfo) error {
	invalid := func(msg string) error {
		m.masterStatusLocked(fw, ti.TaskID, mesos.TASK_ERROR, mesos.REASON_TASK_INVALID, msg)
		return fmt.Errorf("task %q: %s", ti.TaskID.Value, msg)
	}
	// Mesos validates task and executor ids first (src/master/validation.cpp,
	// task::internal::validateTaskID, executor::internal::validateExecutorID).
	if err := validateID("task id", ti.TaskID.Value); err != nil {
		return invalid("Task ID is invalid: " + err.Error())
	}
	if ti.Executor != nil {
		if err := validateID("executor id", ti.Executor.ExecutorID.Value); err != nil {
			return invalid("Executor ID is invalid: " + err.Error())
		}
	}
	switch {
	case m.mu.tasks[taskKey(fw.id, ti.TaskID.Value)] != nil:
		return invalid("task id is already in use")
	case ti.AgentID.Value != a.id:
		return invalid("task's agent id differs from the offer's")
	case ti.Executor == nil && ti.Command == nil:
		return invalid("task has neither an executor nor a command")
	case ti.Executor != nil && ti.Command != nil:
		return invalid("task has both an executor and a command")
	}
	if err := validateEnvironment(ti.Command.GetEnvironment()); err != nil {
		return invalid("Task's command environment is invalid: " + err.Error())
	}
	if err := validateEnvironment(ti.Executor.GetCommand().GetEnvironment()); err != nil {
		return invalid("Executor's command environment is invalid: " + err.Error())
	}
	if msg := m.checkLaunchLocked(ti, a.executors[ti.GetExecutor().GetExecutorID().Value] == nil); msg != "" {
		return invalid(msg)
	}
	execID := ti.TaskID.Value
	if ti.Executor != nil {
		execID = ti.Executor.ExecutorID.Value
	}
	need := mesos.Resources(ti.Resources).Clone()
	er := a.executors[execKey(fw.id, execID)]
	if er != nil && er.command {
		return invalid("executor id is in use by a command task")
	}
	if er == nil && ti.Executor != nil {
		need.Add(ti.Executor.Resources...)
	}
	if !containsAll(*pool, need) {
		return invalid("Task uses more resources than offered")
	}
	pool.Subtract(need...)
	if er == nil {
		var err error
		er, err = m.startExecutorLocked(fw, a, ti)
		if err != nil {
			pool.Add(need...)
			m.masterStatusLocked(fw, ti.TaskID, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, err.Error())
			return err
		}
	}
	t := &task{info: ti, fwID: fw.id, role: taskRole(fw, need), agentID: a.id, executor: er, state: mesos.TASK_STAGING, resources: mesos.Resources(ti.Resources).Clone(), seen: map[string]bool{}}
	t.status = mesos.TaskStatus{TaskID: ti.TaskID, State: &t.state, AgentID: &mesos.AgentID{Value: a.id}, ExecutorID: &mesos.ExecutorID{Value: er.id}}
	a.used.Add(t.resources...)
	m.mu.tasks[taskKey(fw.id, ti.TaskID.Value)] = t
	er.tasks = append(er.tasks, t)
	switch {
	case er.command:
		m.agentUpdateLocked(t, t.newStatus(mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, nil, ""))
	case er.stream != nil:
		er.stream.send(execEvent(execLaunch(ti)))
	default:
		er.queued = append(er.queued, ti)
	}
	return nil
}

// taskRole is the role of a task's resources: the role of the first
// reserved one, else the framework's first role.
func taskRole(fw *framework, rs mesos.Resources) string {
	for _, r := range rs {
		if role := reservationRole(r); role != "" && role != "*" {
			return role
		}
	}
	roles := fw.info.Roles
	if len(roles) == 0 {
		return fw.info.GetRole()
	}
	return roles[0]
}

// startExecutorLocked starts the process of a new executor run.
func (m *Master) startExecutorLocked(fw *framework, a *agent, ti mesos.TaskInfo) (*executorRun, error) {
	er := &executorRun{m: m, agent: a, fwID: fw.id, exitedCh: make(chan struct{})}
	if ti.Executor != nil {
		er.info = *ti.Executor
		er.res = mesos.Resources(ti.Executor.Resources).Clone()
	} else {
		er.command = true
		er.info = mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: ti.TaskID.Value}, Command: ti.Command, Name: strPtr("Command Executor (Task: " + ti.TaskID.Value + ")")}
	}
	er.info.FrameworkID = &mesos.FrameworkID{Value: fw.id}
	er.id = er.info.ExecutorID.Value
	if er.info.Command == nil || er.info.Command.GetValue() == "" {
		return nil, errors.New("executor has no command value")
	}
	a.runs++
	er.sandbox = sandboxPath(m.opts.Dir, a.id, fw.id, er.id, a.runs)
	if err := os.MkdirAll(er.sandbox, 0o755); err != nil {
		return nil, err
	}
	all := append(mesos.Resources(ti.Resources).Clone(), er.res...)
	for _, r := range all {
		if !r.IsPersistentVolume() {
			continue
		}
		cp := strings.TrimLeft(r.GetDisk().GetVolume().GetContainerPath(), "/")
		link := filepath.Join(er.sandbox, cp)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink(m.volumeDir(a.id, r), link); err != nil {
			return nil, err
		}
	}
	ci := er.info.Command
	if err := fetchURIs(er.sandbox, ci.URIs); err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	if ci.Shell == nil || *ci.Shell {
		cmd = exec.Command("/bin/sh", "-c", ci.GetValue())
	} else {
		cmd = exec.Command(ci.GetValue())
		if len(ci.Arguments) > 0 {
			cmd.Args = append([]string(nil), ci.Arguments...)
		}
	}
	cmd.Dir = er.sandbox
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	env := append([]string(nil), a.env...)
	for _, v := range ci.GetEnvironment().GetVariables() {
		value := v.GetValue()
		if v.GetType() == mesos.Environment_Variable_SECRET {
			var err error
			if value, err = m.resolveSecret(v.GetSecret()); err != nil {
				return nil, fmt.Errorf("failed to resolve secret of environment variable '%s': %w", v.Name, err)
			}
		}
		env = append(env, v.Name+"="+value)
	}
	checkpoint := "0"
	if fw.info.GetCheckpoint() {
		checkpoint = "1"
	}
	env = append(env,
		"MESOS_AGENT_ENDPOINT="+strings.TrimPrefix(a.srv.URL, "http://"),
		"MESOS_FRAMEWORK_ID="+fw.id,
		"MESOS_EXECUTOR_ID="+er.id,
		"MESOS_DIRECTORY="+er.sandbox,
		"MESOS_SANDBOX="+er.sandbox,
		"MESOS_CHECKPOINT="+checkpoint,
		"MESOS_RECOVERY_TIMEOUT=15mins",
		"MESOS_SUBSCRIPTION_BACKOFF_MAX=2secs",
		fmt.Sprintf("MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD=%dms", m.opts.ShutdownGracePeriod.Milliseconds()),
		"MESOS_SLAVE_ID="+a.id,
		"MESOS_AGENT_ID="+a.id,
		"MESOS_HTTP_COMMAND_EXECUTOR=0",
	)
	if er.command {
		env = append(env, "MESOS_TASK_ID="+ti.TaskID.Value)
	}
	tokenEnv, err := m.executorTokenEnvLocked(er)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(env, tokenEnv...)
	stdout, err := os.Create(filepath.Join(er.sandbox, "stdout"))
	if err != nil {
		return nil, err
	}
	stderr, err := os.Create(filepath.Join(er.sandbox, "stderr"))
	if err != nil {
		stdout.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		return nil, err
	}
	er.cmd = cmd
	a.executors[execKey(er.fwID, er.id)] = er
	a.used.Add(er.res...)
	go func() {
		err := cmd.Wait()
		stdout.Close()
		stderr.Close()
		m.executorExited(er, err)
	}()
	return er, nil
}

func (m *Master) executorExited(er *executorRun, waitErr error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer close(er.exitedCh)
	er.exited = true
	if er.graceTimer != nil {
		er.graceTimer.Stop()
	}
	if er.stream != nil {
		er.stream.close()
		er.stream = nil
	}
	if er.agentDown || m.mu.closed {
		return
	}
	a := er.agent
	if a.executors[execKey(er.fwID, er.id)] == er {
		delete(a.executors, execKey(er.fwID, er.id))
		a.used.Subtract(er.res...)
	}
	for _, t := range er.tasks {
		if isTerminal(t.state) {
			continue
		}
		var st mesos.TaskStatus
		switch {
		case er.command && t.killRequested:
			st = t.newStatus(mesos.TASK_KILLED, mesos.SOURCE_EXECUTOR, nil, "Command terminated on request")
		case er.command && waitErr == nil:
			st = t.newStatus(mesos.TASK_FINISHED, mesos.SOURCE_EXECUTOR, nil, "Command exited with status 0")
		case er.command:
			st = t.newStatus(mesos.TASK_FAILED, mesos.SOURCE_EXECUTOR, nil, "Command "+waitErr.Error())
		case er.shutdownRequested:
			r := mesos.REASON_EXECUTOR_TERMINATED
			st = t.newStatus(mesos.TASK_KILLED, mesos.SOURCE_AGENT, &r, "Executor shut down")
		default:
			r := mesos.REASON_EXECUTOR_TERMINATED
			msg := "Executor terminated"
			if waitErr != nil {
				msg += ": " + waitErr.Error()
			}
			st = t.newStatus(mesos.TASK_FAILED, mesos.SOURCE_AGENT, &r, msg)
		}
		m.agentUpdateLocked(t, st)
	}
	m.allocateLocked()
	m.changedLocked()
}

// agentUpdateLocked is the agent's status update manager: it records
// st, frees a terminal task's resources and forwards updates to the
// scheduler one at a time per task, the next only once the previous
// one is acknowledged.
func (m *Master) agentUpdateLocked(t *task, st mesos.TaskStatus) {
	now := m.opts.Now()
	if st.Timestamp == nil {
		ts := float64(now.UnixNano()) / 1e9
		st.Timestamp = &ts
	}
	t.state = st.GetState()
	t.status = st
	if isTerminal(t.state) {
		m.mu.agents[t.agentID].releaseTask(t)
		m.maybeStopIdleExecutorLocked(t.executor)
	}
	t.pending = append(t.pending, st)
	if len(t.pending) == 1 {
		m.forwardHeadLocked(t)
	}
	if isTerminal(t.state) {
		m.allocateLocked()
	}
	m.changedLocked()
}

func (m *Master) forwardHeadLocked(t *task) {
	t.sentAt = m.opts.Now()
	m.sendToLocked(t.fwID, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: t.pending[0]}})
}

// retryUpdatesLocked resends the head of each task's unacknowledged
// updates whose retry time has come (all of them when force), for fw's
// tasks or, when fw is nil, every subscribed framework's.
func (m *Master) retryUpdatesLocked(fw *framework, force bool) {
	now := m.opts.Now()
	for _, t := range m.tasksSortedLocked() {
		if fw != nil && t.fwID != fw.id {
			continue
		}
		if owner := m.mu.fws[t.fwID]; owner == nil || owner.stream == nil {
			continue
		}
		if len(t.pending) > 0 && (force || now.Sub(t.sentAt) >= m.opts.StatusRetryInterval) {
			m.forwardHeadLocked(t)
		}
	}
}

// maybeStopIdleExecutorLocked ends a custom executor whose every task
// is terminal and that never subscribed (it has nothing to be told).
func (m *Master) maybeStopIdleExecutorLocked(er *executorRun) {
	if er.command || er.stream != nil || er.exited {
		return
	}
	for _, t := range er.tasks {
		if !isTerminal(t.state) {
			return
		}
	}
	m.shutdownExecutorLocked(er)
}

// shutdownExecutorLocked sends SHUTDOWN and kills the process after the
// grace period (at once when it has no stream).
func (m *Master) shutdownExecutorLocked(er *executorRun) {
	if er.exited || er.shutdownRequested {
		return
	}
	er.shutdownRequested = true
	if er.stream == nil || er.command {
		er.terminate(!er.command)
		if er.command {
			er.graceTimer = time.AfterFunc(m.opts.ShutdownGracePeriod, func() { er.terminate(true) })
		}
		return
	}
	er.stream.send(execEvent(&executor.Event{Type: executor.Event_SHUTDOWN}))
	er.graceTimer = time.AfterFunc(m.opts.ShutdownGracePeriod, func() { er.terminate(true) })
}

// DisconnectExecutors closes the event streams of an agent's executors
// as an agent restart does (with checkpointing): their processes and
// tasks stay, and each executor may SUBSCRIBE again.
func (m *Master) DisconnectExecutors(agentID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.mu.agents[agentID]
	if a == nil {
		return fmt.Errorf("%w: %s", ErrNoAgent, agentID)
	}
	for _, er := range a.executorsSorted() {
		if er.stream != nil {
			er.stream.close()
			er.stream = nil
		}
	}
	m.changedLocked()
	return nil
}

// FailTask kills the process that runs a task (its executor, or the
// command of a command task) with SIGKILL, as a crash would, and
// returns once it is gone. The agent then reports the task TASK_FAILED.
// A task id that several frameworks use is ErrNoTask (see FailTaskOf).
func (m *Master) FailTask(taskID string) error {
	m.mu.Lock()
	t, err := m.findTaskLocked(taskID)
	return m.failAndUnlock(t, taskID, err)
}

// FailTaskOf is FailTask for framework frameworkID's task.
func (m *Master) FailTaskOf(frameworkID, taskID string) error {
	m.mu.Lock()
	var err error
	t := m.mu.tasks[taskKey(frameworkID, taskID)]
	if t == nil {
		err = fmt.Errorf("%w: %s of framework %s", ErrNoTask, taskID, frameworkID)
	}
	return m.failAndUnlock(t, taskID, err)
}

// failAndUnlock, called with the lock held, releases it and kills t's
// process unless err is set.
func (m *Master) failAndUnlock(t *task, taskID string, err error) error {
	if err == nil && t.executor.exited {
		err = fmt.Errorf("%w: %s", ErrNoTask, taskID)
	}
	if err != nil {
		m.mu.Unlock()
		return err
	}
	er := t.executor
	m.mu.Unlock()
	er.terminate(true)
	<-er.exitedCh
	return nil
}

// validateEnvironment is the master's check of a CommandInfo's
// environment (Mesos' common/validation.cpp validateEnvironment): a
// SECRET variable has a valid secret and no value, a VALUE variable a
// value and no secret.
func validateEnvironment(env *mesos.Environment) error {
	for _, v := range env.GetVariables() {
		switch v.GetType() {
		case mesos.Environment_Variable_SECRET:
			switch sec := v.GetSecret(); {
			case sec == nil:
				return fmt.Errorf("environment variable '%s' of type 'SECRET' must have a secret set", v.Name)
			case v.Value != nil:
				return fmt.Errorf("environment variable '%s' of type 'SECRET' must not have a value set", v.Name)
			case sec.GetType() == mesos.Secret_REFERENCE && (sec.Reference == nil || sec.Value != nil):
				return fmt.Errorf("environment variable '%s' specifies an invalid secret: a REFERENCE must have 'reference' and no 'value'", v.Name)
			case sec.GetType() == mesos.Secret_VALUE && (sec.Value == nil || sec.Reference != nil):
				return fmt.Errorf("environment variable '%s' specifies an invalid secret: a VALUE must have 'value' and no 'reference'", v.Name)
			case sec.GetType() != mesos.Secret_REFERENCE && sec.GetType() != mesos.Secret_VALUE:
				return fmt.Errorf("environment variable '%s' specifies an invalid secret: secret of unknown type", v.Name)
			}
		case mesos.Environment_Variable_VALUE:
			if v.Value == nil {
				return fmt.Errorf("environment variable '%s' of type 'VALUE' must have a value set", v.Name)
			}
			if v.Secret != nil {
				return fmt.Errorf("environment variable '%s' of type 'VALUE' must not have a secret set", v.Name)
			}
		default:
			return fmt.Errorf("environment variable '%s' of type 'UNKNOWN' is not allowed", v.Name)
		}
	}
	return nil
}

// resolveSecret is the agents' secret resolver: a VALUE secret is its
// data (Mesos' default resolver), a REFERENCE is looked up in
// Options.Secrets. Its error names the reference, never a value.
func (m *Master) resolveSecret(sec *mesos.Secret) (string, error) {
	if sec.GetType() == mesos.Secret_VALUE {
		return string(sec.GetValue().GetData()), nil
	}
	ref := sec.GetReference()
	name := ref.GetName()
	if ref.GetKey() != "" {
		name += "#" + ref.GetKey()
	}
	v, ok := m.opts.Secrets[name]
	if !ok {
		return "", fmt.Errorf("secret reference '%s' is not in the secret store", name)
	}
	return v, nil
}
