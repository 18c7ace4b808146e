package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/session"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Config configures a Member.
type Config struct {
	// Store is the session to start with (a *zkstore.Store). The Member
	// owns it (and every session Reopen returns): Close closes it.
	Store cluster.Session
	// Reopen opens a new session after the current one expired. If nil,
	// the Member registers again on the same store (which reconnects with
	// a new session), but notices no later expiry.
	Reopen func(ctx context.Context) (cluster.Session, error)
	// ID is the node's id, as the assignment names it; it must stay the
	// same across restarts of the node on its data directory.
	ID string
	// Addr is the address clients reach the node at.
	Addr string
	// Node is the node whose containers the Member manages. It should be
	// opened with no containers (Config.Hosted empty, not nil).
	Node *node.Node
	// Logger; discarded if nil.
	Logger logrus.FieldLogger
}

// Member keeps a node registered and hosting what the assignment gives it.
type Member struct {
	cfg     Config
	l       logrus.FieldLogger
	started time.Time
	keeper  *session.Keeper
	// life ends at Close (or a failed Start): the assignment's watches
	// last as long as it and their session.
	life   context.Context
	cancel context.CancelFunc

	// events and last are the current session's watch and what was
	// applied: set by join, used by follow (the keeper calls them one
	// after the other).
	events <-chan cluster.Event
	last   applied

	mu     sync.Mutex
	failed map[int]error // containers assigned here that failed to open
}

// retry bounds for registration (and opening a new session) and failed
// reconciliations.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = 2 * time.Second
)

// Start registers the node, reads the assignment and hosts its containers
// (a container that fails to open is retried in the background), then
// follows the assignment until Close. ctx bounds Start only; it fails if
// ctx ends before the node is registered (say, while the registration of
// its previous session has not expired yet); cfg.Store is then left open
// for the caller to close.
func Start(ctx context.Context, cfg Config) (*Member, error) {
	if cfg.Store == nil || cfg.Node == nil || cfg.ID == "" {
		return nil, errors.New("membership: Config needs Store, Node and ID")
	}
	// The API's rule for node ids, so that every node that can register
	// can also be drained through the API.
	if err := api.ValidateNodeID(cfg.ID); err != nil {
		return nil, fmt.Errorf("membership: %w", err)
	}
	if err := cluster.CheckKey(layout.NodeKey(cfg.ID)); err != nil {
		return nil, fmt.Errorf("membership: node id %q: %w", cfg.ID, err)
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	life, cancel := context.WithCancel(context.Background())
	m := &Member{
		cfg: cfg, l: cfg.Logger.WithField("node", cfg.ID), started: time.Now().UTC(),
		life: life, cancel: cancel,
	}
	k, err := session.Start(ctx, session.Config{
		Session: cfg.Store, Open: cfg.Reopen, Join: m.join, Follow: m.follow,
		MinRetry: minRetry, MaxRetry: maxRetry, Logger: m.l,
	})
	if err != nil {
		cancel()
		return nil, err
	}
	m.keeper = k
	return m, nil
}

// Close stops following the assignment, fences every container of the node
// and closes the session (which deletes the registration). It leaves the
// node open.
func (m *Member) Close() error {
	err := m.keeper.Close() // follow fences every container before the session closes
	m.cancel()
	m.cfg.Node.FenceAll()
	return err
}

// Failed returns the containers the assignment gives the node that it
// failed to host at the last attempt, with the reason (such as
// container.ErrStaleEpoch: the container's directory records a higher
// epoch). They are retried with backoff.
func (m *Member) Failed() map[int]error {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[int]error, len(m.failed))
	for id, err := range m.failed {
		out[id] = err
	}
	return out
}

// Store returns the current session.
func (m *Member) Store() cluster.Session { return m.keeper.Session() }

// applied is the assignment last reconciled with, kept to retry failed
// actions and to skip stale events.
type applied struct {
	value   []byte
	missing bool
	version cluster.Version // its Mzxid; Mzxids grow, so an event below it is stale
	ok      bool            // every action succeeded

	stopWatch context.CancelFunc // ends the watch join set
}

