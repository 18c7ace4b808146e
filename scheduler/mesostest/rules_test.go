package mesostest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	ecalls "github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// TestRuleReserveRole: a framework may reserve only for its own roles.
func TestRuleReserveRole(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf) // role "sluice"
	o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	s.call(calls.Accept(calls.OfferOperations{calls.OpReserve(reserveFor(scalar("cpus", 1), "other", "p"))}.WithOffers(o.ID)))
	if errs := strings.Join(m.OperationErrors(), "\n"); !strings.Contains(errs, `a RESERVE for role "other"`) {
		t.Fatalf("operation errors %q, want the RESERVE for role other refused", errs)
	}
	if av, _ := m.Agent("a1"); len(av.Reserved) != 0 {
		t.Fatalf("reserved %v after a refused RESERVE", av.Reserved)
	}
	// Its own role is fine.
	o = s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	s.call(calls.Accept(calls.OfferOperations{calls.OpReserve(reserveFor(scalar("cpus", 1), "sluice", "p"))}.WithOffers(o.ID)))
	if av, _ := m.Agent("a1"); len(av.Roles["sluice"]) != 1 || len(m.OperationErrors()) != 1 {
		t.Fatalf("reserved %v, errors %v: want one cpu reserved to sluice", av.Roles, m.OperationErrors())
	}
}

// TestRuleCreateVolume: the master refuses a volume on unreserved disk,
// with a persistence id Mesos refuses, with an id already used on the
// agent for the role, or on another disk than the reserved one.
func TestRuleCreateVolume(t *testing.T) {
	const path, mount = mesos.Resource_DiskInfo_Source_PATH, mesos.Resource_DiskInfo_Source_MOUNT
	for _, tc := range []struct {
		name    string
		first   mesos.Resource // a volume created before, if Name is set
		reserve mesos.Resource
		volume  mesos.Resource
		wantErr string
	}{
		{name: "on reserved disk", reserve: reserve(scalar("disk", 100), "p"), volume: volume(reserve(scalar("disk", 100), "p"), "v1", "data")},
		{name: "on unreserved disk", volume: volume(scalar("disk", 100), "v1", "data"), wantErr: "cannot be created from unreserved resources"},
		{name: "persistence id with a slash", reserve: reserve(scalar("disk", 100), "p"), volume: volume(reserve(scalar("disk", 100), "p"), "a/b", "data"), wantErr: "invalid persistence ID"},
		{name: "persistence id ..", reserve: reserve(scalar("disk", 100), "p"), volume: volume(reserve(scalar("disk", 100), "p"), "..", "data"), wantErr: "'..' is disallowed"},
		{name: "persistence id in use for the role", first: volume(reserve(scalar("disk", 100), "p"), "v1", "data"),
			reserve: reserve(scalar("disk", 100), "p"), volume: volume(reserve(scalar("disk", 100), "p"), "v1", "data"), wantErr: `persistence id "v1" already in use on agent a1 for role "sluice"`},
		{name: "volume on the MOUNT disk, PATH disk reserved", reserve: reserve(onDisk(scalar("disk", 300), path, "/srv/p"), "p"),
			volume: onDisk(volume(reserve(scalar("disk", 500), "p"), "v1", "data"), mount, "/mnt/m"), wantErr: "CREATE: resources not in the offer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMaster(t, Options{})
			if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000, Disks: []AgentDisk{
				{Type: path, Root: "/srv/p", SizeMB: 800}, {Type: mount, Root: "/mnt/m", SizeMB: 500},
			}}); err != nil {
				t.Fatal(err)
			}
			s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
			if tc.first.Name != "" {
				o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
				s.call(calls.Accept(calls.OfferOperations{calls.OpReserve(withoutVolume(tc.first)), calls.OpCreate(tc.first)}.WithOffers(o.ID)))
				if errs := m.OperationErrors(); len(errs) != 0 {
					t.Fatalf("first volume: %v", errs)
				}
			}
			o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
			ops := calls.OfferOperations{}
			if tc.reserve.Name != "" {
				ops = append(ops, calls.OpReserve(tc.reserve))
			}
			ops = append(ops, calls.OpCreate(tc.volume))
			s.call(calls.Accept(ops.WithOffers(o.ID)))
			errs := strings.Join(m.OperationErrors(), "\n")
			if tc.wantErr == "" && errs != "" || !strings.Contains(errs, tc.wantErr) {
				t.Fatalf("operation errors %q, want %q", errs, tc.wantErr)
			}
			av, _ := m.Agent("a1")
			want := 0
			if tc.first.Name != "" {
				want++
			}
			if tc.wantErr == "" {
				want++
			}
			if len(av.Volumes) != want {
				t.Fatalf("volumes %+v, want %d", av.Volumes, want)
			}
		})
	}
}

