package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/cluster/session"
	"github.com/sluice-streams/sluice/controller/assignment"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
)

// Defaults of Config.
const (
	DefaultReconcileInterval = time.Second
	DefaultMaxMoves          = 1
	DefaultResumeInterval    = 5 * time.Second
)

// Bounds of the backoff between attempts to register again while an
// earlier session's registration exists, and to open a new session.
const (
	retryMin = 50 * time.Millisecond
	retryMax = 2 * time.Second
)

// Resumer completes unfinished workflows: controller.Service.
type Resumer interface {
	Resume(ctx context.Context) error
}

// Retainer applies streams' retention policies (controller.Service). A
// Config.Service that implements it gets a retention loop on the leader:
// RetentionStep every RetentionInterval (none if that is not positive).
type Retainer interface {
	RetentionStep(ctx context.Context) error
	RetentionInterval() time.Duration
}

// AutoScaler scales streams by their measured rates (controller.Service).
// A Config.Service that implements it gets an auto-scaling loop on the
// leader: AutoScaleStep every AutoScaleInterval (none if that is not
// positive).
type AutoScaler interface {
	AutoScaleStep(ctx context.Context) error
	AutoScaleInterval() time.Duration
}

// Config configures a Member.
type Config struct {
	// Store is the session to start with (a *zkstore.Store). The Member
	// owns it (and every session Reopen returns): Close closes it.
	Store cluster.Session
	// Reopen opens a new session after the current one expired. If nil,
	// the Member registers again on the same store (which reconnects with
	// a new session) but notices no later expiry.
	Reopen func(ctx context.Context) (cluster.Session, error)
	// ID is the controller's id (registration and election).
	ID string
	// Addr is the address of the controller's REST API.
	Addr string
	// Containers is the cluster's number of segment containers.
	Containers int
	// Service is resumed when this controller becomes leader, and then
	// every ResumeInterval.
	Service Resumer
	// ReconcileInterval (DefaultReconcileInterval if 0) and ResumeInterval
	// (DefaultResumeInterval if 0) pace the leader's loops.
	ReconcileInterval time.Duration
	ResumeInterval    time.Duration
	// MaxMoves bounds the container hand-overs in flight at once
	// (DefaultMaxMoves if 0; none start if negative).
	MaxMoves int
	// Logger; discarded if nil.
	Logger logrus.FieldLogger
}

// Member keeps a controller registered and a candidate, and runs the
// leader's loops while it leads.
type Member struct {
	cfg    Config
	log    logrus.FieldLogger
	keeper *session.Keeper

	leading atomic.Bool
	changes chan struct{} // one-slot, signalled when leading changes

	// lead is the candidacy of the current session: set by join, read
	// by follow (the keeper calls them one after the other).
	lead cluster.Leadership
}

// Start registers the controller and enters the election, then follows
// the election until Close. ctx bounds Start only; it fails if ctx ends
// before the controller is registered (say, while the registration of its
// previous session has not expired yet); cfg.Store is then left open for
// the caller to close.
func Start(ctx context.Context, cfg Config) (*Member, error) {
	if cfg.Store == nil || cfg.Service == nil || cfg.ID == "" || cfg.Containers < 1 {
		return nil, errors.New("leader: Config needs Store, Service, ID and Containers >= 1")
	}
	if err := cluster.CheckKey(layout.ControllerKey(cfg.ID)); err != nil {
		return nil, fmt.Errorf("leader: controller id %q: %w", cfg.ID, err)
	}
	if cfg.MaxMoves == 0 {
		cfg.MaxMoves = DefaultMaxMoves
	}
	if cfg.ReconcileInterval <= 0 {
		cfg.ReconcileInterval = DefaultReconcileInterval
	}
	if cfg.ResumeInterval <= 0 {
		cfg.ResumeInterval = DefaultResumeInterval
	}
	m := &Member{cfg: cfg, log: logs.OrDiscard(cfg.Logger).WithField("controller", cfg.ID), changes: make(chan struct{}, 1)}
	k, err := session.Start(ctx, session.Config{
		Session: cfg.Store, Open: cfg.Reopen, Join: m.join, Follow: m.follow,
		MinRetry: retryMin, MaxRetry: retryMax, Logger: m.log,
	})
	if err != nil {
		return nil, err
	}
	m.keeper = k
	return m, nil
}

// IsLeader reports whether this controller runs the leader's loops now.
func (m *Member) IsLeader() bool { return m.leading.Load() }

// Changed receives a value when IsLeader changes (coalesced: read IsLeader
// after each).
func (m *Member) Changed() <-chan struct{} { return m.changes }

