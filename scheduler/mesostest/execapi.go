package mesostest

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func execEvent(ev *executor.Event) *executor.Event { return ev }

func execLaunch(ti mesos.TaskInfo) *executor.Event {
	return &executor.Event{Type: executor.Event_LAUNCH, Launch: &executor.Event_Launch{Task: ti}}
}

func execKill(id mesos.TaskID) *executor.Event {
	return &executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: id}}
}

func execMessage(data []byte) *executor.Event {
	return &executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: data}}
}

// executorHandler serves one agent's POST /api/v1/executor.
func (m *Master) executorHandler(a *agent) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/executor", func(w http.ResponseWriter, r *http.Request) {
		call := new(executor.Call)
		_, out, ok := readCall(w, r, call)
		if !ok || !m.authenticateExecutor(w, r, a, call) {
			return
		}
		m.mu.Lock()
		if !a.up {
			m.mu.Unlock()
			http.Error(w, "Agent is recovering", http.StatusServiceUnavailable)
			return
		}
		m.recordExecCallLocked(a.id, call)
		er := a.executors[execKey(call.FrameworkID.Value, call.ExecutorID.Value)]
		if er == nil || er.exited {
			m.mu.Unlock()
			http.Error(w, "Executor not found", http.StatusBadRequest)
			return
		}
		switch call.Type {
		case executor.Call_SUBSCRIBE:
			if er.command {
				m.mu.Unlock()
				http.Error(w, "Executor is played by the agent (command task)", http.StatusBadRequest)
				return
			}
			if er.stream != nil {
				er.stream.close()
			}
			s := newStream("")
			er.stream = s
			fwInfo := mesos.FrameworkInfo{}
			if fw := m.mu.fws[er.fwID]; fw != nil {
				fwInfo = fw.info
			}
			cid := mesos.ContainerID{Value: er.id + "-" + itoa(a.runs)}
			s.send(&executor.Event{Type: executor.Event_SUBSCRIBED, Subscribed: &executor.Event_Subscribed{
				ExecutorInfo:  er.info,
				FrameworkInfo: fwInfo,
				AgentInfo:     mesos.AgentInfo{ID: &mesos.AgentID{Value: a.id}, Hostname: a.hostname, Resources: a.total.Clone()},
				ContainerID:   &cid,
			}})
			for _, ti := range er.queued {
				s.send(execLaunch(ti))
			}
			er.queued = nil
			// As a Mesos agent does, take the updates the executor sent
			// while disconnected (those it never saw, by uuid).
			if sub := call.Subscribe; sub != nil {
				for _, u := range sub.UnacknowledgedUpdates {
					st := u.Status
					t := m.mu.tasks[taskKey(er.fwID, st.TaskID.Value)]
					if t == nil || t.executor != er || len(st.UUID) == 0 || t.seen[string(st.UUID)] {
						continue
					}
					st.AgentID = &mesos.AgentID{Value: a.id}
					st.ExecutorID = &mesos.ExecutorID{Value: er.id}
					if !isTerminal(t.state) {
						t.seen[string(st.UUID)] = true
						m.agentUpdateLocked(t, st)
					}
					s.send(&executor.Event{Type: executor.Event_ACKNOWLEDGED, Acknowledged: &executor.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}})
				}
			}
			m.changedLocked()
			m.mu.Unlock()
			s.serve(w, r, out, func() {
				m.mu.Lock()
				if er.stream == s {
					s.close()
					er.stream = nil
				}
				m.mu.Unlock()
			})
			return
		case executor.Call_UPDATE:
			defer m.mu.Unlock()
			if er.stream == nil {
				http.Error(w, "Executor is not subscribed", http.StatusForbidden)
				return
			}
			if call.Update == nil {
				http.Error(w, "Expecting 'update' to be present", http.StatusBadRequest)
				return
			}
			st := call.Update.Status
			if len(st.UUID) == 0 {
				http.Error(w, "Expecting 'uuid' to be present", http.StatusBadRequest)
				return
			}
			// The agent's validation of an executor call
			// (src/common/validation.cpp, executor::call::validate): a
			// uuid that is a UUID, the call's executor id if the status
			// names one, and source SOURCE_EXECUTOR (an unset source
			// reads as SOURCE_MASTER, the enum's zero value).
			if err := validateUUID(st.UUID); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if st.ExecutorID != nil && st.ExecutorID.Value != call.ExecutorID.Value {
				http.Error(w, "ExecutorID in Call: "+call.ExecutorID.Value+" does not match ExecutorID in TaskStatus: "+st.ExecutorID.Value, http.StatusBadRequest)
				return
			}
			if st.GetSource() != mesos.SOURCE_EXECUTOR {
				http.Error(w, "Received Call from executor "+call.ExecutorID.Value+" of framework "+call.FrameworkID.Value+" with invalid source, expecting 'SOURCE_EXECUTOR'", http.StatusBadRequest)
				return
			}
			if st.GetState() == mesos.TASK_STAGING {
				http.Error(w, "Received TASK_STAGING from executor which is not allowed", http.StatusBadRequest)
				return
			}
			t := m.mu.tasks[taskKey(er.fwID, st.TaskID.Value)]
			if t == nil || t.executor != er {
				http.Error(w, "Task is not known to this executor", http.StatusBadRequest)
				return
			}
			st.AgentID = &mesos.AgentID{Value: a.id}
			st.ExecutorID = &mesos.ExecutorID{Value: er.id}
			if !isTerminal(t.state) && !t.seen[string(st.UUID)] {
				t.seen[string(st.UUID)] = true
				m.agentUpdateLocked(t, st)
			}
			er.stream.send(&executor.Event{Type: executor.Event_ACKNOWLEDGED, Acknowledged: &executor.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}})
			w.WriteHeader(http.StatusAccepted)
		case executor.Call_MESSAGE:
			defer m.mu.Unlock()
			if call.Message == nil {
				http.Error(w, "Expecting 'message' to be present", http.StatusBadRequest)
				return
			}
			m.sendToLocked(er.fwID, &scheduler.Event{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{
				AgentID: mesos.AgentID{Value: a.id}, ExecutorID: mesos.ExecutorID{Value: er.id}, Data: call.Message.Data,
			}})
			w.WriteHeader(http.StatusAccepted)
		case executor.Call_HEARTBEAT:
			m.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		default:
			m.mu.Unlock()
			http.Error(w, "Expecting 'type' to be present", http.StatusBadRequest)
		}
	})
	return mux
}
