package mesostest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

var (
	// ErrMediaType: a request's Content-Type or Accept is not one the v1
	// API speaks (answered with 406 Not Acceptable / 415).
	ErrMediaType = errors.New("mesostest: unsupported media type")
	// ErrNoAgent: no simulated agent has that id.
	ErrNoAgent = errors.New("mesostest: no such agent")
	// ErrAgentGone: the agent was marked gone (DecommissionAgent).
	ErrAgentGone = errors.New("mesostest: agent marked gone")
	// ErrNoOffer: no outstanding offer has that id.
	ErrNoOffer = errors.New("mesostest: no such offer")
	// ErrNoTask: no live task has that id.
	ErrNoTask = errors.New("mesostest: no such task")
	// ErrAgentExists: AddAgent was given an id already in use.
	ErrAgentExists = errors.New("mesostest: agent already exists")
	// ErrNoFramework: no registered framework has that id.
	ErrNoFramework = errors.New("mesostest: no such framework")
)

// Options tune a Master. The zero value gives Mesos' own defaults except
// where a test needs speed (noted per field).
type Options struct {
	// HeartbeatInterval is announced in SUBSCRIBED and is the period of
	// HEARTBEAT events. Default 15s (Mesos' default).
	HeartbeatInterval time.Duration
	// StatusRetryInterval is how long an agent waits for the
	// scheduler's ACKNOWLEDGE before it sends a status update again.
	// Default 10s (Mesos' first retry).
	StatusRetryInterval time.Duration
	// AllocationInterval is the period of the background allocation
	// pass that makes offers once filters expire. Offers are also made
	// at once whenever resources free up, a scheduler subscribes or
	// revives, or an agent is added. Default 100ms (Mesos: 1s).
	AllocationInterval time.Duration
	// Now is the clock for offer filters (refuse_seconds) and status
	// retries. Default time.Now. A test that wants simulated time gives
	// its own clock and calls Master.Allocate after advancing it.
	Now func() time.Time
	// Dir holds the agents' sandboxes and persistent volumes. Default: a
	// fresh temporary directory removed by Close.
	Dir string
	// ShutdownGracePeriod is how long an executor has after SHUTDOWN
	// before its process is killed, and MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD.
	// Default 2s.
	ShutdownGracePeriod time.Duration
	// Secrets is the agents' secret store (SetSecret adds to it), what a
	// secret resolver module (DC/OS's) reads: an environment variable of type SECRET whose
	// Secret is a REFERENCE to NAME (with an empty key) gets
	// Secrets[NAME], one with key KEY gets Secrets[NAME+"#"+KEY]. A
	// reference not in it fails the launch (TASK_FAILED,
	// REASON_CONTAINER_LAUNCH_FAILED), as an agent whose resolver cannot
	// resolve it does.
	Secrets map[string]string
	// Auth makes the master and agents require authentication (auth.go).
	Auth Auth
	// Region and Zone are the master's fault domain (Mesos' --domain),
	// given in SUBSCRIBED's master_info; agents of another region are
	// offered only to REGION_AWARE frameworks. Default none: then no
	// agent may have a domain.
	Region, Zone string
}

// Master is a fake Mesos master with simulated agents. All methods are
// safe for concurrent use.
type Master struct {
	opts   Options
	srv    *httptest.Server
	ownDir bool
	stop   chan struct{}
	wg     sync.WaitGroup
	auth   *authState // Options.Auth (auth.go)

	mu struct {
		sync.Mutex
		fws       map[string]*framework // registered frameworks by id
		fwOrder   []string              // their ids in the order registered
		rr        int                   // allocation passes made, to rotate who is offered first
		removed   map[string]bool       // ids of frameworks torn down
		agents    map[string]*agent
		order     []string // agent ids in the order added
		offers    map[string]*offer
		tasks     map[string]*task // by taskKey(framework id, task id)
		completed []TaskView       // terminal tasks whose last update was acknowledged
		calls     []*scheduler.Call
		execCalls []ExecCall
		opErrors  []string
		warnings  []string // what Mesos would log as a warning (launchcheck.go)
		nextID    int
		changed   chan struct{} // closed and replaced on every change
		closed    bool
	}
}

