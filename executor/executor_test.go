package executor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	sluiceexec "github.com/sluice-streams/sluice/executor"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
)

var sluiceBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-executor-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sluiceBin, err = proctest.BuildSluice(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const wait = 20 * time.Second // bound of every wait

// harness is a fake master with one agent and a scheduler that launches
// one task, acknowledges every update and records them.
type harness struct {
	t      *testing.T
	m      *mesostest.Master
	caller calls.Caller
	fwID   string
	events chan *scheduler.Event
	seen   []mesos.TaskStatus
	dirs   map[string]string // sandboxes by task id
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	m := mesostest.NewMaster(t, mesostest.Options{ShutdownGracePeriod: 10 * time.Second})
	if err := m.AddAgent(mesostest.AgentSpec{ID: "a1", CPUs: 2, MemMB: 1024, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	cli := httpcli.New(httpcli.Endpoint(m.URL()), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]))
	h := &harness{t: t, m: m, caller: httpsched.NewCaller(cli), events: make(chan *scheduler.Event, 1024), dirs: map[string]string{}}
	checkpoint := true
	resp, err := h.caller.Call(ctx(t), calls.Subscribe(&mesos.FrameworkInfo{User: "sluice", Name: "sluice", Checkpoint: &checkpoint}))
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	t.Cleanup(func() { resp.Close() })
	go func() {
		defer close(h.events)
		for {
			ev := new(scheduler.Event)
			if err := resp.Decode(ev); err != nil {
				return
			}
			h.events <- ev
		}
	}()
	h.next(func(ev *scheduler.Event) bool {
		if ev.Type == scheduler.Event_SUBSCRIBED {
			h.fwID = ev.Subscribed.FrameworkID.Value
			return true
		}
		return false
	})
	return h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return c
}

func (h *harness) call(c *scheduler.Call) {
	h.t.Helper()
	resp, err := h.caller.Call(ctx(h.t), c.With(calls.Framework(h.fwID)))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		h.t.Fatalf("%v: %v", c.Type, err)
	}
}

// next returns the next event pred accepts, acknowledging updates.
func (h *harness) next(pred func(*scheduler.Event) bool) *scheduler.Event {
	h.t.Helper()
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-h.events:
			if !ok {
				h.t.Fatal("the scheduler's event stream ended")
			}
			if ev.Type == scheduler.Event_UPDATE {
				st := ev.Update.Status
				h.seen = append(h.seen, st)
				if len(st.UUID) > 0 {
					h.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
				}
			}
			if pred(ev) {
				return ev
			}
		case <-timeout.C:
			h.t.Fatalf("no matching event within %v; updates so far: %s", wait, h.states())
		}
	}
}

// update waits for the task's update in state.
func (h *harness) update(state mesos.TaskState) mesos.TaskStatus {
	h.t.Helper()
	return h.next(func(ev *scheduler.Event) bool {
		return ev.Type == scheduler.Event_UPDATE && ev.Update.Status.GetState() == state
	}).Update.Status
}

func (h *harness) states() string {
	var s []string
	for _, st := range h.seen {
		s = append(s, st.GetState().String())
	}
	return strings.Join(s, ",")
}

// launch accepts the first offer with one task whose executor runs
// `sluice executor <execArgs>`.
func (h *harness) launch(taskID, execArgs string) {
	h.t.Helper()
	var offer mesos.Offer
	h.next(func(ev *scheduler.Event) bool {
		if ev.Type == scheduler.Event_OFFERS && len(ev.Offers.Offers) > 0 {
			offer = ev.Offers.Offers[0]
			return true
		}
		return false
	})
	cmd := sluiceBin + " executor " + execArgs
	ti := mesos.TaskInfo{
		Name: taskID, TaskID: mesos.TaskID{Value: taskID}, AgentID: offer.AgentID, Resources: offer.Resources,
		Executor: &mesos.ExecutorInfo{
			ExecutorID: mesos.ExecutorID{Value: "exec-" + taskID},
			Command:    &mesos.CommandInfo{Value: &cmd},
		},
	}
	h.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(offer.ID)))
}

func (h *harness) sandbox(taskID string) string {
	h.t.Helper()
	if d, ok := h.dirs[taskID]; ok {
		return d
	}
	tv, ok := h.m.Task(taskID)
	if !ok {
		h.t.Fatalf("task %s unknown to the master", taskID)
	}
	h.dirs[taskID] = tv.Sandbox
	return tv.Sandbox
}

