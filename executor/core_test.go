package executor

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// uuids gives 16-byte ids "uuid-00000000001", ... in order: valid
// UUIDs to Mesos (byte 6, '0', reads as version 3), as the agent checks.
func uuids() func() []byte {
	n := 0
	return func() []byte { n++; return []byte(fmt.Sprintf("uuid-%011d", n)) }
}

func task(id string, grace time.Duration) mesos.TaskInfo {
	ti := mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Name: id}
	if grace > 0 {
		ti.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(grace)}}
	}
	return ti
}

// show renders actions as short text: "start", "update STATE reason msg",
// "signal SIG", "timer T after", "watch ADDR", "unwatch", "exit".
func show(acts []Action) string {
	var out []string
	for _, a := range acts {
		switch a := a.(type) {
		case StartChild:
			out = append(out, "start")
		case SendUpdate:
			s := "update " + a.Status.TaskID.Value + " " + a.Status.GetState().String()
			if a.Status.Reason != nil {
				s += " " + a.Status.GetReason().String()
			}
			if a.Status.Healthy != nil {
				s += fmt.Sprintf(" healthy=%v", a.Status.GetHealthy())
			}
			if a.Status.Message != nil {
				s += " (" + a.Status.GetMessage() + ")"
			}
			out = append(out, s)
		case SignalChild:
			out = append(out, "signal "+a.Signal.String())
		case StartTimer:
			name := map[Timer]string{TimerGrace: "grace", TimerStartup: "startup"}[a.Timer]
			out = append(out, fmt.Sprintf("timer %s %v", name, a.After))
		case WatchHealth:
			out = append(out, "watch "+a.Addr)
		case StopHealth:
			out = append(out, "unwatch")
		case Exit:
			out = append(out, "exit")
		default:
			out = append(out, fmt.Sprintf("%T", a))
		}
	}
	return strings.Join(out, "; ")
}

type step struct {
	in   Input
	want string // show() of the actions
}

func ack(n int) Input { return Acknowledged{TaskID: "t1", UUID: []byte(fmt.Sprintf("uuid-%011d", n))} }

var (
	launch    = Launched{Task: task("t1", 0)}
	started   = ChildStarted{}
	listening = ChildListening{Addr: "127.0.0.1:9"}
	healthy   = HealthChecked{}
	sick      = HealthChecked{Err: "connection refused"}
)

// boot is LAUNCH to RUNNING, acknowledged; uuids 1 and 2 are used.
var boot = []step{
	{launch, "start; update t1 TASK_STARTING"},
	{started, "timer startup 1m0s"},
	{listening, "watch 127.0.0.1:9"},
	{sick, ""},
	{healthy, "update t1 TASK_RUNNING healthy=true (node is healthy)"},
	{ack(1), ""},
	{ack(2), ""},
}

func with(steps ...step) []step { return append(append([]step(nil), boot...), steps...) }

