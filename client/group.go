package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Reader group defaults.
const (
	// DefaultCommitInterval is how often a GroupReader commits its
	// positions and heartbeats.
	DefaultCommitInterval = time.Second
	// DefaultSessionTimeout is how long a reader may miss heartbeats before
	// the others take its segments.
	DefaultSessionTimeout = 10 * time.Second
)

// GroupStore is the controller's reader group routes; *ctlclient.Client
// has them. A Client whose Controller lacks them cannot use reader groups.
type GroupStore interface {
	CreateReaderGroup(ctx context.Context, scope string, cfg api.ReaderGroupConfig) (api.ReaderGroup, error)
	GetReaderGroup(ctx context.Context, scope, group string) (api.ReaderGroup, error)
	UpdateReaderGroupState(ctx context.Context, scope, group string, version int64, state json.RawMessage) (int64, error)
	DeleteReaderGroup(ctx context.Context, scope, group string) error
}

var errNoGroupStore = errors.New("client: the controller client has no reader group routes")

// GroupOption configures a reader group (NewReaderGroup) or a member of
// one (JoinReaderGroup).
type GroupOption func(*groupConfig)

type groupConfig struct {
	start      []ReaderOption // FromHead, FromTail or FromCut
	interval   time.Duration
	timeout    time.Duration
	readerOpts []ReaderOption
	end        api.StreamCut // GroupTo
}

// GroupFrom starts a new group where start says: FromHead (the default),
// FromTail or FromCut.
func GroupFrom(start ReaderOption) GroupOption {
	return func(c *groupConfig) { c.start = []ReaderOption{start} }
}

// WithCommitInterval sets how often a GroupReader commits its positions
// and heartbeats (default DefaultCommitInterval).
func WithCommitInterval(d time.Duration) GroupOption {
	return func(c *groupConfig) { c.interval = d }
}

// WithSessionTimeout sets after how long without a heartbeat a GroupReader
// takes the segments of another reader (default DefaultSessionTimeout).
// Every reader of a group should use the same.
func WithSessionTimeout(d time.Duration) GroupOption {
	return func(c *groupConfig) { c.timeout = d }
}

// GroupTo makes a new group (NewReaderGroup) end at end, a consistent cut
// of its stream at or after its start, kept in the group's state so that
// every reader of the group honours it: each reads its segments up to end
// (ToCut's rules), and once the group has read everything before end,
// every reader's ReadNext returns ErrEndOfSlice. A reader that has
// nothing left while others still read waits in ReadNext (it still
// delivers checkpoint events) until then.
func GroupTo(end api.StreamCut) GroupOption {
	return func(c *groupConfig) { c.end = end }
}

// WithGroupReaderOptions passes reader options (WithReadBuffer, ...) to a
// GroupReader's reader.
func WithGroupReaderOptions(opts ...ReaderOption) GroupOption {
	return func(c *groupConfig) { c.readerOpts = append(c.readerOpts, opts...) }
}

