package mesostest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

func scalar(name string, v float64) mesos.Resource {
	t := mesos.SCALAR
	return mesos.Resource{Name: name, Type: &t, Scalar: &mesos.Value_Scalar{Value: v}}
}

func reserve(r mesos.Resource, pod string) mesos.Resource {
	typ := mesos.Resource_ReservationInfo_DYNAMIC
	r.Reservations = []mesos.Resource_ReservationInfo{{
		Type: &typ, Role: strPtr("sluice"),
		Labels: &mesos.Labels{Labels: []mesos.Label{{Key: "framework", Value: strPtr("sluice")}, {Key: "pod", Value: strPtr(pod)}}},
	}}
	return r
}

func volume(r mesos.Resource, id, path string) mesos.Resource {
	mode := mesos.RW
	r.Disk = &mesos.Resource_DiskInfo{
		Persistence: &mesos.Resource_DiskInfo_Persistence{ID: id},
		Volume:      &mesos.Volume{ContainerPath: path, Mode: &mode},
	}
	return r
}

func cpus(o mesos.Offer) float64 {
	var sum float64
	for _, r := range o.Resources {
		if r.Name == "cpus" {
			sum += r.GetScalar().GetValue()
		}
	}
	return sum
}

func hasVolume(o mesos.Offer, id string) bool {
	for _, r := range o.Resources {
		if r.GetDisk().GetPersistence().GetID() == id {
			return true
		}
	}
	return false
}

func executorTask(id, agentID string, res mesos.Resources, data string) mesos.TaskInfo {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return mesos.TaskInfo{
		Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: mesos.AgentID{Value: agentID},
		Resources: res, Data: []byte(data),
		Executor: &mesos.ExecutorInfo{
			ExecutorID: mesos.ExecutorID{Value: "exec-" + id},
			Command: &mesos.CommandInfo{
				Value: strPtr(exe), Shell: boolPtr(false), Arguments: []string{exe, "-test.run=^$"},
				Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: helperEnv, Value: strPtr("executor")}}},
			},
		},
	}
}

// podResources are the reserved resources and the volume of pod "node-0".
func podResources() (reserved mesos.Resources, vol mesos.Resource, task mesos.Resources) {
	reserved = mesos.Resources{reserve(scalar("cpus", 1), "node-0"), reserve(scalar("mem", 128), "node-0"), reserve(scalar("disk", 100), "node-0")}
	vol = volume(reserve(scalar("disk", 100), "node-0"), "vol-node-0", "data")
	task = mesos.Resources{reserve(scalar("cpus", 1), "node-0"), reserve(scalar("mem", 128), "node-0"), vol}
	return
}

