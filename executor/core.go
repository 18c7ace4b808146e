package executor

import (
	"fmt"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
)

// Role is the sluice role an executor runs: RoleNode, RoleController or
// one of the heads (RoleHDFSHead, RoleNFSHead, RoleS3Head).
type Role string

// The roles an executor runs.
const (
	RoleNode       Role = "node"
	RoleController Role = "controller"
	// RoleHDFSHead is `sluice hdfs-gateway`, the read-only HDFS head.
	RoleHDFSHead Role = "hdfs-gateway"
	// RoleNFSHead is `sluice nfs-export`, the read-only NFSv3 head.
	RoleNFSHead Role = "nfs-export"
	// RoleS3Head is `sluice s3-gateway`, the read-only S3 head.
	RoleS3Head Role = "s3-gateway"
)

// Roles are the roles an executor runs, as --role names them.
var Roles = []Role{RoleNode, RoleController, RoleHDFSHead, RoleNFSHead, RoleS3Head}

// Valid reports whether r is a role an executor runs.
func (r Role) Valid() bool {
	for _, v := range Roles {
		if r == v {
			return true
		}
	}
	return false
}

// IsHead reports whether r is a head: healthy when its port accepts a
// TCP connection.
func (r Role) IsHead() bool { return r == RoleHDFSHead || r == RoleNFSHead || r == RoleS3Head }

// ListenPrefix is the start of the stdout line by which the role tells
// the address it serves ("node listening on 127.0.0.1:12345"; an HDFS
// head's NameNode RPC address: "hdfs head (rpc) listening on ...";
// "nfs head listening on ...", "s3 head listening on ...").
func (r Role) ListenPrefix() string {
	switch r {
	case RoleHDFSHead:
		return "hdfs head (rpc) listening on "
	case RoleNFSHead:
		return "nfs head listening on "
	case RoleS3Head:
		return "s3 head listening on "
	}
	return string(r) + " listening on "
}

// Input is what the core is told: an event from the agent, or something
// the driver saw (the child, a health probe, a timer). The concrete types
// below are the only ones.
type Input interface{ input() }

// Inputs from the agent.
type (
	// Launched is a LAUNCH event.
	Launched struct{ Task mesos.TaskInfo }
	// KillRequested is a KILL event; Grace is the kill policy's grace
	// period (0: the task's, else the default).
	KillRequested struct {
		TaskID string
		Grace  time.Duration
	}
	// ShutdownRequested is a SHUTDOWN event.
	ShutdownRequested struct{}
	// Acknowledged is an ACKNOWLEDGED event.
	Acknowledged struct {
		TaskID string
		UUID   []byte
	}
	// Disconnected: the event stream ended and cannot come back (the
	// framework does not checkpoint, or recovery timed out). The task is
	// stopped as by SHUTDOWN.
	Disconnected struct{ Reason string }
)

// Inputs from the driver.
type (
	// ChildStarted: the role's process runs.
	ChildStarted struct{}
	// ChildStartFailed: the role's process could not be started.
	ChildStartFailed struct{ Err string }
	// ChildListening: the address to probe (from the role's stdout line
	// or --health-addr).
	ChildListening struct{ Addr string }
	// HealthChecked is one probe's result; Err is "" when healthy.
	HealthChecked struct{ Err string }
	// ChildExited: the role's process ended.
	ChildExited struct{ Exit ExitStatus }
	// TimerFired: a timer started by StartTimer went off.
	TimerFired struct{ Timer Timer }
)

func (Launched) input()          {}
func (KillRequested) input()     {}
func (ShutdownRequested) input() {}
func (Acknowledged) input()      {}
func (Disconnected) input()      {}
func (ChildStarted) input()      {}
func (ChildStartFailed) input()  {}
func (ChildListening) input()    {}
func (HealthChecked) input()     {}
func (ChildExited) input()       {}
func (TimerFired) input()        {}

// ExitStatus is how the child ended: Signal is non-zero when a signal
// killed it, else Code is its exit status.
type ExitStatus struct {
	Code   int
	Signal syscall.Signal
}