func TestCore(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		phase Phase
	}{
		{"runs", with(step{healthy, ""}), PhaseRunning},
		{"finishes", with(
			step{ChildExited{}, "unwatch; update t1 TASK_FINISHED (node exited with status 0)"},
			step{ack(3), "exit"},
		), PhaseDone},
		{"fails with exit status", with(
			step{ChildExited{Exit: ExitStatus{Code: 3}}, "unwatch; update t1 TASK_FAILED REASON_COMMAND_EXECUTOR_FAILED (node exited with status 3)"},
		), PhaseDone},
		{"fails with signal", with(
			step{ChildExited{Exit: ExitStatus{Signal: syscall.SIGKILL}}, "unwatch; update t1 TASK_FAILED REASON_COMMAND_EXECUTOR_FAILED (node was killed by signal killed)"},
			step{ack(3), "exit"},
		), PhaseDone},
		{"kill, clean exit", with(
			step{KillRequested{TaskID: "t1"}, "unwatch; signal terminated; timer grace 30s"},
			step{ChildExited{}, "unwatch; update t1 TASK_KILLED (node stopped on request and exited with status 0)"},
			step{ack(3), "exit"},
		), PhaseDone},
		{"kill, grace over", with(
			step{KillRequested{TaskID: "t1", Grace: 2 * time.Second}, "unwatch; signal terminated; timer grace 2s"},
			step{TimerFired{TimerGrace}, "signal killed"},
			step{ChildExited{Exit: ExitStatus{Signal: syscall.SIGKILL}}, "unwatch; update t1 TASK_KILLED (node stopped on request and was killed by signal killed)"},
		), PhaseDone},
		{"kill of another task is ignored", with(
			step{KillRequested{TaskID: "t9"}, ""},
		), PhaseRunning},
		{"kill policy of the task", []step{
			{Launched{Task: task("t1", 7*time.Second)}, "start; update t1 TASK_STARTING"},
			{started, "timer startup 1m0s"},
			{KillRequested{TaskID: "t1"}, "unwatch; signal terminated; timer grace 7s"},
			{ChildExited{}, "unwatch; update t1 TASK_KILLED (node stopped on request and exited with status 0)"},
		}, PhaseDone},
		{"health fails repeatedly", with(
			step{sick, ""},
			step{healthy, ""},
			step{sick, ""},
			step{sick, ""},
			step{sick, "unwatch; signal terminated; timer grace 30s"},
			step{sick, ""},
			step{ChildExited{Exit: ExitStatus{Code: 0}}, "unwatch; update t1 TASK_FAILED REASON_TASK_HEALTH_CHECK_STATUS_UPDATED (node failed 3 health checks in a row: connection refused; node exited with status 0)"},
		), PhaseDone},
		{"never healthy", []step{
			{launch, "start; update t1 TASK_STARTING"},
			{started, "timer startup 1m0s"},
			{listening, "watch 127.0.0.1:9"},
			{sick, ""},
			{TimerFired{TimerStartup}, "unwatch; signal terminated; timer grace 30s"},
			{TimerFired{TimerStartup}, ""},
			{ChildExited{Exit: ExitStatus{Code: 1}}, "unwatch; update t1 TASK_FAILED REASON_TASK_HEALTH_CHECK_STATUS_UPDATED (node did not become healthy within 1m0s: connection refused; node exited with status 1)"},
		}, PhaseDone},
		{"start fails", []step{
			{launch, "start; update t1 TASK_STARTING"},
			{ChildStartFailed{Err: "no such file"}, "unwatch; update t1 TASK_FAILED REASON_COMMAND_EXECUTOR_FAILED (could not start node: no such file)"},
			{ack(1), ""},
			{ack(2), "exit"},
		}, PhaseDone},
		{"second launch refused", with(
			step{Launched{Task: task("t2", 0)}, "update t2 TASK_FAILED REASON_TASK_INVALID (this executor already runs task t1)"},
		), PhaseRunning},
		{"shutdown", with(
			step{ShutdownRequested{}, "unwatch; signal terminated; timer grace 3s"},
			step{ChildExited{}, "unwatch; update t1 TASK_KILLED (node stopped on request and exited with status 0); exit"},
		), PhaseDone},
		{"shutdown before launch", []step{
			{ShutdownRequested{}, "exit"},
		}, PhaseIdle},
		{"agent lost", with(
			step{Disconnected{Reason: "gone"}, "unwatch; signal terminated; timer grace 30s"},
			step{ChildExited{}, "unwatch; update t1 TASK_FAILED REASON_EXECUTOR_TERMINATED (executor lost its agent: gone; node exited with status 0); exit"},
		), PhaseDone},
		{"late inputs ignored", with(
			step{ChildExited{}, "unwatch; update t1 TASK_FINISHED (node exited with status 0)"},
			step{healthy, ""},
			step{TimerFired{TimerGrace}, ""},
			step{KillRequested{TaskID: "t1"}, ""},
			step{listening, ""},
		), PhaseDone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCore(CoreConfig{Role: RoleNode, StartupTimeout: time.Minute, ShutdownGrace: 3 * time.Second, NewUUID: uuids()})
			for i, s := range tc.steps {
				if got := show(c.Step(s.in)); got != s.want {
					t.Fatalf("step %d %T%+v:\n got  %s\n want %s", i, s.in, s.in, got, s.want)
				}
			}
			if c.Phase() != tc.phase {
				t.Fatalf("phase %v, want %v", c.Phase(), tc.phase)
			}
		})
	}
}

// TestCoreUnacknowledged: what a re-SUBSCRIBE carries.
func TestCoreUnacknowledged(t *testing.T) {
	c := NewCore(CoreConfig{Role: RoleController, NewUUID: uuids()})
	if tasks, ups := c.Unacknowledged(); len(tasks) != 0 || len(ups) != 0 {
		t.Fatalf("idle: %v %v", tasks, ups)
	}
	c.Step(launch)
	c.Step(started)
	c.Step(healthy)
	tasks, ups := c.Unacknowledged()
	if len(tasks) != 1 || tasks[0].TaskID.Value != "t1" {
		t.Fatalf("tasks %v, want t1 (no update acknowledged yet)", tasks)
	}
	if len(ups) != 2 || ups[0].Status.GetState() != mesos.TASK_STARTING || ups[1].Status.GetState() != mesos.TASK_RUNNING {
		t.Fatalf("updates %v, want STARTING then RUNNING", ups)
	}
	c.Step(ack(1))
	tasks, ups = c.Unacknowledged()
	if len(tasks) != 0 || len(ups) != 1 || string(ups[0].Status.UUID) != "uuid-00000000002" {
		t.Fatalf("after one ack: tasks %v updates %v", tasks, ups)
	}
	c.Step(ack(1)) // a duplicate acknowledgement changes nothing
	if _, ups = c.Unacknowledged(); len(ups) != 1 {
		t.Fatalf("after a duplicate ack: %v", ups)
	}
}

func TestDialable(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:1": "127.0.0.1:1", "[::]:2": "127.0.0.1:2", ":3": "127.0.0.1:3",
		"10.1.2.3:4": "10.1.2.3:4", "host:5": "host:5", "junk": "junk",
	} {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