func TestPodLifecycle(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000, Ports: []mesos.Value_Range{{Begin: 31000, End: 31010}}}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	if s.fwID == "" || s.fwID != m.FrameworkID() {
		t.Fatalf("framework id %q, master says %q", s.fwID, m.FrameworkID())
	}

	// Reserve, create a volume and launch on it in one ACCEPT.
	o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" && cpus(o) == 4 })
	reserved, vol, taskRes := podResources()
	s.call(calls.Accept(calls.OfferOperations{
		calls.OpReserve(reserved...),
		calls.OpCreate(vol),
		calls.OpLaunch(executorTask("node-0", "a1", taskRes, "")),
	}.WithOffers(o.ID)))
	s.update("node-0", mesos.TASK_RUNNING)

	av, err := m.Agent("a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(av.Volumes) != 1 || av.Volumes[0].PersistenceID != "vol-node-0" || av.Volumes[0].ContainerPath != "data" {
		t.Fatalf("volumes %+v", av.Volumes)
	}
	labelled := 0
	for _, r := range av.Reserved {
		for _, l := range r.Reservations[0].GetLabels().GetLabels() {
			if l.Key == "pod" && l.GetValue() == "node-0" {
				labelled++
			}
		}
	}
	if labelled != 3 { // cpus, mem, and the disk that became the volume
		t.Fatalf("reserved with pod label: %d in %v", labelled, av.Reserved)
	}
	if errs := m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("operation errors: %v", errs)
	}
	runs := filepath.Join(av.Volumes[0].Dir, "runs")

	// Framework messages both ways.
	s.call(calls.Message("a1", "exec-node-0", []byte("hello")))
	msg := s.next(func(e *scheduler.Event) bool { return e.Type == scheduler.Event_MESSAGE })
	if string(msg.Message.Data) != "echo:hello" || msg.Message.ExecutorID.Value != "exec-node-0" || msg.Message.AgentID.Value != "a1" {
		t.Fatalf("message %+v", msg.Message)
	}
	var kinds []string
	for _, c := range m.ExecutorCalls() {
		kinds = append(kinds, c.Call.Type.String())
	}
	if got := strings.Join(kinds, ","); got != "SUBSCRIBE,UPDATE,MESSAGE" {
		t.Fatalf("executor calls %s", got)
	}

	// Kill: the executor answers TASK_KILLED; resources come back with
	// the reservation and the volume in a later offer.
	s.call(calls.Kill("node-0", "a1"))
	s.update("node-0", mesos.TASK_KILLED)
	o = s.nextOffer(func(o mesos.Offer) bool { return hasVolume(o, "vol-node-0") })
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(executorTask("node-0b", "a1", taskRes, ""))}.WithOffers(o.ID)))
	s.update("node-0b", mesos.TASK_RUNNING)
	if b, err := os.ReadFile(runs); err != nil || string(b) != "node-0\nnode-0b\n" {
		t.Fatalf("volume contents %q, %v: want both runs on the same volume", b, err)
	}

	// Reconcile: explicit (known and unknown task) and implicit.
	s.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"node-0b": "a1", "nope": ""})))
	want := map[string]mesos.TaskState{"node-0b": mesos.TASK_RUNNING, "nope": mesos.TASK_LOST}
	for len(want) > 0 {
		ev := s.next(func(e *scheduler.Event) bool {
			return e.Type == scheduler.Event_UPDATE && e.Update.Status.GetReason() == mesos.REASON_RECONCILIATION
		})
		st := ev.Update.Status
		if want[st.TaskID.Value] != st.GetState() || len(st.UUID) != 0 {
			t.Fatalf("reconciliation update %v, want states %v", st, want)
		}
		delete(want, st.TaskID.Value)
	}
	s.call(calls.Reconcile())
	s.update("node-0b", mesos.TASK_RUNNING)

	// Agent loss: TASK_LOST and FAILURE; back with its volume.
	if err := m.KillAgent("a1"); err != nil {
		t.Fatal(err)
	}
	st := s.update("node-0b", mesos.TASK_LOST)
	if st.GetReason() != mesos.REASON_AGENT_REMOVED {
		t.Fatalf("lost reason %v", st.GetReason())
	}
	s.next(func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_FAILURE && e.Failure.GetAgentID().GetValue() == "a1"
	})
	if err := m.RestartAgent("a1"); err != nil {
		t.Fatal(err)
	}
	o = s.nextOffer(func(o mesos.Offer) bool { return hasVolume(o, "vol-node-0") })

	// A crashing executor: RUNNING, then the agent reports TASK_FAILED.
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(executorTask("node-0c", "a1", taskRes, "crash"))}.WithOffers(o.ID)))
	s.update("node-0c", mesos.TASK_RUNNING)
	st = s.update("node-0c", mesos.TASK_FAILED)
	if st.GetSource() != mesos.SOURCE_AGENT || st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Fatalf("failed update %v", st)
	}

	// Destroy and unreserve: the agent is back to unreserved resources.
	o = s.nextOffer(func(o mesos.Offer) bool { return hasVolume(o, "vol-node-0") })
	s.call(calls.Accept(calls.OfferOperations{calls.OpDestroy(vol), calls.OpUnreserve(reserved...)}.WithOffers(o.ID)))
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Await(c, func() bool { av, _ := m.Agent("a1"); return len(av.Reserved) == 0 }); err != nil {
		av, _ := m.Agent("a1")
		t.Fatalf("%v: reserved %v, errors %v", err, av.Reserved, m.OperationErrors())
	}
	if _, err := os.Stat(runs); !os.IsNotExist(err) {
		t.Fatalf("volume directory survived DESTROY: %v", err)
	}
}