func (e ExitStatus) String() string {
	if e.Signal != 0 {
		return "was killed by signal " + e.Signal.String()
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// Action is what the core asks the driver to do, in order.
type Action interface{ action() }

// Actions for the driver.
type (
	// StartChild starts the role's process.
	StartChild struct{}
	// SendUpdate sends a status update (the core keeps it until acknowledged).
	SendUpdate struct{ Status mesos.TaskStatus }
	// SignalChild sends Signal to the role's process.
	SignalChild struct{ Signal syscall.Signal }
	// StartTimer arms Timer to fire After from now (replacing an armed one).
	StartTimer struct {
		Timer Timer
		After time.Duration
	}
	// WatchHealth starts probing Addr every interval (HealthChecked).
	WatchHealth struct{ Addr string }
	// StopHealth stops probing.
	StopHealth struct{}
	// Exit ends the executor: its task is terminal and acknowledged, or
	// it was told to shut down.
	Exit struct{}
)

func (StartChild) action()  {}
func (SendUpdate) action()  {}
func (SignalChild) action() {}
func (StartTimer) action()  {}
func (WatchHealth) action() {}
func (StopHealth) action()  {}
func (Exit) action()        {}

// Timer names the core's timers.
type Timer int

// The core's timers.
const (
	// TimerGrace: the kill grace period is over; SIGKILL the child.
	TimerGrace Timer = iota + 1
	// TimerStartup: the role had this long to become healthy.
	TimerStartup
)

// Phase is where the one task is.
type Phase int

// The phases of the task, in order.
const (
	PhaseIdle     Phase = iota // no task yet
	PhaseStarting              // child started, TASK_STARTING sent, not yet healthy
	PhaseRunning               // TASK_RUNNING sent
	PhaseStopping              // SIGTERM sent; waiting for the child to exit
	PhaseDone                  // terminal update sent
)

var phaseNames = [...]string{"idle", "starting", "running", "stopping", "done"}

func (p Phase) String() string { return phaseNames[p] }

// CoreConfig tunes a Core.
type CoreConfig struct {
	Role Role
	// MaxHealthFailures is how many probes in a row may fail while
	// running before the task is failed (default 3).
	MaxHealthFailures int
	// StartupTimeout is how long the role has to become healthy after it
	// starts (default 10 minutes: a node may replay a long log).
	StartupTimeout time.Duration
	// KillGrace is the grace period of a KILL without a kill policy
	// (default 30 s).
	KillGrace time.Duration
	// ShutdownGrace bounds the grace period after SHUTDOWN (the agent's
	// MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD); 0: KillGrace.
	ShutdownGrace time.Duration
	// NewUUID returns a fresh 16-byte update id.
	NewUUID func() []byte
}

// Core is the executor's deterministic state machine: Step takes one
// input and returns the actions to take, in order. It runs one task.
// It is not safe for concurrent use; the driver owns it.
type Core struct {
	cfg      CoreConfig
	phase    Phase
	task     *mesos.TaskInfo
	acked    bool   // some update of the task was acknowledged
	failures int    // health probes failed in a row while running
	lastErr  string // the last probe's error
	failWhy  string // why the task is being stopped as failed ("" for a kill)
	failRsn  mesos.TaskStatus_Reason
	shutdown bool
	unacked  []executor.Call_Update // in the order sent
}

// NewCore returns a Core in PhaseIdle.
func NewCore(cfg CoreConfig) *Core {
	if cfg.MaxHealthFailures <= 0 {
		cfg.MaxHealthFailures = 3
	}
	if cfg.StartupTimeout <= 0 {
		cfg.StartupTimeout = 10 * time.Minute
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 30 * time.Second
	}
	return &Core{cfg: cfg}
}

// Phase is the task's phase.
func (c *Core) Phase() Phase { return c.phase }

// Unacknowledged returns what a re-SUBSCRIBE must carry: the task when
// none of its updates was acknowledged, and every update not yet
// acknowledged, oldest first. The slices are copies.
func (c *Core) Unacknowledged() ([]mesos.TaskInfo, []executor.Call_Update) {
	var tasks []mesos.TaskInfo
	if c.task != nil && !c.acked {
		tasks = []mesos.TaskInfo{*c.task}
	}
	return tasks, append([]executor.Call_Update(nil), c.unacked...)
}

// Step applies one input.
func (c *Core) Step(in Input) []Action {
	switch in := in.(type) {
	case Launched:
		return c.launch(in.Task)
	case ChildStarted:
		if c.phase != PhaseStarting {
			return nil
		}
		return []Action{StartTimer{TimerStartup, c.cfg.StartupTimeout}}
	case ChildStartFailed:
		if c.phase != PhaseStarting {
			return nil
		}
		return c.finish(mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, "could not start "+string(c.cfg.Role)+": "+in.Err)
	case ChildListening:
		if c.phase != PhaseStarting && c.phase != PhaseRunning {
			return nil
		}
		return []Action{WatchHealth(in)}
	case HealthChecked:
		return c.health(in.Err)
	case TimerFired:
		switch {
		case in.Timer == TimerGrace && c.phase == PhaseStopping:
			return []Action{SignalChild{syscall.SIGKILL}}
		case in.Timer == TimerStartup && c.phase == PhaseStarting:
			why := fmt.Sprintf("%s did not become healthy within %v", c.cfg.Role, c.cfg.StartupTimeout)
			if c.lastErr != "" {
				why += ": " + c.lastErr
			}
			return c.stop(why, mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED, c.cfg.KillGrace)
		}
		return nil
	case ChildExited:
		return c.exited(in.Exit)
	case KillRequested:
		if c.task == nil || in.TaskID != c.task.TaskID.Value {
			return nil
		}
		return c.kill(c.grace(in.Grace))
	case ShutdownRequested:
		c.shutdown = true
		g := c.grace(0)
		if c.cfg.ShutdownGrace > 0 && c.cfg.ShutdownGrace < g {
			g = c.cfg.ShutdownGrace
		}
		return c.kill(g)
	case Disconnected:
		c.shutdown = true
		if c.phase == PhaseStarting || c.phase == PhaseRunning {
			return c.stop("executor lost its agent: "+in.Reason, mesos.REASON_EXECUTOR_TERMINATED, c.grace(0))
		}
		return c.kill(c.grace(0))
	case Acknowledged:
		return c.ack(in.UUID)
	}
	return nil
}

func (c *Core) launch(ti mesos.TaskInfo) []Action {
	if c.task != nil || c.shutdown {
		// One executor runs one task; the scheduler gives each its own.
		st := c.status(ti.TaskID, mesos.TASK_FAILED, mesos.REASON_TASK_INVALID, "this executor already runs task "+c.taskID())
		return []Action{c.send(st)}
	}
	c.task = &ti
	c.phase = PhaseStarting
	return []Action{StartChild{}, c.send(c.status(ti.TaskID, mesos.TASK_STARTING, -1, ""))}
}

func (c *Core) health(err string) []Action {
	c.lastErr = err
	switch c.phase {
	case PhaseStarting:
		if err != "" {
			return nil // the startup timer bounds the wait
		}
		c.phase = PhaseRunning
		st := c.status(c.task.TaskID, mesos.TASK_RUNNING, -1, string(c.cfg.Role)+" is healthy")
		st.Healthy = boolPtr(true)
		return []Action{c.send(st)}
	case PhaseRunning:
		if err == "" {
			c.failures = 0
			return nil
		}
		c.failures++
		if c.failures < c.cfg.MaxHealthFailures {
			return nil
		}
		why := fmt.Sprintf("%s failed %d health checks in a row: %s", c.cfg.Role, c.failures, err)
		return c.stop(why, mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED, c.cfg.KillGrace)
	}
	return nil
}

// kill stops the task at the scheduler's (or agent's) request.
func (c *Core) kill(grace time.Duration) []Action {
	switch c.phase {
	case PhaseIdle:
		if c.shutdown {
			return []Action{Exit{}}
		}
		return nil
	case PhaseStarting, PhaseRunning:
		return c.stop("", 0, grace)
	case PhaseDone:
		if c.shutdown {
			return []Action{Exit{}}
		}
	}
	return nil
}

// stop sends SIGTERM and arms the grace timer. why != "" fails the task
// (with reason) when the child has exited; "" kills it.
func (c *Core) stop(why string, reason mesos.TaskStatus_Reason, grace time.Duration) []Action {
	c.phase = PhaseStopping
	c.failWhy, c.failRsn = why, reason
	return []Action{StopHealth{}, SignalChild{syscall.SIGTERM}, StartTimer{TimerGrace, grace}}
}

func (c *Core) exited(e ExitStatus) []Action {
	role := string(c.cfg.Role)
	switch c.phase {
	case PhaseStopping:
		if c.failWhy != "" {
			return c.finish(mesos.TASK_FAILED, c.failRsn, c.failWhy+"; "+role+" "+e.String())
		}
		return c.finish(mesos.TASK_KILLED, -1, role+" stopped on request and "+e.String())
	case PhaseStarting, PhaseRunning:
		if e.Signal == 0 && e.Code == 0 {
			return c.finish(mesos.TASK_FINISHED, -1, role+" "+e.String())
		}
		return c.finish(mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED, role+" "+e.String())
	}
	return nil
}

// finish sends the terminal update.
func (c *Core) finish(state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) []Action {
	c.phase = PhaseDone
	acts := []Action{StopHealth{}, c.send(c.status(c.task.TaskID, state, reason, msg))}
	if c.shutdown {
		acts = append(acts, Exit{})
	}
	return acts
}

func (c *Core) ack(uuid []byte) []Action {
	for i, u := range c.unacked {
		if string(u.Status.UUID) != string(uuid) {
			continue
		}
		c.unacked = append(c.unacked[:i], c.unacked[i+1:]...)
		if c.task != nil && u.Status.TaskID.Value == c.task.TaskID.Value {
			c.acked = true
		}
		break
	}
	if c.phase == PhaseDone && len(c.unacked) == 0 {
		return []Action{Exit{}}
	}
	return nil
}

func (c *Core) grace(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	if c.task != nil {
		if g := c.task.GetKillPolicy().GetGracePeriod(); g != nil && g.Nanoseconds > 0 {
			return time.Duration(g.Nanoseconds)
		}
	}
	return c.cfg.KillGrace
}

func (c *Core) taskID() string {
	if c.task == nil {
		return ""
	}
	return c.task.TaskID.Value
}

// status builds an update; reason < 0 means none.
func (c *Core) status(id mesos.TaskID, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
	src := mesos.SOURCE_EXECUTOR
	st := mesos.TaskStatus{TaskID: id, State: &state, Source: &src, UUID: c.cfg.NewUUID()}
	if reason >= 0 {
		st.Reason = &reason
	}
	if msg != "" {
		st.Message = &msg
	}
	return st
}

func (c *Core) send(st mesos.TaskStatus) Action {
	c.unacked = append(c.unacked, executor.Call_Update{Status: st})
	return SendUpdate{Status: st}
}

func boolPtr(b bool) *bool { return &b }