type framework struct {
	id             string
	info           mesos.FrameworkInfo
	stream         *stream // nil while disconnected
	suppressed     bool
	filters        []offerFilter
	partitionAware bool
}

type offerFilter struct {
	agentID   string
	resources mesos.Resources
	until     time.Time
}

type offer struct {
	id        string
	fwID      string
	agentID   string
	resources mesos.Resources
}

// NewMaster starts a fake master on 127.0.0.1 and registers its Close
// with tb.Cleanup.
func NewMaster(tb testing.TB, opts Options) *Master {
	tb.Helper()
	m, err := Start(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Close)
	return m
}

// Start starts a fake master on 127.0.0.1 (for use outside tests, e.g.
// a development harness). The caller must Close it.
func Start(opts Options) (*Master, error) {
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 15 * time.Second
	}
	if opts.StatusRetryInterval <= 0 {
		opts.StatusRetryInterval = 10 * time.Second
	}
	if opts.AllocationInterval <= 0 {
		opts.AllocationInterval = 100 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ShutdownGracePeriod <= 0 {
		opts.ShutdownGracePeriod = 2 * time.Second
	}
	m := &Master{opts: opts, stop: make(chan struct{})}
	if m.opts.Dir == "" {
		d, err := os.MkdirTemp("", "mesostest-")
		if err != nil {
			return nil, fmt.Errorf("mesostest: %w", err)
		}
		m.opts.Dir, m.ownDir = d, true
	}
	m.mu.agents = map[string]*agent{}
	m.mu.offers = map[string]*offer{}
	m.mu.tasks = map[string]*task{}
	m.mu.fws = map[string]*framework{}
	m.mu.changed = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/scheduler", m.serveScheduler)
	if err := m.startAuth(mux); err != nil {
		return nil, err
	}
	m.srv = httptest.NewServer(mux) // listens on 127.0.0.1
	m.wg.Add(1)
	go m.ticker()
	return m, nil
}

// SetSecret puts a secret in the agents' secret store (Options.Secrets),
// as an operator does with the store's own tools; name is "NAME" or
// "NAME#KEY". Launches from then on resolve references to it.
func (m *Master) SetSecret(name, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	secrets := make(map[string]string, len(m.opts.Secrets)+1)
	for k, v := range m.opts.Secrets {
		secrets[k] = v
	}
	secrets[name] = value
	m.opts.Secrets = secrets
}

// URL is the scheduler endpoint, http://127.0.0.1:PORT/api/v1/scheduler.
func (m *Master) URL() string { return m.srv.URL + "/api/v1/scheduler" }

// Close kills every task's process, ends every stream and stops the
// servers. It is idempotent.
func (m *Master) Close() {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return
	}
	m.mu.closed = true
	var procs []*executorRun
	var servers []*httptest.Server
	for _, id := range m.mu.order {
		a := m.mu.agents[id]
		for _, er := range a.executors {
			procs = append(procs, er)
		}
		servers = append(servers, a.srv)
	}
	for _, fw := range m.mu.fws {
		if fw.stream != nil {
			fw.stream.close()
		}
	}
	m.mu.Unlock()
	close(m.stop)
	for _, er := range procs {
		er.terminate(true)
	}
	for _, er := range procs {
		<-er.exitedCh
	}
	m.srv.CloseClientConnections()
	m.srv.Close()
	for _, s := range servers {
		s.CloseClientConnections()
		s.Close()
	}
	m.wg.Wait()
	if m.ownDir {
		os.RemoveAll(m.opts.Dir)
	}
}

// ticker runs the periodic allocation pass and status update retries.
func (m *Master) ticker() {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.AllocationInterval)
	defer t.Stop()
	hb := time.NewTicker(m.opts.HeartbeatInterval)
	defer hb.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-hb.C:
			m.mu.Lock()
			for _, fw := range m.mu.fws {
				if fw.stream != nil {
					fw.stream.send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
				}
			}
			m.mu.Unlock()
		case <-t.C:
			m.mu.Lock()
			m.retryUpdatesLocked(nil, false)
			m.allocateLocked()
			m.mu.Unlock()
		}
	}
}