func TestCommandTaskAndAcks(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 2, MemMB: 256}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeJSON)
	s.autoAck = false
	o := s.nextOffer(func(mesos.Offer) bool { return true })
	ti := mesos.TaskInfo{Name: "echo", TaskID: mesos.TaskID{Value: "echo"}, AgentID: o.AgentID,
		Resources: []mesos.Resource{scalar("cpus", 1)},
		Command:   &mesos.CommandInfo{Value: strPtr(`test -n "$MESOS_SANDBOX" && echo hi`)}}
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)).With(calls.RefuseSeconds(time.Hour)))
	running := s.update("echo", mesos.TASK_RUNNING)
	// FINISHED waits behind the unacknowledged RUNNING, which is resent.
	m.ResendUnacknowledged()
	again := s.update("echo", mesos.TASK_RUNNING)
	if !bytes.Equal(running.UUID, again.UUID) {
		t.Fatal("a resent update must keep its uuid")
	}
	s.call(calls.Acknowledge("a1", "echo", running.UUID))
	fin := s.update("echo", mesos.TASK_FINISHED)
	s.call(calls.Acknowledge("a1", "echo", fin.UUID))
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Await(c, func() bool { _, ok := m.Task("echo"); return !ok }); err != nil {
		t.Fatal(err)
	}
	if done := m.CompletedTasks(); len(done) != 1 || done[0].State != mesos.TASK_FINISHED {
		t.Fatalf("completed %+v", done)
	}
	if b, err := os.ReadFile(filepath.Join(m.CompletedTasks()[0].Sandbox, "stdout")); err != nil || string(b) != "hi\n" {
		t.Fatalf("stdout %q %v", b, err)
	}
}

func TestDeclineFilterReviveSuppressRescind(t *testing.T) {
	now := time.Unix(1000, 0)
	var clock = func() time.Time { return now }
	m := NewMaster(t, Options{Now: clock, AllocationInterval: time.Hour})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 0.1, MemMB: 16}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	o := s.nextOffer(func(mesos.Offer) bool { return true }) // too small for anything: decline
	s.call(calls.Decline(o.ID).With(calls.RefuseSeconds(30 * time.Second)))
	dec := m.CallsOf(scheduler.Call_DECLINE)
	if len(dec) != 1 || dec[0].Decline.Filters.GetRefuseSeconds() != 30 {
		t.Fatalf("declines %v", dec)
	}
	m.Allocate()
	if offers := m.Offers(); len(offers) != 0 {
		t.Fatalf("filtered resources offered again: %v", offers)
	}
	now = now.Add(31 * time.Second)
	m.Allocate()
	o = s.nextOffer(func(mesos.Offer) bool { return true })

	if err := m.RescindOffer(o.ID.Value); err != nil {
		t.Fatal(err)
	}
	s.next(func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_RESCIND && e.Rescind.OfferID == o.ID
	})
	s.call(calls.Suppress())
	m.Allocate()
	if offers := m.Offers(); len(offers) != 0 {
		t.Fatalf("offers while suppressed: %v", offers)
	}
	s.call(calls.Revive())
	s.nextOffer(func(mesos.Offer) bool { return true })
	// ACCEPT on a rescinded offer: the launch is answered TASK_LOST.
	ti := mesos.TaskInfo{Name: "x", TaskID: mesos.TaskID{Value: "x"}, AgentID: o.AgentID, Command: &mesos.CommandInfo{Value: strPtr("true")}}
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
	if st := s.update("x", mesos.TASK_LOST); st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Fatalf("stale offer launch: %v", st)
	}
}