// join registers the node on st, watches the assignment (for as long as
// the Member lives, or until follow ends), reads it and reconciles once.
// A registration of this node id that still exists (an earlier session
// not yet expired, or another node with this id) fails with
// cluster.ErrExists: the keeper retries it.
func (m *Member) join(ctx context.Context, st cluster.Session) error {
	events, a, err := m.joinOn(ctx, st)
	if err != nil {
		return err
	}
	m.events, m.last = events, a
	return nil
}

func (m *Member) joinOn(ctx context.Context, st cluster.Session) (<-chan cluster.Event, applied, error) {
	reg := layout.NodeRegistration{ID: m.cfg.ID, Addr: m.cfg.Addr, Started: m.started, Tier2: m.cfg.Node.HasTier2()}.Encode()
	if err := st.Register(ctx, layout.NodeKey(m.cfg.ID), reg); err != nil {
		return nil, applied{}, fmt.Errorf("membership: register %s: %w", layout.NodeKey(m.cfg.ID), err)
	}
	m.l.WithField("addr", m.cfg.Addr).Info("membership: registered")
	// Wake the leader: its watch on the parent sees this write (watches
	// report no child changes), so a new node gets containers at once.
	if _, err := st.Put(ctx, layout.NodesKey, []byte(m.cfg.ID)); err != nil {
		m.l.WithError(err).Warn("membership: could not signal the registration; the leader sees it at its next tick")
	}
	watchCtx, stopWatch := context.WithCancel(m.life)
	events, err := st.Watch(watchCtx, layout.AssignmentKey)
	if err != nil {
		stopWatch()
		return nil, applied{}, fmt.Errorf("membership: watch %s: %w", layout.AssignmentKey, err)
	}
	kv, err := st.Get(ctx, layout.AssignmentKey)
	var a applied
	switch {
	case errors.Is(err, cluster.ErrNotFound):
		a = applied{missing: true}
	case err != nil:
		stopWatch()
		return nil, applied{}, fmt.Errorf("membership: read %s: %w", layout.AssignmentKey, err)
	default:
		a = applied{value: kv.Value, version: kv.Version}
	}
	a.ok = m.apply(st, a.value, a.missing)
	a.stopWatch = stopWatch
	return events, a, nil
}

// follow follows the assignment on st until ctx ends: then (the session
// expired, or Close) it fences every container of the node, so it takes
// no writes without a session, and stops the watch.
func (m *Member) follow(ctx context.Context, st cluster.Session) {
	events, last := m.events, m.last
	defer func() { last.stopWatch() }()
	// Failed reconciliations are retried from minRetry doubling to 30 s.
	retryWaits := retry.NewBackoff(minRetry, 30*time.Second)
	var (
		retryTimer *time.Timer
		retryC     <-chan time.Time
	)
	stopRetry := func() {
		if retryTimer != nil {
			retryTimer.Stop()
		}
		retryC = nil
		retryWaits.Reset()
	}
	defer stopRetry()
	scheduleRetry := func() {
		if last.ok {
			stopRetry()
			return
		}
		if retryTimer != nil {
			retryTimer.Stop()
		}
		retryTimer = time.NewTimer(retryWaits.NextBackOff())
		retryC = retryTimer.C
	}
	scheduleRetry()
	for {
		select {
		case <-ctx.Done():
			m.cfg.Node.FenceAll()
			if errors.Is(context.Cause(ctx), session.ErrExpired) {
				m.l.Error("membership: ZooKeeper session expired; every container fenced, joining again with a new session")
			}
			return
		case ev, ok := <-events:
			if !ok {
				// The store was closed under us: serve nothing.
				m.cfg.Node.FenceAll()
				<-ctx.Done()
				return
			}
			if !ev.Deleted && !last.missing && ev.Version <= last.version {
				continue // not newer than the state applied
			}
			last = applied{value: ev.Value, missing: ev.Deleted, version: ev.Version, stopWatch: last.stopWatch}
			last.ok = m.apply(st, last.value, last.missing)
			retryWaits.Reset()
			scheduleRetry()
		case <-retryC:
			last.ok = m.apply(st, last.value, last.missing)
			scheduleRetry()
		}
	}
}