// Allocate runs one allocation pass now: every agent's free resources
// that no filter covers are offered to a subscribed, unsuppressed
// framework.
func (m *Master) Allocate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allocateLocked()
}

// ResendUnacknowledged sends every task's oldest unacknowledged status
// update again now, as an agent does when its retry timer fires.
func (m *Master) ResendUnacknowledged() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retryUpdatesLocked(nil, true)
}

func (m *Master) newIDLocked(prefix string) string {
	m.mu.nextID++
	return fmt.Sprintf("%s-%04d", prefix, m.mu.nextID)
}

func (m *Master) changedLocked() {
	close(m.mu.changed)
	m.mu.changed = make(chan struct{})
}

func newUUID() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}

func newStreamID() string {
	b := newUUID()
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ---- scheduler endpoint ----

func (m *Master) serveScheduler(w http.ResponseWriter, r *http.Request) {
	call := new(scheduler.Call)
	_, out, ok := readCall(w, r, call)
	if !ok {
		return
	}
	if call.Type == scheduler.Call_UNKNOWN {
		http.Error(w, "Expecting 'type' to be present", http.StatusBadRequest)
		return
	}
	if !m.authenticateScheduler(w, r, call) {
		return
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		m.subscribe(w, r, call, out)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.calls = append(m.mu.calls, call)
	// Real Mesos checks in this order: framework known (400), connected
	// (403), Mesos-Stream-Id present and matching (400).
	fw := m.mu.fws[call.GetFrameworkID().GetValue()]
	if fw == nil {
		http.Error(w, "Framework cannot be found", http.StatusBadRequest)
		return
	}
	if fw.stream == nil {
		http.Error(w, "Framework is not subscribed", http.StatusForbidden)
		return
	}
	sid := r.Header.Get("Mesos-Stream-Id")
	if sid == "" {
		http.Error(w, "All non-subscribe calls should include the 'Mesos-Stream-Id' header", http.StatusBadRequest)
		return
	}
	if sid != fw.stream.id {
		http.Error(w, "The stream ID '"+sid+"' included in this request didn't match the stream ID currently associated with framework ID "+fw.id, http.StatusBadRequest)
		return
	}
	if err := m.dispatchLocked(fw, call); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.changedLocked()
	w.WriteHeader(http.StatusAccepted)
}

func (m *Master) subscribe(w http.ResponseWriter, r *http.Request, call *scheduler.Call, out wireFormat) {
	info := call.GetSubscribe().GetFrameworkInfo()
	if info == nil {
		http.Error(w, "Expecting 'subscribe.framework_info' to be present", http.StatusBadRequest)
		return
	}
	if call.FrameworkID != nil && (info.ID == nil || info.ID.Value != call.FrameworkID.Value) {
		http.Error(w, "'framework_id' differs from 'subscribe.framework_info.id'", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.mu.calls = append(m.mu.calls, call)
	refused := ""
	if err := validateFrameworkInfo(info); err != nil {
		refused = err.Error()
	} else if id := info.GetID().GetValue(); m.mu.removed[id] {
		refused = FrameworkRemovedMessage
	}
	if refused != "" {
		// As Mesos refuses an invalid or removed framework
		// (src/master/master.cpp, validateFramework): the stream opens,
		// carries one ERROR event and ends.
		m.mu.Unlock()
		s := newStream(newStreamID())
		s.send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: refused}})
		s.close()
		w.Header().Set("Mesos-Stream-Id", s.id)
		s.serve(w, r, out, nil)
		return
	}
	// Any number of frameworks: a SUBSCRIBE with a registered id is
	// that framework's failover and touches no other.
	fw := m.mu.fws[info.GetID().GetValue()]
	if fw == nil {
		fw = &framework{}
		if info.ID != nil && info.ID.Value != "" {
			fw.id = info.ID.Value // a framework re-registering after a master failover
		} else {
			fw.id = m.newIDLocked("framework")
		}
		m.mu.fws[fw.id] = fw
		m.mu.fwOrder = append(m.mu.fwOrder, fw.id)
	} else if fw.stream != nil {
		fw.stream.send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "Framework failed over"}})
		fw.stream.close()
	}
	fw.info = *info
	fw.info.ID = &mesos.FrameworkID{Value: fw.id}
	fw.partitionAware = false
	for _, c := range info.Capabilities {
		if c.Type == mesos.FrameworkInfo_Capability_PARTITION_AWARE {
			fw.partitionAware = true
		}
	}
	fw.suppressed = false
	s := newStream(newStreamID())
	fw.stream = s
	m.dropOffersLocked(fw, false) // outstanding offers die with the old connection
	hb := m.opts.HeartbeatInterval.Seconds()
	s.send(&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID:              &mesos.FrameworkID{Value: fw.id},
		HeartbeatIntervalSeconds: &hb,
		MasterInfo:               m.masterInfo(),
	}})
	m.retryUpdatesLocked(fw, true)
	m.allocateLocked()
	m.changedLocked()
	m.mu.Unlock()

	w.Header().Set("Mesos-Stream-Id", s.id)
	s.serve(w, r, out, func() { m.schedulerGone(s) })
}