func TestFailoverAndWireErrors(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	post := func(body []byte, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, m.URL(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	revive, _ := calls.Revive().With(calls.Framework(s.fwID)).Marshal()
	if r := post([]byte{0xff, 0xff}, nil); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed: %d", r.StatusCode)
	}
	if r := post(revive, nil); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("no Mesos-Stream-Id: %d", r.StatusCode)
	}
	if r := post(revive, map[string]string{"Mesos-Stream-Id": "wrong"}); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("wrong Mesos-Stream-Id: %d", r.StatusCode)
	}

	if err := m.DisconnectScheduler(m.FrameworkID()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.ended:
		if err == nil {
			t.Fatal("stream ended without error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("event stream still open after DisconnectScheduler")
	}
	if r := post(revive, map[string]string{"Mesos-Stream-Id": "x"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("disconnected framework: %d", r.StatusCode)
	}

	// Fail over with the same framework id, over a raw request asking
	// for application/recordio, and read the RecordIO framing by hand.
	sub, _ := calls.Subscribe(&mesos.FrameworkInfo{User: "u", Name: "sluice", ID: &mesos.FrameworkID{Value: s.fwID}}).
		With(calls.SubscribeTo(s.fwID)).Marshal()
	req, _ := http.NewRequest(http.MethodPost, m.URL(), bytes.NewReader(sub))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Accept", "application/recordio")
	req.Header.Set("Message-Accept", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/recordio" ||
		resp.Header.Get("Message-Content-Type") != "application/x-protobuf" || resp.Header.Get("Mesos-Stream-Id") == "" {
		t.Fatalf("subscribe response %d %v", resp.StatusCode, resp.Header)
	}
	frame, err := recordio.NewReader(resp.Body).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	var ev scheduler.Event
	if err := ev.Unmarshal(frame); err != nil || ev.Type != scheduler.Event_SUBSCRIBED || ev.Subscribed.FrameworkID.Value != s.fwID {
		t.Fatalf("first event %v %v", ev.Type, err)
	}
	if ev.Subscribed.GetHeartbeatIntervalSeconds() != 15 {
		t.Fatalf("heartbeat %v", ev.Subscribed.GetHeartbeatIntervalSeconds())
	}
	if r := post(revive, map[string]string{"Mesos-Stream-Id": resp.Header.Get("Mesos-Stream-Id")}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("call on the new stream: %d", r.StatusCode)
	}
	if !strings.HasPrefix(m.FrameworkID(), "framework-") {
		t.Fatalf("framework id %q", m.FrameworkID())
	}
}

func TestHeartbeat(t *testing.T) {
	m := NewMaster(t, Options{HeartbeatInterval: 5 * time.Millisecond})
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	s.next(func(e *scheduler.Event) bool { return e.Type == scheduler.Event_HEARTBEAT })
}

func TestTeardown(t *testing.T) {
	m := NewMaster(t, Options{ShutdownGracePeriod: 50 * time.Millisecond})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	o := s.nextOffer(func(mesos.Offer) bool { return true })
	ti := mesos.TaskInfo{Name: "sleep", TaskID: mesos.TaskID{Value: "sleep"}, AgentID: o.AgentID,
		Resources: []mesos.Resource{scalar("cpus", 1)}, Command: &mesos.CommandInfo{Value: strPtr("exec sleep 600")}}
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
	s.update("sleep", mesos.TASK_RUNNING)
	s.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	select {
	case <-s.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("stream open after TEARDOWN")
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Await(c, func() bool {
		av, _ := m.Agent("a1")
		return m.FrameworkID() == "" && len(m.Tasks()) == 0 && len(av.Used) == 0
	}); err != nil {
		av, _ := m.Agent("a1")
		t.Fatalf("%v: tasks %v, used %v", err, m.Tasks(), av.Used)
	}
}

func TestPartitionAware(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64}); err != nil {
		t.Fatal(err)
	}
	cli := subscribeWith(t, m, &mesos.FrameworkInfo{User: "u", Name: "pa", Capabilities: []mesos.FrameworkInfo_Capability{
		{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
	}})
	o := cli.nextOffer(func(mesos.Offer) bool { return true })
	ti := mesos.TaskInfo{Name: "s", TaskID: mesos.TaskID{Value: "s"}, AgentID: o.AgentID,
		Resources: []mesos.Resource{scalar("cpus", 1)}, Command: &mesos.CommandInfo{Value: strPtr("exec sleep 600")}}
	cli.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
	cli.update("s", mesos.TASK_RUNNING)
	if err := m.KillAgent("a1"); err != nil {
		t.Fatal(err)
	}
	cli.update("s", mesos.TASK_UNREACHABLE)
	cli.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"gone": ""})))
	cli.update("gone", mesos.TASK_UNKNOWN)
	// Unknown tasks on a named agent: by what the master knows of it.
	// (One call each: the answers to one call come in any order.)
	cli.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"on-a1": "a1"})))
	cli.update("on-a1", mesos.TASK_UNREACHABLE)
	cli.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"on-a9": "a9"})))
	cli.update("on-a9", mesos.TASK_UNKNOWN)
	if err := m.RestartAgent("a1"); err != nil {
		t.Fatal(err)
	}
	cli.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"s": "a1"})))
	cli.update("s", mesos.TASK_GONE)
}