// TestRuleIDs: ids are checked as Mesos' validateID does: a task or
// executor id it refuses is TASK_ERROR, a framework id given back in
// SUBSCRIBE an ERROR event; spaces and inner dots are fine.
func TestRuleIDs(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 16, MemMB: 4096, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	res := mesos.Resources{scalar("cpus", 0.1), scalar("mem", 16)}
	for _, tc := range []struct {
		id, execID string
		want       mesos.TaskState
	}{
		{"", "e0", mesos.TASK_ERROR},
		{".", "e1", mesos.TASK_ERROR},
		{"..", "e2", mesos.TASK_ERROR},
		{"a/b", "e3", mesos.TASK_ERROR},
		{`a\b`, "e4", mesos.TASK_ERROR},
		{"a\tb", "e5", mesos.TASK_ERROR},
		{strings.Repeat("x", 256), "e6", mesos.TASK_ERROR},
		{"good", "exec/bad", mesos.TASK_ERROR},
		{"with space.and dot", "e8", mesos.TASK_RUNNING},
	} {
		o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
		ti := executorTask(tc.id, "a1", res, "")
		ti.Executor.ExecutorID.Value = tc.execID
		s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
		st := s.next(func(e *scheduler.Event) bool {
			return e.Type == scheduler.Event_UPDATE && e.Update.Status.TaskID.Value == tc.id
		}).Update.Status
		if st.GetState() != tc.want {
			t.Fatalf("task %q executor %q: %v (%s), want %v", tc.id, tc.execID, st.GetState(), st.GetMessage(), tc.want)
		}
		if tc.want == mesos.TASK_ERROR && (st.GetReason() != mesos.REASON_TASK_INVALID || !strings.Contains(st.GetMessage(), "ID is invalid")) {
			t.Fatalf("task %q: reason %v message %q", tc.id, st.GetReason(), st.GetMessage())
		}
	}

	info := &mesos.FrameworkInfo{User: "u", Name: "bad", Role: strPtr("sluice"), ID: &mesos.FrameworkID{Value: "fw/1"}}
	bad := subscribeCodecRaw(t, m, info)
	if bad.Type != scheduler.Event_ERROR || !strings.Contains(bad.Error.Message, `"fw/1" contains invalid characters`) {
		t.Fatalf("SUBSCRIBE with framework id fw/1: %+v", bad)
	}
	info = &mesos.FrameworkInfo{User: "u", Name: "bad", Role: strPtr("r"), Roles: []string{"r"}}
	if bad := subscribeCodecRaw(t, m, info); bad.Type != scheduler.Event_ERROR || !strings.Contains(bad.Error.Message, "not MULTI_ROLE capable") {
		t.Fatalf("SUBSCRIBE with roles but no MULTI_ROLE: %+v", bad)
	}
}

// subscribeCodecRaw subscribes and returns the first event (SUBSCRIBED
// or ERROR).
func subscribeCodecRaw(t *testing.T, m *Master, info *mesos.FrameworkInfo) *scheduler.Event {
	t.Helper()
	cli := httpcli.New(httpcli.Endpoint(m.URL()), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]))
	resp, err := cli.Do(calls.Subscribe(info))
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer resp.Close()
	ev := new(scheduler.Event)
	if err := resp.Decode(ev); err != nil {
		t.Fatalf("first event: %v", err)
	}
	return ev
}