// schedulerGone runs when the scheduler's end of stream s went away.
func (m *Master) schedulerGone(s *stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, fw := range m.mu.fws {
		if fw.stream == s {
			s.close()
			fw.stream = nil
			m.dropOffersLocked(fw, false)
			m.changedLocked()
		}
	}
}

// DisconnectScheduler ends the scheduler's event stream from the
// master's side, as a master failover or a network cut does. The
// framework stays registered (its tasks keep running); every call is
// answered 403 until it subscribes again with its framework id. Other
// frameworks are not touched.
func (m *Master) DisconnectScheduler(frameworkID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.mu.fws[frameworkID]
	if fw == nil {
		return fmt.Errorf("%w: %q", ErrNoFramework, frameworkID)
	}
	if fw.stream != nil {
		fw.stream.close()
		fw.stream = nil
		m.dropOffersLocked(fw, false)
		m.changedLocked()
	}
	return nil
}

// sendToLocked sends ev on the stream of framework fwID, if it has one
// (an event for a disconnected framework is lost, as in Mesos; status
// updates are resent by the agent).
func (m *Master) sendToLocked(fwID string, ev *scheduler.Event) {
	if fw := m.mu.fws[fwID]; fw != nil && fw.stream != nil {
		fw.stream.send(ev)
	}
}

func (m *Master) dispatchLocked(fw *framework, call *scheduler.Call) error {
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.teardownLocked(fw)
	case scheduler.Call_ACCEPT:
		if call.Accept == nil {
			return errors.New("expecting 'accept' to be present")
		}
		m.acceptLocked(fw, call.Accept.OfferIDs, call.Accept.Operations, call.Accept.Filters)
	case scheduler.Call_DECLINE:
		if call.Decline == nil {
			return errors.New("expecting 'decline' to be present")
		}
		m.acceptLocked(fw, call.Decline.OfferIDs, nil, call.Decline.Filters)
	case scheduler.Call_REVIVE:
		fw.filters = nil
		fw.suppressed = false
		m.allocateLocked()
	case scheduler.Call_SUPPRESS:
		fw.suppressed = true
	case scheduler.Call_KILL:
		if call.Kill == nil {
			return errors.New("expecting 'kill' to be present")
		}
		m.killLocked(fw, call.Kill.TaskID.Value)
	case scheduler.Call_SHUTDOWN:
		if call.Shutdown == nil {
			return errors.New("expecting 'shutdown' to be present")
		}
		if a := m.mu.agents[call.Shutdown.AgentID.Value]; a != nil {
			if er := a.executors[execKey(fw.id, call.Shutdown.ExecutorID.Value)]; er != nil {
				m.shutdownExecutorLocked(er)
			}
		}
	case scheduler.Call_ACKNOWLEDGE:
		if call.Acknowledge == nil {
			return errors.New("expecting 'acknowledge' to be present")
		}
		// The master refuses the call (400) unless uuid is a UUID
		// (src/master/validation.cpp, scheduler::call::validate).
		if err := validateUUID(call.Acknowledge.UUID); err != nil {
			return fmt.Errorf("failed to validate scheduler::Call: %w", err)
		}
		m.acknowledgeLocked(fw, call.Acknowledge.TaskID.Value, call.Acknowledge.UUID)
	case scheduler.Call_RECONCILE:
		if call.Reconcile == nil {
			return errors.New("expecting 'reconcile' to be present")
		}
		m.reconcileLocked(fw, call.Reconcile.Tasks)
	case scheduler.Call_MESSAGE:
		if call.Message == nil {
			return errors.New("expecting 'message' to be present")
		}
		if a := m.mu.agents[call.Message.AgentID.Value]; a != nil && a.up {
			if er := a.executors[execKey(fw.id, call.Message.ExecutorID.Value)]; er != nil && er.stream != nil {
				er.stream.send(execEvent(execMessage(call.Message.Data)))
			}
		}
	case scheduler.Call_REQUEST:
	default:
		return fmt.Errorf("unsupported call type %v", call.Type)
	}
	return nil
}