// TestDecommissionAgent: an agent marked gone ends its tasks
// TASK_GONE_BY_OPERATOR (reason REASON_AGENT_REMOVED_BY_OPERATOR), the
// scheduler hears a FAILURE, reconciliation answers
// TASK_GONE_BY_OPERATOR, the agent offers nothing and cannot restart.
func TestDecommissionAgent(t *testing.T) {
	m := NewMaster(t, Options{})
	for _, id := range []string{"a1", "a2"} {
		if err := m.AddAgent(AgentSpec{ID: id, CPUs: 1, MemMB: 64}); err != nil {
			t.Fatal(err)
		}
	}
	cli := subscribeWith(t, m, &mesos.FrameworkInfo{User: "u", Name: "pa", Capabilities: []mesos.FrameworkInfo_Capability{
		{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE},
	}})
	o := cli.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	ti := mesos.TaskInfo{Name: "s", TaskID: mesos.TaskID{Value: "s"}, AgentID: o.AgentID,
		Resources: []mesos.Resource{scalar("cpus", 1)}, Command: &mesos.CommandInfo{Value: strPtr("exec sleep 600")}}
	cli.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
	cli.update("s", mesos.TASK_RUNNING)
	if err := m.DecommissionAgent("a1"); err != nil {
		t.Fatal(err)
	}
	st := cli.update("s", mesos.TASK_GONE_BY_OPERATOR)
	if st.GetReason() != mesos.REASON_AGENT_REMOVED_BY_OPERATOR || st.GetSource() != mesos.SOURCE_MASTER {
		t.Fatalf("status %v", st)
	}
	cli.next(func(e *scheduler.Event) bool {
		return e.Type == scheduler.Event_FAILURE && e.Failure.GetAgentID().GetValue() == "a1"
	})
	cli.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"s": "a1"})))
	cli.update("s", mesos.TASK_GONE_BY_OPERATOR)
	if len(m.Tasks()) != 0 {
		t.Fatalf("tasks left: %v", m.Tasks())
	}
	if err := m.RestartAgent("a1"); !errors.Is(err, ErrAgentGone) {
		t.Fatalf("RestartAgent of a gone agent: %v", err)
	}
	for _, ov := range m.Offers() {
		if ov.AgentID == "a1" {
			t.Fatalf("the gone agent offers: %+v", ov)
		}
	}
}