// TestRuleUUIDs: an ACKNOWLEDGE whose uuid is not a UUID is answered
// 400 by the master, an executor UPDATE whose status uuid is not one
// (or whose source is not SOURCE_EXECUTOR) 400 by the agent.
func TestRuleUUIDs(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	s.autoAck = false
	o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
	s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(executorTask("t", "a1", mesos.Resources{scalar("cpus", 1), scalar("mem", 64)}, ""))}.WithOffers(o.ID)))
	running := s.update("t", mesos.TASK_RUNNING)
	for _, uuid := range [][]byte{[]byte("not-a-uuid"), make([]byte, 16), bytes.Repeat([]byte{0xff}, 16)} {
		code, body := postCall(t, m, s.fwID, calls.Acknowledge("a1", "t", uuid).With(calls.Framework(s.fwID)))
		if code != http.StatusBadRequest || !strings.Contains(body, "not a valid UUID") {
			t.Fatalf("ACKNOWLEDGE with uuid %q: %d %s, want 400 not a valid UUID", uuid, code, body)
		}
	}
	if tv, _ := m.Task("t"); tv.Unacknowledged != 1 {
		t.Fatalf("unacknowledged %d after refused acknowledgements, want 1", tv.Unacknowledged)
	}
	s.call(calls.Acknowledge("a1", "t", running.UUID))
	awaitCond(t, m, "acknowledged", func() bool { tv, _ := m.Task("t"); return tv.Unacknowledged == 0 })

	// The executor's endpoint, called as the executor.
	m.mu.Lock()
	url := m.mu.agents["a1"].srv.URL + "/api/v1/executor"
	m.mu.Unlock()
	cli := httpcli.New(httpcli.Endpoint(url), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]))
	update := func(st mesos.TaskStatus) error {
		resp, err := cli.Do(ecalls.Update(st).With(ecalls.Framework(s.fwID), ecalls.Executor("exec-t")))
		if resp != nil {
			resp.Close()
		}
		return err
	}
	state := mesos.TASK_RUNNING
	for _, tc := range []struct {
		st   mesos.TaskStatus
		want string
	}{
		{mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: &state, Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("t-1-123")}, "not a valid UUID"},
		{mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: &state, UUID: newUUID()}, "invalid source, expecting 'SOURCE_EXECUTOR'"},
		{mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: &state, Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: newUUID(), ExecutorID: &mesos.ExecutorID{Value: "other"}}, "does not match ExecutorID"},
	} {
		err := update(tc.st)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("UPDATE %v: %v, want 400 %q", tc.st, err, tc.want)
		}
	}
	if calls := len(m.ExecutorCalls()); calls == 0 {
		t.Fatal("no executor calls recorded")
	}
	if err := validateUUID(newUUID()); err != nil {
		t.Fatalf("the fake's own uuid: %v", err)
	}
	if !errors.Is(validateUUID([]byte("short")), errUUID) {
		t.Fatal("validateUUID(short) is not errUUID")
	}
}

// postCall sends a scheduler call on framework fwID's stream as plain
// HTTP and returns the status code and body.
func postCall(t *testing.T, m *Master, fwID string, c *scheduler.Call) (int, string) {
	t.Helper()
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	sid := m.mu.fws[fwID].stream.id
	m.mu.Unlock()
	req, err := http.NewRequest(http.MethodPost, m.URL(), bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Mesos-Stream-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestAgentEnvironment: a command task starts with its agent's
// environment, what Mesos adds and its CommandInfo's variables, and
// nothing of the test process's.
func TestAgentEnvironment(t *testing.T) {
	t.Setenv("MESOSTEST_LEAK", "from-the-test-process")
	m := NewMaster(t, Options{})
	for _, spec := range []AgentSpec{
		{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000},
		{ID: "a2", CPUs: 4, MemMB: 1024, DiskMB: 1000, Env: []string{"PATH=/usr/bin:/bin", "AGENT_ONLY=a2"}},
	} {
		if err := m.AddAgent(spec); err != nil {
			t.Fatal(err)
		}
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	for _, agent := range []string{"a1", "a2"} {
		o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == agent })
		id := "env-" + agent
		s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(mesos.TaskInfo{
			Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: mesos.AgentID{Value: agent},
			Resources: mesos.Resources{scalar("cpus", 0.1), scalar("mem", 16)},
			Command:   &mesos.CommandInfo{Value: strPtr("env"), Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "FROM_TASK", Value: strPtr("yes")}}}},
		})}.WithOffers(o.ID)))
		s.update(id, mesos.TASK_FINISHED)
	}
	for _, tv := range m.CompletedTasks() {
		b, err := os.ReadFile(filepath.Join(tv.Sandbox, "stdout"))
		if err != nil {
			t.Fatal(err)
		}
		env := "\n" + string(b)
		for _, want := range []string{"\nFROM_TASK=yes\n", "\nMESOS_TASK_ID=" + tv.ID + "\n", "\nMESOS_AGENT_ID=" + tv.AgentID + "\n"} {
			if !strings.Contains(env, want) {
				t.Fatalf("%s's environment lacks %q:%s", tv.ID, strings.TrimSpace(want), env)
			}
		}
		if strings.Contains(env, "MESOSTEST_LEAK") {
			t.Fatalf("%s's environment has the test process's variable:%s", tv.ID, env)
		}
		if tv.AgentID == "a2" && (!strings.Contains(env, "\nAGENT_ONLY=a2\n") || !strings.Contains(env, "\nPATH=/usr/bin:/bin\n")) {
			t.Fatalf("a2's task lacks the agent's environment:%s", env)
		}
		if tv.AgentID == "a1" && !strings.Contains(env, "\n"+DefaultAgentEnv()[0]+"\n") {
			t.Fatalf("a1's task lacks the default agent PATH:%s", env)
		}
	}
	if n := len(m.CompletedTasks()); n != 2 {
		t.Fatalf("%d completed tasks, want 2", n)
	}
}