// ---- offers ----

func (m *Master) roles(fw *framework) []string {
	if len(fw.info.Roles) > 0 {
		return fw.info.Roles
	}
	return []string{fw.info.GetRole()}
}

// allocateLocked offers each up agent's free resources. Frameworks are
// served in turn, the first one rotating with every pass (a stand-in
// for Mesos' DRF sorter): each is offered what is left of the agent
// that is unreserved or reserved to one of its roles, so a resource is
// never in two offers at once and a reservation only ever goes to a
// framework of its role.
func (m *Master) allocateLocked() {
	if m.mu.closed || len(m.mu.fwOrder) == 0 {
		return
	}
	m.mu.rr++
	now := m.opts.Now()
	n := len(m.mu.fwOrder)
	made := map[string][]mesos.Offer{}
	for _, id := range m.mu.order {
		a := m.mu.agents[id]
		if !a.up {
			continue
		}
		left := m.freeLocked(a)
		for i := 0; i < n && len(left) > 0; i++ {
			fw := m.mu.fws[m.mu.fwOrder[(m.mu.rr+i)%n]]
			if fw.stream == nil || fw.suppressed || !m.offerableLocked(fw, a) {
				continue
			}
			fw.expireFilters(now)
			var free mesos.Resources
			for _, r := range left {
				for _, role := range m.roles(fw) {
					if r.IsAllocatableTo(role) {
						free.Add1(r)
						break
					}
				}
			}
			if len(free) == 0 || fw.filtered(id, free) {
				continue
			}
			left.Subtract(free...)
			o := &offer{id: m.newIDLocked("offer"), fwID: fw.id, agentID: id, resources: free}
			m.mu.offers[o.id] = o
			made[fw.id] = append(made[fw.id], m.offerProto(fw, a, o))
		}
	}
	for _, fwID := range m.mu.fwOrder {
		if offers := made[fwID]; len(offers) > 0 {
			m.sendToLocked(fwID, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
		}
	}
	if len(made) > 0 {
		m.changedLocked()
	}
}

// expireFilters drops the decline filters that have run out by now.
func (fw *framework) expireFilters(now time.Time) {
	live := fw.filters[:0]
	for _, f := range fw.filters {
		if now.Before(f.until) {
			live = append(live, f)
		}
	}
	fw.filters = live
}

// filtered reports whether a decline filter of fw covers all of free on
// the agent.
func (fw *framework) filtered(agentID string, free mesos.Resources) bool {
	for _, f := range fw.filters {
		if f.agentID == agentID && containsAll(f.resources, free) {
			return true
		}
	}
	return false
}

func (m *Master) offerProto(fw *framework, a *agent, o *offer) mesos.Offer {
	var eids []mesos.ExecutorID
	for _, er := range a.executorsSorted() {
		if !er.exited && er.fwID == fw.id {
			eids = append(eids, mesos.ExecutorID{Value: er.id})
		}
	}
	out := mesos.Offer{
		ID:          mesos.OfferID{Value: o.id},
		FrameworkID: mesos.FrameworkID{Value: fw.id},
		AgentID:     mesos.AgentID{Value: a.id},
		Hostname:    a.hostname,
		Resources:   o.resources.Clone(),
		ExecutorIDs: eids,
	}
	a.place.describe(&out)
	return out
}

// dropOffersLocked forgets every outstanding offer to fw, sending
// RESCIND for each when rescind is set.
func (m *Master) dropOffersLocked(fw *framework, rescind bool) {
	for id, o := range m.mu.offers {
		if o.fwID == fw.id {
			m.rescindLocked(id, rescind)
		}
	}
}

func (m *Master) rescindLocked(id string, send bool) {
	o := m.mu.offers[id]
	if o == nil {
		return
	}
	delete(m.mu.offers, id)
	if send {
		m.sendToLocked(o.fwID, &scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: id}}})
	}
}