// Store returns the current session.
func (m *Member) Store() cluster.Session { return m.keeper.Session() }

// Close stops the leader's loops (waiting for them), resigns, and closes
// the session, which deletes the registration.
func (m *Member) Close() error { return m.keeper.Close() }

// join registers the controller in st and enters the election. A
// registration that still exists from an earlier session fails with
// cluster.ErrExists: the keeper retries it.
func (m *Member) join(ctx context.Context, st cluster.Session) error {
	reg := layout.ControllerRegistration{ID: m.cfg.ID, Addr: m.cfg.Addr}.Encode()
	key := layout.ControllerKey(m.cfg.ID)
	if err := st.Register(ctx, key, reg); err != nil {
		return fmt.Errorf("leader: register %s: %w", key, err)
	}
	lead, err := st.Elect(ctx, layout.ElectionKey, m.cfg.ID)
	if err != nil {
		st.Delete(context.Background(), key, cluster.AnyVersion)
		return fmt.Errorf("leader: elect: %w", err)
	}
	m.lead = lead
	m.log.WithFields(logrus.Fields{"key": key, "addr": m.cfg.Addr}).Info("leader: registered and standing for election")
	return nil
}

// follow runs the leader's loops while the session's candidacy leads,
// until the candidacy ends or ctx ends (the session expired, or Close);
// the loops are stopped (and waited for) before it returns, and on Close
// the candidacy is resigned.
func (m *Member) follow(ctx context.Context, st cluster.Session) {
	lead := m.lead
	defer func() {
		if !errors.Is(context.Cause(ctx), session.ErrExpired) {
			// Close, or the candidacy ended by itself (then this does
			// nothing). An expired candidacy ends by itself.
			lead.Resign()
		}
	}()
	var stop context.CancelFunc
	var loops sync.WaitGroup
	stopLeading := func(why string) {
		if stop == nil {
			return
		}
		stop()
		loops.Wait()
		stop = nil
		m.setLeading(false)
		m.log.WithField("why", why).Warn("leader: no longer the leader")
	}
	defer stopLeading("stopping")
	changed := lead.Changed()
	for {
		if lead.IsLeader() && stop == nil {
			stop = m.startLeading(ctx, st, &loops)
		} else if !lead.IsLeader() {
			stopLeading("lost the election")
		}
		select {
		case _, ok := <-changed:
			if !ok {
				stopLeading("candidacy ended")
				return
			}
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), session.ErrExpired) {
				stopLeading("session expired")
			}
			return
		}
	}
}

// startLeading starts the leader's loops under a context of their own
// and returns what stops them.
func (m *Member) startLeading(ctx context.Context, st cluster.Store, loops *sync.WaitGroup) context.CancelFunc {
	lctx, stop := context.WithCancel(ctx)
	m.setLeading(true)
	m.log.Info("leader: elected leader; assigning containers and resuming workflows")
	loops.Add(2)
	go func() { defer loops.Done(); m.assignLoop(lctx, st) }()
	go func() { defer loops.Done(); m.resumeLoop(lctx) }()
	if r, ok := m.cfg.Service.(Retainer); ok && r.RetentionInterval() > 0 {
		loops.Add(1)
		go func() { defer loops.Done(); m.retentionLoop(lctx, r) }()
	}
	if a, ok := m.cfg.Service.(AutoScaler); ok && a.AutoScaleInterval() > 0 {
		loops.Add(1)
		go func() { defer loops.Done(); m.autoScaleLoop(lctx, a) }()
	}
	return stop
}

func (m *Member) setLeading(v bool) {
	m.leading.Store(v)
	select {
	case m.changes <- struct{}{}:
	default:
	}
}

// assignLoop reconciles the published assignment at once, on every tick,
// whenever the published map changes, whenever a node confirms a hand-over
// or registers, and whenever a drain is asked for (each writer writes the
// parent key, layout.HandoverKey, NodesKey or DrainKey, after its
// child, since watches report no child changes), until ctx ends.
func (m *Member) assignLoop(ctx context.Context, st cluster.Store) {
	watch, err := st.Watch(ctx, layout.AssignmentKey)
	if err != nil {
		m.log.WithError(err).Warn("leader: cannot watch the assignment; reconciling on the ticker only")
		watch = nil
	}
	handovers, err := st.Watch(ctx, layout.HandoverKey)
	if err != nil {
		m.log.WithError(err).Warn("leader: cannot watch hand-overs; completing them on the ticker only")
		handovers = nil
	}
	joins, err := st.Watch(ctx, layout.NodesKey)
	if err != nil {
		m.log.WithError(err).Warn("leader: cannot watch node registrations; noticing new nodes on the ticker only")
		joins = nil
	}
	drains, err := st.Watch(ctx, layout.DrainKey)
	if err != nil {
		m.log.WithError(err).Warn("leader: cannot watch drain requests; noticing them on the ticker only")
		drains = nil
	}
	tick := time.NewTicker(m.cfg.ReconcileInterval)
	defer tick.Stop()
	for {
		if err := m.Reconcile(ctx, st); err != nil && ctx.Err() == nil {
			m.log.WithError(err).Error("leader: container assignment")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case _, ok := <-watch:
			if !ok {
				watch = nil
			}
		case _, ok := <-handovers:
			if !ok {
				handovers = nil
			}
		case _, ok := <-joins:
			if !ok {
				joins = nil
			}
		case _, ok := <-drains:
			if !ok {
				drains = nil
			}
		}
	}
}