// logged waits for a match of re in the sandbox file name and returns
// its first group.
func (h *harness) logged(taskID, name string, re *regexp.Regexp) string {
	h.t.Helper()
	file := filepath.Join(h.sandbox(taskID), name)
	var got string
	proctest.WaitFor(h.t, "a match of "+re.String()+" in "+name, wait, func() (bool, string) {
		b, _ := os.ReadFile(file)
		if m := re.FindSubmatch(b); m != nil {
			got = string(m[1])
			return true, ""
		}
		return false, string(b)
	})
	return got
}

var (
	nodeAddrRE = regexp.MustCompile(`node listening on (\S+)`)
	childPidRE = regexp.MustCompile(`executor: started node".*pid=(\d+)`)
)

// awaitTaskCompleted waits until the master has forgotten the task
// (terminal and acknowledged).
func (h *harness) awaitTaskCompleted(taskID string) {
	h.t.Helper()
	err := h.m.Await(ctx(h.t), func() bool {
		for _, tv := range h.m.CompletedTasks() {
			if tv.ID == taskID {
				return true
			}
		}
		return false
	})
	if err != nil {
		h.t.Fatalf("task %s not completed: %v", taskID, err)
	}
}

func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

const nodeArgs = "--role node --health-interval 100ms -- node --data $MESOS_SANDBOX/wal --listen 127.0.0.1:0 --containers 2 --wal-preallocate=false"

// TestNodeKill: STARTING, then RUNNING once the node really serves; KILL
// sends SIGTERM, the node closes cleanly, TASK_KILLED.
func TestNodeKill(t *testing.T) {
	h := newHarness(t)
	h.launch("node-0", nodeArgs)
	h.update(mesos.TASK_STARTING)
	run := h.update(mesos.TASK_RUNNING)
	if !run.GetHealthy() {
		t.Fatalf("RUNNING without healthy=true: %v", run)
	}
	addr := h.logged("node-0", "stdout", nodeAddrRE)
	pctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := sluiceexec.Probe(pctx, sluiceexec.RoleNode, addr); err != nil {
		t.Fatalf("the node at %s does not serve while RUNNING: %v", addr, err)
	}
	if got := h.states(); got != "TASK_STARTING,TASK_RUNNING" {
		t.Fatalf("updates %s", got)
	}

	h.sandbox("node-0")
	h.call(calls.Kill("node-0", "a1"))
	killed := h.update(mesos.TASK_KILLED)
	if !strings.Contains(killed.GetMessage(), "exited with status 0") {
		t.Fatalf("TASK_KILLED message %q: the node did not exit cleanly on SIGTERM", killed.GetMessage())
	}
	h.logged("node-0", "stderr", regexp.MustCompile(`(node: shutting down)`))
	h.awaitTaskCompleted("node-0")
	if got := h.states(); got != "TASK_STARTING,TASK_RUNNING,TASK_KILLED" {
		t.Fatalf("updates %s", got)
	}
}

// TestNodeSIGKILL: the node killed with SIGKILL is TASK_FAILED with the
// signal as the reason.
func TestNodeSIGKILL(t *testing.T) {
	h := newHarness(t)
	h.launch("node-0", nodeArgs)
	h.update(mesos.TASK_RUNNING)
	pid, err := strconv.Atoi(h.logged("node-0", "stderr", childPidRE))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	failed := h.update(mesos.TASK_FAILED)
	if failed.GetReason() != mesos.REASON_COMMAND_EXECUTOR_FAILED || failed.GetSource() != mesos.SOURCE_EXECUTOR ||
		failed.GetMessage() != "node was killed by signal killed" {
		t.Fatalf("TASK_FAILED %v %v %q", failed.GetSource(), failed.GetReason(), failed.GetMessage())
	}
	h.awaitTaskCompleted("node-0")
}