// RescindOffer withdraws an outstanding offer: the scheduler gets
// RESCIND, and the resources go back to the pool (and are offered again
// by the next allocation pass).
func (m *Master) RescindOffer(offerID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.offers[offerID] == nil {
		return fmt.Errorf("%w: %s", ErrNoOffer, offerID)
	}
	m.rescindLocked(offerID, true)
	m.changedLocked()
	return nil
}

func (m *Master) addFilterLocked(fw *framework, agentID string, rs mesos.Resources, filters *mesos.Filters) {
	if filters == nil || len(rs) == 0 {
		return
	}
	secs := filters.GetRefuseSeconds()
	if secs <= 0 {
		return
	}
	fw.filters = append(fw.filters, offerFilter{
		agentID:   agentID,
		resources: rs.Clone(),
		until:     m.opts.Now().Add(time.Duration(secs * float64(time.Second))),
	})
}

// ---- reconciliation, acknowledgement, kill ----

func (m *Master) reconcileLocked(fw *framework, list []scheduler.Call_Reconcile_Task) {
	reason := mesos.REASON_RECONCILIATION
	source := mesos.SOURCE_MASTER
	send := func(st mesos.TaskStatus) {
		st.Reason = &reason
		st.Source = &source
		st.UUID = nil
		st.Message = strPtr("Reconciliation: latest task status")
		m.sendToLocked(fw.id, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
	if len(list) == 0 {
		for _, t := range m.tasksSortedLocked() {
			if t.fwID == fw.id {
				send(t.status)
			}
		}
		return
	}
	for _, rt := range list {
		if t := m.mu.tasks[taskKey(fw.id, rt.TaskID.Value)]; t != nil {
			send(t.status)
			continue
		}
		st := mesos.TaskStatus{TaskID: rt.TaskID, State: m.unknownTaskStateLocked(fw, rt.AgentID), AgentID: rt.AgentID}
		send(st)
	}
}

// unknownTaskStateLocked is the state explicit reconciliation answers
// for a task the master does not know, by what it knows of the agent
// named (as src/master/master.cpp's reconcile does): the agent
// registered and up, TASK_GONE; down (unreachable), TASK_UNREACHABLE;
// marked gone, TASK_GONE_BY_OPERATOR; unknown or not named,
// TASK_UNKNOWN. A framework that is not PARTITION_AWARE hears TASK_LOST.
func (m *Master) unknownTaskStateLocked(fw *framework, agentID *mesos.AgentID) *mesos.TaskState {
	state := mesos.TASK_LOST
	if fw.partitionAware {
		state = mesos.TASK_UNKNOWN
		if a := m.mu.agents[agentID.GetValue()]; a != nil && agentID != nil {
			switch {
			case a.gone:
				state = mesos.TASK_GONE_BY_OPERATOR
			case a.up:
				state = mesos.TASK_GONE
			default:
				state = mesos.TASK_UNREACHABLE
			}
		}
	}
	return &state
}

func (m *Master) acknowledgeLocked(fw *framework, taskID string, uuid []byte) {
	t := m.mu.tasks[taskKey(fw.id, taskID)]
	if t == nil || len(t.pending) == 0 || string(t.pending[0].UUID) != string(uuid) {
		return
	}
	t.pending = t.pending[1:]
	if len(t.pending) > 0 {
		m.forwardHeadLocked(t)
		return
	}
	if isTerminal(t.state) {
		m.forgetTaskLocked(t)
	}
}

func (m *Master) forgetTaskLocked(t *task) {
	delete(m.mu.tasks, taskKey(t.fwID, t.info.TaskID.Value))
	m.mu.completed = append(m.mu.completed, t.view())
}

func (m *Master) killLocked(fw *framework, taskID string) {
	t := m.mu.tasks[taskKey(fw.id, taskID)]
	if t == nil || isTerminal(t.state) {
		state := mesos.TASK_LOST
		if fw.partitionAware {
			state = mesos.TASK_UNKNOWN
		}
		if t != nil {
			state = t.state
		}
		source := mesos.SOURCE_MASTER
		reason := mesos.REASON_RECONCILIATION
		m.sendToLocked(fw.id, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
			TaskID: mesos.TaskID{Value: taskID}, State: &state, Source: &source, Reason: &reason,
			Message: strPtr("Attempted to kill an unknown task"),
		}}})
		return
	}
	a := m.mu.agents[t.agentID]
	if !a.up {
		return // the kill is lost with the agent, as in Mesos
	}
	t.killRequested = true
	er := t.executor
	switch {
	case er.command:
		er.terminate(false)
	case er.stream != nil:
		er.stream.send(execEvent(execKill(t.info.TaskID)))
	default:
		// Not yet subscribed: the agent kills the task itself.
		m.agentUpdateLocked(t, t.newStatus(mesos.TASK_KILLED, mesos.SOURCE_AGENT, nil, "Killed before delivery to the executor"))
		m.maybeStopIdleExecutorLocked(er)
	}
}