// Reconcile runs one round of the assignment loop on st: live nodes and
// published map in, Decide, and a compare-and-set (Create when there is no
// map yet) if the map changed. A concurrent write makes it start over, a
// few times.
func (m *Member) Reconcile(ctx context.Context, st cluster.Store) error {
	for attempt := 0; ; attempt++ {
		err := m.reconcileOnce(ctx, st)
		if (errors.Is(err, cluster.ErrVersionMismatch) || errors.Is(err, cluster.ErrExists)) && attempt < 3 {
			continue
		}
		return err
	}
}

func (m *Member) reconcileOnce(ctx context.Context, st cluster.Store) error {
	// The map first, then what the decision reads beside it: nodes, drains
	// and hand-over confirmations are then never older than the map the
	// round changes (a container cleared after a node joined is never
	// given out by a round that has not seen that node). The map's
	// version guards the write; the rest may only be newer.
	kv, err := st.Get(ctx, layout.AssignmentKey)
	exists := err == nil
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("read %s: %w", layout.AssignmentKey, err)
	}
	children, err := st.List(ctx, layout.NodesKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("list %s: %w", layout.NodesKey, err)
	}
	live := LiveNodes(children)
	drain, err := st.List(ctx, layout.DrainKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("list %s: %w", layout.DrainKey, err)
	}
	acks, err := st.List(ctx, layout.HandoverKey)
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return fmt.Errorf("list %s: %w", layout.HandoverKey, err)
	}
	in := assignment.Input{Live: live, Draining: LiveNodes(drain), Released: Released(acks), MaxMoves: m.cfg.MaxMoves,
		NoHandover: NoHandover(children)}
	next, changed, err := Decide(kv.Value, exists, in, m.cfg.Containers)
	if err != nil || !changed {
		return err
	}
	if exists {
		_, err = st.CompareAndSet(ctx, layout.AssignmentKey, next.Encode(), kv.Version)
	} else {
		_, err = st.Create(ctx, layout.AssignmentKey, next.Encode())
	}
	if err != nil {
		return fmt.Errorf("publish %s: %w", layout.AssignmentKey, err)
	}
	byNode := map[string][]int{}
	for _, n := range live {
		byNode[n] = next.Of(n)
	}
	m.log.WithFields(logrus.Fields{"live": live, "containers": byNode, "moving": next.Moving()}).Info("leader: published the container assignment")
	return nil
}

// resumeLoop completes unfinished workflows at once and then every
// ResumeInterval, until ctx ends.
func (m *Member) resumeLoop(ctx context.Context) {
	tick := time.NewTicker(m.cfg.ResumeInterval)
	defer tick.Stop()
	for {
		if err := m.cfg.Service.Resume(ctx); err != nil && ctx.Err() == nil {
			m.log.WithError(err).Warn("leader: an unfinished workflow could not be completed yet; retrying")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// retentionLoop runs r.RetentionStep every r.RetentionInterval (the first
// time one interval after leadership starts), until ctx ends.
func (m *Member) retentionLoop(ctx context.Context, r Retainer) {
	retry.Every(ctx, r.RetentionInterval(), r.RetentionStep, func(err error) {
		m.log.WithError(err).Warn("leader: retention step failed; retrying at the next interval")
	})
}

// autoScaleLoop runs a.AutoScaleStep every a.AutoScaleInterval (the first
// time one interval after leadership starts), until ctx ends.
func (m *Member) autoScaleLoop(ctx context.Context, a AutoScaler) {
	retry.Every(ctx, a.AutoScaleInterval(), a.AutoScaleStep, func(err error) {
		m.log.WithError(err).Warn("leader: auto-scaling step failed; retrying at the next interval")
	})
}