// TestReconnect: the agent drops the executor's stream (an agent
// restart); the executor subscribes again, the node keeps running, and
// KILL still works.
func TestReconnect(t *testing.T) {
	h := newHarness(t)
	h.launch("node-0", nodeArgs)
	h.update(mesos.TASK_RUNNING)
	pid, err := strconv.Atoi(h.logged("node-0", "stderr", childPidRE))
	if err != nil {
		t.Fatal(err)
	}
	subscribes := func() int {
		n := 0
		for _, c := range h.m.ExecutorCalls() {
			if c.Call.Type == executor.Call_SUBSCRIBE {
				n++
			}
		}
		return n
	}
	if n := subscribes(); n != 1 {
		t.Fatalf("%d SUBSCRIBE calls before the drop", n)
	}
	if err := h.m.DisconnectExecutors("a1"); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Await(ctx(t), func() bool { return subscribes() >= 2 }); err != nil {
		t.Fatalf("no re-SUBSCRIBE: %v", err)
	}
	if !pidAlive(pid) {
		t.Fatal("the node died when the agent connection dropped")
	}
	addr := h.logged("node-0", "stdout", nodeAddrRE)
	pctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := sluiceexec.Probe(pctx, sluiceexec.RoleNode, addr); err != nil {
		t.Fatalf("the node does not serve after the re-subscribe: %v", err)
	}
	// The KILL goes over the new stream (once it is open).
	if err := h.m.Await(ctx(t), func() bool {
		tv, _ := h.m.Task("node-0")
		return tv.State == mesos.TASK_RUNNING
	}); err != nil {
		t.Fatal(err)
	}
	h.call(calls.Kill("node-0", "a1"))
	h.update(mesos.TASK_KILLED)
	if got := h.states(); got != "TASK_STARTING,TASK_RUNNING,TASK_KILLED" {
		t.Fatalf("updates %s", got)
	}
	h.awaitTaskCompleted("node-0")
}

// TestController: the controller role (embedded metadata store, no
// ZooKeeper) is RUNNING once GET /health answers, and KILL stops it.
func TestController(t *testing.T) {
	h := newHarness(t)
	h.launch("controller-0", "--role controller --health-interval 100ms -- controller --listen 127.0.0.1:0 --data $MESOS_SANDBOX/meta --node 127.0.0.1:1")
	h.update(mesos.TASK_STARTING)
	h.update(mesos.TASK_RUNNING)
	addr := h.logged("controller-0", "stdout", regexp.MustCompile(`controller listening on (\S+)`))
	pctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := sluiceexec.Probe(pctx, sluiceexec.RoleController, addr); err != nil {
		t.Fatal(err)
	}
	h.call(calls.Kill("controller-0", "a1"))
	killed := h.update(mesos.TASK_KILLED)
	if !strings.Contains(killed.GetMessage(), "exited with status 0") {
		t.Fatalf("TASK_KILLED message %q", killed.GetMessage())
	}
	h.awaitTaskCompleted("controller-0")
}

// TestNeverHealthy: a controller probed at an address nothing serves is
// stopped after the startup timeout and reported TASK_FAILED with the
// health reason.
func TestNeverHealthy(t *testing.T) {
	h := newHarness(t)
	h.launch("controller-0", "--role controller --health-interval 100ms --startup-timeout 1s --health-addr 127.0.0.1:1 -- controller --listen 127.0.0.1:0 --data $MESOS_SANDBOX/meta --node 127.0.0.1:1")
	h.update(mesos.TASK_STARTING)
	failed := h.update(mesos.TASK_FAILED)
	if failed.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED || !strings.Contains(failed.GetMessage(), "did not become healthy within 1s") {
		t.Fatalf("TASK_FAILED %v %q", failed.GetReason(), failed.GetMessage())
	}
	if got := h.states(); got != "TASK_STARTING,TASK_FAILED" {
		t.Fatalf("updates %s", got)
	}
	h.awaitTaskCompleted("controller-0")
}

// TestUpdateWhileDisconnected: the node dies while the agent connection
// is down; its TASK_FAILED reaches the scheduler once, whether it went
// with the re-SUBSCRIBE's unacknowledged updates or as an UPDATE after.
func TestUpdateWhileDisconnected(t *testing.T) {
	h := newHarness(t)
	h.launch("node-0", nodeArgs)
	h.update(mesos.TASK_RUNNING)
	pid, err := strconv.Atoi(h.logged("node-0", "stderr", childPidRE))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.m.DisconnectExecutors("a1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	failed := h.update(mesos.TASK_FAILED)
	if failed.GetMessage() != "node was killed by signal killed" {
		t.Fatalf("TASK_FAILED %q", failed.GetMessage())
	}
	h.awaitTaskCompleted("node-0")
	if got := h.states(); got != "TASK_STARTING,TASK_RUNNING,TASK_FAILED" {
		t.Fatalf("updates %s", got)
	}
	var carried int
	for _, c := range h.m.ExecutorCalls() {
		if c.Call.Type == executor.Call_SUBSCRIBE {
			carried += len(c.Call.Subscribe.UnacknowledgedUpdates)
		}
	}
	t.Logf("unacknowledged updates carried by SUBSCRIBE calls: %d", carried)
}