func newGroupConfig(opts []GroupOption) groupConfig {
	cfg := groupConfig{interval: DefaultCommitInterval, timeout: DefaultSessionTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// ReaderGroup is a handle on a reader group: its state, checkpoints and
// reset. It holds nothing open.
type ReaderGroup struct {
	c     *Client
	store GroupStore
	scope string
	name  string
	// sleep waits between compare-and-set attempts (retry.Sleep if nil;
	// tests record the waits instead).
	sleep func(ctx context.Context, d time.Duration) error
}

func (c *Client) groupStore() (GroupStore, error) {
	gs, ok := c.ctl.(GroupStore)
	if !ok {
		return nil, errNoGroupStore
	}
	return gs, nil
}

// NewReaderGroup creates reader group scope/group of stream (in scope),
// starting at GroupFrom (the head by default), and returns its handle.
// It asks the controller and the nodes where to start, blocking until they
// answer or ctx is done, without retrying.
// An existing group is an error (ctlclient.ErrExists).
func (c *Client) NewReaderGroup(ctx context.Context, scope, group, stream string, opts ...GroupOption) (*ReaderGroup, error) {
	gs, err := c.groupStore()
	if err != nil {
		return nil, err
	}
	cfg := newGroupConfig(opts)
	if _, err := c.ctl.GetStream(ctx, scope, stream); err != nil {
		return nil, fmt.Errorf("client: reader group %s/%s: %w", scope, group, err)
	}
	rc := readerConfig{start: startHead}
	for _, o := range cfg.start {
		o(&rc)
	}
	hc, _ := c.ctl.(headCutter)
	start, err := (&Reader{c: c, scope: scope, stream: stream, cfg: rc, hasHead: hc}).startCut(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: reader group %s/%s: %w", scope, group, err)
	}
	st := newGroupState(start)
	if cfg.end != nil {
		if err := checkEndCut(ctx, c.ctl, scope, stream, start, cfg.end); err != nil {
			return nil, fmt.Errorf("client: reader group %s/%s: %w", scope, group, err)
		}
		st.EndCut = maps.Clone(cfg.end)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	if _, err := gs.CreateReaderGroup(ctx, scope, api.ReaderGroupConfig{GroupName: group,
		Streams: []string{scope + "/" + stream}, StartCut: start, State: b}); err != nil {
		return nil, fmt.Errorf("client: reader group %s/%s: %w", scope, group, err)
	}
	return &ReaderGroup{c: c, store: gs, scope: scope, name: group}, nil
}

// ReaderGroup returns a handle on the existing reader group scope/group.
func (c *Client) ReaderGroup(scope, group string) (*ReaderGroup, error) {
	gs, err := c.groupStore()
	if err != nil {
		return nil, err
	}
	return &ReaderGroup{c: c, store: gs, scope: scope, name: group}, nil
}

// State returns the group's state, its stream ("scope/stream") and the
// state's version. It blocks until the controller answers or ctx is done
// and tries once.
func (g *ReaderGroup) State(ctx context.Context) (*GroupState, string, int64, error) {
	rg, err := g.store.GetReaderGroup(ctx, g.scope, g.name)
	if err != nil {
		return nil, "", 0, err
	}
	var s GroupState
	if err := json.Unmarshal(rg.State, &s); err != nil {
		return nil, "", 0, fmt.Errorf("client: reader group %s/%s: state: %w", g.scope, g.name, err)
	}
	s.norm()
	stream := ""
	if len(rg.Streams) > 0 {
		stream = rg.Streams[0]
	}
	return &s, stream, rg.Version, nil
}

// update applies fn to the state and writes it with compare-and-set,
// retrying on a conflict until ctx is done. fn returns errNoChange to
// write nothing.
//
// A conflict means another writer's write has just landed, so the state
// read again at once is fresh, and the other readers write again only a
// commit interval later: conflicts are retried at once (eagerConflicts),
// then after short jittered waits (maxConflictWait) in case many readers
// collide. A growing backoff would be unfair: a reader backing off while
// the others heartbeat on schedule loses again and again, and goes
// unheard until the others expire it, alive.
func (g *ReaderGroup) update(ctx context.Context, fn func(s *GroupState) error) error {
	sleep := g.sleep
	if sleep == nil {
		sleep = retry.Sleep
	}
	conflicts := 0
	bo := retry.NewJittered(time.Millisecond, maxConflictWait)
	for {
		s, _, v, err := g.State(ctx)
		if err != nil {
			return err
		}
		if err := fn(s); err != nil {
			if errors.Is(err, errNoChange) {
				return nil
			}
			return err
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = g.store.UpdateReaderGroupState(ctx, g.scope, g.name, v, b)
		if !errors.Is(err, ctlclient.ErrConflict) {
			return err
		}
		conflicts++
		if conflicts > eagerConflicts {
			if err := sleep(ctx, bo.NextBackOff()); err != nil {
				return err
			}
		}
	}
}

var errNoChange = errors.New("no change")

// Conflict retries of update (the policy is explained there): the first
// eagerConflicts in a row are retried at once, later ones after a
// jittered wait of at most maxConflictWait.
const (
	eagerConflicts  = 8
	maxConflictWait = 50 * time.Millisecond
)

// InitiateCheckpoint starts checkpoint name and waits until every reader
// of the group has returned it as a checkpoint event from ReadNext
// (Event.Checkpoint == name) and reported its position there (on its
// next heartbeat), then returns the checkpoint's stream cut: a consistent
// cut such that the events each reader returned before its checkpoint
// event lie before it and those after, after it. A reader waiting at the
// tail returns the event at once; a reader that closes or is expired
// before it does counts at the position it leaves at (Close: exactly
// where it stood; expiry: its last commit); once the group has read
// everything (ReadNext returns ErrEndOfSlice or ErrEndOfStream) a reader
// holding nothing counts at once, at where it stands, on its next
// heartbeat, and will not return the event; otherwise a reader whose
// application stops calling ReadNext holds the checkpoint up. While a checkpoint runs
// the group does not rebalance. It waits until ctx is done (polling the
// state every 20 ms); the checkpoint then still completes without the
// caller. If the checkpoint is dropped before it completes (ResetToCut
// or ResetToCheckpoint drops the checkpoint in progress), it returns an
// error wrapping ErrCheckpointAborted. The group keeps the last completed checkpoints by name
// (Checkpoint, ResetToCheckpoint).
func (g *ReaderGroup) InitiateCheckpoint(ctx context.Context, name string) (api.StreamCut, error) {
	if name == "" || strings.ContainsAny(name, "\n") {
		return nil, fmt.Errorf("%w: checkpoint name %q", api.ErrInvalid, name)
	}
	var gen int64 // of the state the checkpoint started in
	if err := g.update(ctx, func(s *GroupState) error {
		gen = s.Gen
		return s.startCheckpoint(name)
	}); err != nil {
		return nil, err
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		s, _, _, err := g.State(ctx)
		if err != nil {
			return nil, err
		}
		if cut, ok := s.checkpointCut(name); ok {
			return cut, nil
		}
		if cp := s.Checkpoint; s.Gen != gen || cp == nil || cp.Name != name {
			return nil, fmt.Errorf("client: checkpoint %q of group %s: %w", name, g.name, ErrCheckpointAborted)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ResetToCut makes the group read from cut (a checkpoint's cut, or any
// consistent cut of its stream): every reader drops its segments and
// what it had fetched, and the group continues from cut. It retries
// compare-and-set conflicts until ctx is done, and nothing else.
func (g *ReaderGroup) ResetToCut(ctx context.Context, cut api.StreamCut) error {
	if err := cut.Validate(); err != nil {
		return err
	}
	if len(cut) == 0 {
		return fmt.Errorf("%w: empty stream cut", api.ErrInvalid)
	}
	if err := g.checkResetCut(ctx, cut); err != nil {
		return err
	}
	return g.update(ctx, func(s *GroupState) error { s.reset(cut); return nil })
}

// Delete deletes the group. Its readers fail on their next heartbeat. It
// blocks until the controller answers or ctx is done and tries once.
func (g *ReaderGroup) Delete(ctx context.Context) error {
	return g.store.DeleteReaderGroup(ctx, g.scope, g.name)
}

// GroupReader is one reader of a reader group: ReadNext returns events of
// the segments the group gives it. A goroutine commits its positions and
// heartbeats every commit interval (compare-and-set of the group's state,
// retried on conflict), and on each commit takes or gives up segments so
// that no reader holds more than its fair share, ceil(segments/readers);
// a segment is given up at the reader's position in it. Segments read to
// their end are handed to the group, which starts successors only once
// all their predecessors are read.
//
// At least once: a reader that dies (stops heartbeating) loses its
// segments after the session timeout to the others, from its last
// committed positions: the events it returned after its last commit are
// read again. A reader that Closes commits its exact position first.
//
// ReadNext is not safe for concurrent use; Position and Close are.
type GroupReader struct {
	g   *ReaderGroup
	id  string
	cfg groupConfig
	r   *Reader

	ctx    context.Context // the heartbeat's life
	cancel context.CancelFunc
	done   chan struct{}

	// Owned by the heartbeat goroutine (and Close after it stopped).
	gen      int64
	released api.StreamCut
	ended    map[string]EndedSegment
	truncs   []groupTruncation // met by the reader, not yet in the state
	ckpt     *checkpointReport // delivered by the reader, not yet in the state
	errMu    sync.Mutex
	err      error // the heartbeat's fatal error, reported by ReadNext
}

// JoinReaderGroup joins scope/group as reader readerID and returns the
// reader. It blocks until its first heartbeat is written (it may already
// have segments then) or ctx is done, retrying only compare-and-set
// conflicts; ctx bounds the join, not the reader's life. A reader that
// joins under an id already there (a restart) first gives back that
// reader's segments at their committed positions. Close it to leave.
func (c *Client) JoinReaderGroup(ctx context.Context, scope, group, readerID string, opts ...GroupOption) (*GroupReader, error) {
	gs, err := c.groupStore()
	if err != nil {
		return nil, err
	}
	cfg := newGroupConfig(opts)
	if readerID == "" {
		return nil, fmt.Errorf("%w: empty reader id", api.ErrInvalid)
	}
	g := &ReaderGroup{c: c, store: gs, scope: scope, name: group}
	st, stream, _, err := g.State(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: join %s/%s: %w", scope, group, err)
	}
	sscope, sname, _ := strings.Cut(stream, "/")
	ropts := cfg.readerOpts
	if st.EndCut != nil {
		// The group's end cut binds every reader of it.
		ropts = append(slices.Clone(ropts), ToCut(st.EndCut))
	}
	r, err := c.newGroupReader(ctx, sscope, sname, ropts...)
	if err != nil {
		return nil, err
	}
	gr := &GroupReader{g: g, id: readerID, cfg: cfg, r: r, done: make(chan struct{}),
		released: api.StreamCut{}, ended: map[string]EndedSegment{}}
	var gen int64
	err = g.update(ctx, func(s *GroupState) error {
		s.join(readerID, time.Now().UnixMilli())
		gen = s.Gen
		return nil
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("client: join %s/%s: %w", scope, group, err)
	}
	gr.gen = gen
	if err := gr.sync(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("client: join %s/%s: %w", scope, group, err)
	}
	gr.ctx, gr.cancel = context.WithCancel(context.Background())
	go gr.heartbeat()
	return gr, nil
}

// ID returns the reader's id.
func (gr *GroupReader) ID() string { return gr.id }

// ReadNext returns the next event of the segments the reader holds, as
// Reader.ReadNext does (blocking until an event, ctx's end or Close).
// With no segment to read it waits for the group to give it one.
// When a checkpoint of the group is pending for the reader it returns,
// once, a checkpoint event (Event.Checkpoint set, no Data; see
// InitiateCheckpoint) before any further event, also while it waits at
// the tail. ErrEndOfStream once the group has read the whole (sealed)
// stream; ErrEndOfSlice once it has read everything before its end cut
// (GroupTo), which every reader of the group returns;
// ErrNotMember... is not returned: a reader expired by the others drops
// its segments and joins again.
func (gr *GroupReader) ReadNext(ctx context.Context) (Event, error) {
	gr.errMu.Lock()
	err := gr.err
	gr.errMu.Unlock()
	if err != nil {
		return Event{}, err
	}
	ev, err := gr.r.ReadNext(ctx)
	if err == nil || !errors.Is(err, ErrClosed) {
		return ev, err
	}
	gr.errMu.Lock()
	defer gr.errMu.Unlock()
	if gr.err != nil {
		return Event{}, gr.err
	}
	return ev, err
}

// Position returns the reader's position in the segments it holds.
func (gr *GroupReader) Position() api.StreamCut { return gr.r.Position() }

// heartbeat commits every interval until Close.
func (gr *GroupReader) heartbeat() {
	defer close(gr.done)
	t := time.NewTicker(gr.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-gr.ctx.Done():
			return
		case <-t.C:
		}
		err := gr.sync(gr.ctx)
		if errors.Is(err, ctlclient.ErrNotFound) {
			// The group was deleted: the reader ends.
			gr.errMu.Lock()
			gr.err = fmt.Errorf("client: reader group %s/%s: %w", gr.g.scope, gr.g.name, err)
			gr.errMu.Unlock()
			gr.r.Close()
			return
		}
		// Other failures (an unreachable controller) are retried on the
		// next tick; the session timeout bounds how long that may last.
	}
}

// sync is one heartbeat: report positions, released and ended segments,
// expire dead readers, then give up or take segments as the plan says,
// all in one compare-and-set (retried on conflict); segments are taken
// locally only once the write succeeded.
func (gr *GroupReader) sync(ctx context.Context) error {
	var acquired api.StreamCut
	var done bool
	var ckpt string            // a checkpoint pending for this reader
	var self *checkpointReport // made for this reader, finished (below)
	err := gr.g.update(ctx, func(s *GroupState) error {
		now := time.Now().UnixMilli()
		if s.Gen != gr.gen {
			// A reset: drop everything read before it.
			if err := gr.dropAll(ctx); err != nil {
				return err
			}
			gr.gen = s.Gen
		}
		pos, ended, truncs := gr.r.groupSnapshot()
		maps.Copy(gr.ended, ended)
		gr.truncs = append(gr.truncs, truncs...)
		if c := gr.r.takeCheckpointReport(); c != nil {
			gr.ckpt = c
		}
		if name := s.checkpointFor(gr.id); name != "" && gr.ckpt == nil && s.Done() && len(pos) == 0 {
			// The group has read everything and this reader holds
			// nothing: ReadNext returns the end again and again, so the
			// application may never ask for the checkpoint event. Its
			// share is where it stands, which nothing can move.
			gr.ckpt = &checkpointReport{Name: name, Positions: api.StreamCut{}}
			self = gr.ckpt
		}
		s.expire(gr.id, now, gr.cfg.timeout.Milliseconds())
		// Truncations first: the group, not the reader, places the head
		// cut's segments, and the plan below hands them out.
		s.truncated(gr.id, gr.truncs)
		err := s.report(gr.id, now, groupReport{Positions: pos, Released: gr.released, Ended: gr.ended, Checkpoint: gr.ckpt})
		if errors.Is(err, ErrNotMember) {
			// The others expired this reader: someone may read its
			// segments already. Drop them and join again.
			if err := gr.dropAll(ctx); err != nil {
				return err
			}
			s.join(gr.id, now)
		}
		release, acquire := s.plan(gr.id)
		for _, seg := range release {
			var off int64
			var ok bool
			if err := gr.r.runOwner(ctx, func() { off, ok = gr.r.releaseOwned(seg) }); err != nil {
				return err
			}
			if ok {
				gr.released[seg] = off
			}
		}
		if len(release) > 0 {
			s.report(gr.id, now, groupReport{Released: gr.released})
		}
		acquired = s.acquire(gr.id, acquire)
		done = s.Done()
		ckpt = s.checkpointFor(gr.id)
		return nil
	})
	if err != nil {
		return err
	}
	var settled string // reported without its event: not to deliver
	if self != nil && gr.ckpt == self {
		settled = self.Name
	}
	gr.released = api.StreamCut{}
	gr.ended = map[string]EndedSegment{}
	gr.truncs = nil
	gr.ckpt = nil
	return gr.r.runOwner(ctx, func() {
		for seg, off := range acquired {
			gr.r.acquireOwned(seg, off)
		}
		if settled != "" {
			gr.r.settleCheckpoint(settled)
		}
		if ckpt != "" {
			// Through runOwner: a ReadNext waiting at the tail wakes and
			// delivers the checkpoint event at once.
			gr.r.askCheckpoint(ckpt)
		}
		gr.r.mu.Lock()
		gr.r.mu.groupDone = done
		gr.r.mu.Unlock()
	})
}

// dropAll stops reading every segment without reporting positions.
func (gr *GroupReader) dropAll(ctx context.Context) error {
	gr.released = api.StreamCut{}
	gr.ended = map[string]EndedSegment{}
	gr.truncs = nil
	gr.ckpt = nil
	gr.r.dropCheckpoint()
	return gr.r.runOwner(ctx, func() {
		for _, seg := range gr.r.mu.tracker.segments() {
			gr.r.releaseOwned(seg)
		}
		gr.r.groupSnapshot()
	})
}

// Close leaves the group: it stops the reader, then commits its exact
// positions and gives its segments back at them, so that another reader
// continues with no event lost or read twice. It waits for that write up
// to ctx's end (an unreachable controller: the others take the segments
// from the last committed positions after the session timeout). Closing
// twice is not an error.
func (gr *GroupReader) Close(ctx context.Context) error {
	if !gr.stop() {
		return nil
	}
	err := gr.g.update(ctx, func(s *GroupState) error {
		if s.Gen != gr.gen {
			s.leave(gr.id, nil)
			return nil
		}
		pos, ended, truncs := gr.r.groupSnapshot()
		maps.Copy(gr.ended, ended)
		gr.truncs = append(gr.truncs, truncs...)
		if c := gr.r.takeCheckpointReport(); c != nil {
			gr.ckpt = c
		}
		s.truncated(gr.id, gr.truncs)
		// A checkpoint event returned counts at its position, not at the
		// later one the reader leaves at.
		if err := s.report(gr.id, time.Now().UnixMilli(), groupReport{Positions: pos, Released: gr.released, Ended: gr.ended, Checkpoint: gr.ckpt}); err != nil {
			return errNoChange // already expired
		}
		s.leave(gr.id, pos)
		return nil
	})
	if errors.Is(err, ctlclient.ErrNotFound) {
		return nil
	}
	return err
}

// stop ends the heartbeat and the reader (no leave); false if already
// stopped.
func (gr *GroupReader) stop() bool {
	select {
	case <-gr.done:
		if gr.r.isClosed() {
			return false
		}
	default:
	}
	if gr.cancel == nil {
		return false
	}
	gr.cancel()
	<-gr.done
	gr.r.Close()
	return true
}