// FrameworkRemovedMessage is the ERROR event's message to a framework
// that subscribes with the id of one the master removed (torn down, or
// its failover timeout passed), as Mesos words it.
const FrameworkRemovedMessage = "Framework has been removed"

// RemoveFramework removes a framework as the operator's TEARDOWN (or
// its failover timeout passing) does: its tasks and executors end, its
// stream closes, and it may never subscribe with its id again (see
// FrameworkRemovedMessage). Its reservations and volumes stay on the
// agents, as they do in Mesos (they belong to the role). Other
// frameworks are not touched.
func (m *Master) RemoveFramework(frameworkID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.mu.fws[frameworkID]
	if fw == nil {
		return fmt.Errorf("%w: %q", ErrNoFramework, frameworkID)
	}
	m.teardownLocked(fw)
	m.changedLocked()
	return nil
}

func (m *Master) teardownLocked(fw *framework) {
	if m.mu.removed == nil {
		m.mu.removed = map[string]bool{}
	}
	m.mu.removed[fw.id] = true
	for _, t := range m.tasksSortedLocked() {
		if t.fwID == fw.id {
			t.executor.agent.releaseTask(t)
			delete(m.mu.tasks, taskKey(t.fwID, t.info.TaskID.Value))
		}
	}
	for _, id := range m.mu.order {
		for _, er := range m.mu.agents[id].executors {
			if er.fwID == fw.id {
				m.shutdownExecutorLocked(er)
			}
		}
	}
	m.dropOffersLocked(fw, false)
	if fw.stream != nil {
		fw.stream.close()
	}
	delete(m.mu.fws, fw.id)
	for i, id := range m.mu.fwOrder {
		if id == fw.id {
			m.mu.fwOrder = append(m.mu.fwOrder[:i:i], m.mu.fwOrder[i+1:]...)
			break
		}
	}
}

// taskKey is a task's key in Master.mu.tasks: task ids are unique per
// framework only, as in Mesos.
func taskKey(fwID, taskID string) string { return fwID + "/" + taskID }

// execKey is an executor's key in agent.executors: executor ids are
// unique per framework on an agent, as in Mesos.
func execKey(fwID, execID string) string { return fwID + "/" + execID }

func (m *Master) tasksSortedLocked() []*task {
	ts := make([]*task, 0, len(m.mu.tasks))
	for _, t := range m.mu.tasks {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].info.TaskID.Value != ts[j].info.TaskID.Value {
			return ts[i].info.TaskID.Value < ts[j].info.TaskID.Value
		}
		return ts[i].fwID < ts[j].fwID
	})
	return ts
}

func strPtr(s string) *string { return &s }

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST,
		mesos.TASK_ERROR, mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

func sandboxPath(base, agentID, fwID, execID string, run int) string {
	return filepath.Join(base, "agents", agentID, "frameworks", fwID, "executors", execID, "runs", itoa(run))
}