// apply reconciles the node with a published map (missing: there is none)
// and reports whether every action succeeded.
func (m *Member) apply(st cluster.Store, value []byte, missing bool) bool {
	n := m.cfg.Node
	am := layout.New(n.NumContainers())
	if !missing {
		parsed, err := layout.Parse(value, n.NumContainers())
		if err != nil {
			m.l.WithError(err).Error("membership: unreadable assignment; serving no container (do all nodes and controllers agree on --containers?)")
		} else {
			am = parsed
		}
	}
	released, err := m.released(st)
	if err != nil {
		m.l.WithError(err).Error("membership: cannot read the confirmed hand-overs; retrying")
		return false
	}
	actions := Reconcile(m.cfg.ID, n.Hosted(), am, released)
	ok := true
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := map[int]error{}
	inParallel := func(a Action, what string, do func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := do(); err != nil {
				m.l.WithError(err).WithField("container", a.Container).Error(what)
				mu.Lock()
				ok = false
				failed[a.Container] = err
				mu.Unlock()
			}
		}()
	}
	for _, a := range actions {
		switch a.Op {
		case Fence:
			n.Fence(a.Container)
			m.l.WithField("container", a.Container).Info("membership: container fenced, the assignment moved on")
		case Unhost:
			if err := n.Unhost(a.Container); err != nil {
				m.l.WithError(err).Error("membership: unhost")
				ok = false
			}
		case Host:
			// Containers open (replay) in parallel.
			inParallel(a, "membership: cannot host an assigned container", func() error {
				return n.HostFrom(a.Container, a.Epoch, a.From)
			})
		}
	}
	wg.Wait()
	// Releases after hosting: one may have to host its container first.
	for _, a := range actions {
		if a.Op == Release {
			inParallel(a, "membership: hand-over failed; retrying", func() error { return m.release(st, a) })
		}
	}
	wg.Wait()
	m.mu.Lock()
	m.failed = failed
	m.mu.Unlock()
	return ok
}

// releaseTimeout bounds one hand-over (tiering everything, writing the
// state to tier 2) and the store calls around it.
const releaseTimeout = 5 * time.Minute

// release hands a container over (hosting it first, after a restart) and
// confirms it under layout.HandoverKey for the leader.
func (m *Member) release(st cluster.Store, a Action) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	n := m.cfg.Node
	hosted := false
	for _, h := range n.Hosted() {
		hosted = hosted || (h.ID == a.Container && h.Epoch == a.Epoch && !h.Fenced)
	}
	if !hosted {
		if err := n.HostFrom(a.Container, a.Epoch, a.From); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := n.Release(ctx, a.Container); err != nil {
		return err
	}
	key := layout.HandoverKey + "/" + strconv.Itoa(a.Container)
	val, _ := json.Marshal(layout.Released{Epoch: a.Epoch})
	if _, err := st.Put(ctx, key, val); err != nil {
		return fmt.Errorf("membership: confirm the hand-over of container %d: %w", a.Container, err)
	}
	// Wake the leader: its watch on the parent sees this write, not the
	// child's.
	if _, err := st.Put(ctx, layout.HandoverKey, []byte(key)); err != nil {
		m.l.WithError(err).Warn("membership: could not signal the hand-over; the leader sees it at its next tick")
	}
	m.l.WithFields(logrus.Fields{"container": a.Container, "epoch": a.Epoch, "took": time.Since(start)}).Info("membership: container released for its next owner")
	return nil
}

// released reads the confirmed hand-overs (layout.HandoverKey).
func (m *Member) released(st cluster.Store) (map[int]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	children, err := st.List(ctx, layout.HandoverKey)
	if errors.Is(err, cluster.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[int]int64{}
	for _, kv := range children {
		id, err := strconv.Atoi(path.Base(kv.Key))
		var r layout.Released
		if err == nil && json.Unmarshal(kv.Value, &r) == nil {
			out[id] = r.Epoch
		}
	}
	return out, nil
}