// TestSecretEnvironment: an environment variable of type SECRET is
// resolved by the agent as a secret resolver would (a REFERENCE from the
// store, a VALUE from its data) and shows unresolved in the task's
// CommandInfo; a reference the store lacks fails the launch
// (TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED), and a SECRET variable
// with a value is refused by the master's validation (TASK_ERROR).
func TestSecretEnvironment(t *testing.T) {
	const stored = "from-the-store"
	m := NewMaster(t, Options{Secrets: map[string]string{"app/keys": stored}})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeJSON)
	secretType := mesos.Environment_Variable_SECRET
	ref := func(name string) mesos.Environment_Variable {
		return mesos.Environment_Variable{Name: "KEYS", Type: &secretType,
			Secret: &mesos.Secret{Type: mesos.Secret_REFERENCE, Reference: &mesos.Secret_Reference{Name: name}}}
	}
	launch := func(id string, vars ...mesos.Environment_Variable) {
		o := s.nextOffer(func(mesos.Offer) bool { return true })
		ti := mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
			Resources: []mesos.Resource{scalar("cpus", 1)},
			Command: &mesos.CommandInfo{Value: strPtr(`printf '%s|%s' "$KEYS" "$INLINE" > env.txt`),
				Environment: &mesos.Environment{Variables: vars}}}
		s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	}

	launch("resolved", ref("app/keys"), mesos.Environment_Variable{Name: "INLINE", Type: &secretType,
		Secret: &mesos.Secret{Type: mesos.Secret_VALUE, Value: &mesos.Secret_Value{Data: []byte("by-value")}}})
	s.update("resolved", mesos.TASK_RUNNING)
	tv, ok := m.Task("resolved")
	if !ok {
		t.Fatal("task resolved is gone before its FINISHED was acknowledged")
	}
	if b, err := tv.Command.Marshal(); err != nil || bytes.Contains(b, []byte(stored)) {
		t.Fatalf("the task's CommandInfo holds the resolved secret: %+v (%v)", tv.Command, err)
	}
	s.update("resolved", mesos.TASK_FINISHED)
	if b, err := os.ReadFile(filepath.Join(tv.Sandbox, "env.txt")); err != nil || string(b) != stored+"|by-value" {
		t.Fatalf("the task's environment: %q, %v", b, err)
	}

	launch("unresolved", ref("app/other"))
	if st := s.update("unresolved", mesos.TASK_FAILED); st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), "app/other") {
		t.Fatalf("an unresolvable reference: %+v", st)
	}
	m.SetSecret("app/other", "added")
	launch("added", ref("app/other"))
	s.update("added", mesos.TASK_RUNNING)

	bad := ref("app/keys")
	bad.Value = strPtr("plain")
	launch("invalid", bad)
	if st := s.update("invalid", mesos.TASK_ERROR); st.GetReason() != mesos.REASON_TASK_INVALID {
		t.Fatalf("a SECRET variable with a value: %+v", st)
	}
}

// TestRemovedFrameworkSubscribes: a framework the master removed gets,
// on SUBSCRIBE with its old id, a stream with one ERROR event ("Framework
// has been removed") that then ends; a new framework (no id) is welcome
// and finds the old reservations.
func TestRemovedFrameworkSubscribes(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64, Extra: []mesos.Resource{reserve(scalar("cpus", 0.5), "node-0")}}); err != nil {
		t.Fatal(err)
	}
	old := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	if err := m.RemoveFramework(m.FrameworkID()); err != nil {
		t.Fatal(err)
	}
	if m.FrameworkID() != "" {
		t.Fatalf("framework %q after its removal", m.FrameworkID())
	}
	info := &mesos.FrameworkInfo{User: "sluice", Name: "sluice", Role: strPtr("sluice"), ID: &mesos.FrameworkID{Value: old.fwID}}
	caller := httpsched.NewCaller(httpcli.New(httpcli.Endpoint(m.URL())))
	resp, err := caller.Call(ctx(t), calls.Subscribe(info).With(calls.SubscribeTo(old.fwID)))
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer resp.Close()
	ev := new(scheduler.Event)
	if err := resp.Decode(ev); err != nil || ev.Type != scheduler.Event_ERROR || ev.Error.GetMessage() != FrameworkRemovedMessage {
		t.Fatalf("first event %v, %v; want ERROR %q", ev, err, FrameworkRemovedMessage)
	}
	if err := resp.Decode(new(scheduler.Event)); err == nil {
		t.Fatal("the stream goes on after the ERROR")
	}
	if m.FrameworkID() != "" {
		t.Fatalf("the removed framework is back as %q", m.FrameworkID())
	}
	fresh := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	if fresh.fwID == old.fwID {
		t.Fatalf("a new framework got the removed id %q", fresh.fwID)
	}
	fresh.nextOffer(func(o mesos.Offer) bool {
		for _, r := range o.Resources {
			if r.GetReservation() != nil || len(r.Reservations) > 0 {
				return true
			}
		}
		return false
	})
}
