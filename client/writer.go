package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Writer appends events to one stream. It is safe for concurrent use.
//
// Each active segment has one goroutine that owns its events in order. It
// batches them into append blocks: when nothing of the segment is in flight
// it sends everything queued at once (latency); while blocks are in flight
// it waits until MaxBatch bytes are queued or the pipeline drains
// (throughput). A block's events get consecutive event numbers per
// (writer, segment), fixed for good: after every (re)connection the
// goroutine calls SetupAppend, drops the blocks at or below the last event
// number the node holds, and resends the others unchanged, so each event is
// stored exactly once whatever breaks.
//
// On the wire the writer id of segment N.#epoch.E is "<writer id>/N.E": a
// node binds a writer id to one segment per connection, and a Client shares
// one connection per node among all segments.
//
// When a segment is sealed (a scale), its goroutine asks the node which of
// its events the segment kept, asks the controller for the successors, and
// moves the rest, in order, to the successors by key, ahead of any event
// written later: per-key order holds across the scale. When a node answers
// WrongHost or ContainerUnavailable, or a connection breaks, the goroutine
// looks the segment up again and reconnects with backoff, for ever, until
// Close (StateChange reports each step).
type Writer struct {
	c             *Client
	scope, stream string
	cfg           writerConfig
	ctx           context.Context // ends the goroutines (Close)
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	// txn marks a transaction's writer (see Txn): its segments have no
	// successors (only a commit seals one), so a sealed segment fails
	// its events instead of looking for successors.
	txn bool
	// resume is what a sequenced writer learned before its first write
	// (WithSequenced); nil otherwise. Never changed afterwards.
	resume *resumeState
	// noted: NoteTime reported a time, so Close tells the controller the
	// writer is gone (see watermark.go).
	noted atomic.Bool

	mu struct {
		sync.Mutex
		closed   bool
		routes   []*segWriter // the segments that take new events
		segs     map[string]*segWriter
		rr       int   // round-robin position for empty keys
		inflight int64 // bytes written, not yet acknowledged
		space    chan struct{}
		groups   map[*ackGroup]struct{} // groups with unsettled events
		slab     []Ack                  // Acks are allocated in slabs
		free     []*block               // released blocks, for reuse
		seq      seqState               // sequenced writers: the last WriteSeq

		// failure is the first failure of any event (ErrClosed aside),
		// which Flush returns: the groups of events that failed before
		// a Flush are gone from groups by then.
		failure error
	}
}

// Ack is the outcome of one Write.
//
// The Acks of the events written into one append block share that block's
// ackGroup, whose done channel closes once every one of them is settled:
// one channel per block rather than per event. Each Ack keeps its own
// outcome (err), set before the group's channel closes.
type Ack struct {
	g       *ackGroup
	err     error // the outcome; set under w.mu before g.done closes
	size    int32 // framed bytes, counted in the in-flight window
	settled bool  // guarded by w.mu
	dup     bool  // stored by an earlier life (WriteSeq); never sent
}

// ackGroup is the shared completion of the Acks created for one block.
type ackGroup struct {
	done chan struct{}
	n    int   // unsettled Acks; guarded by w.mu
	err  error // the first failure among them; guarded by w.mu, read after done

	// at is when done closed (Ack.Settled), set just before.
	at time.Time
}

// settledGroup is the group of Acks that fail at once in Write.
var settledGroup = func() *ackGroup {
	g := &ackGroup{done: make(chan struct{})}
	close(g.done)
	return g
}()

// Done is closed when the outcome is known. It may close a little after
// the outcome is known when the event was moved to a successor segment
// (a scale): it closes with the other events first written in its block.
func (a *Ack) Done() <-chan struct{} { return a.g.done }

// Err returns the outcome: nil if the event is durable. It waits until
// Done is closed, without a bound: call it after Done, or use Wait.
func (a *Ack) Err() error {
	<-a.g.done
	return a.err
}

// Wait blocks until the event is durable (nil) or has failed, or ctx is
// done (ctx.Err(); the event is still being written).
func (a *Ack) Wait(ctx context.Context) error {
	select {
	case <-a.g.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewWriter returns a writer of scope/stream. It asks the controller for the
// stream's current segments and starts one goroutine per segment; it does
// not wait for node connections.
//
// It blocks until the controller has answered or ctx is done. While the
// controller is unreachable or unavailable (ctlclient.ErrUnreachable,
// ErrUnavailable) it retries with the writer's backoff (WithBackoff),
// calling the Client's WithRetryNotify hook before each retry; when ctx
// ends first it returns ctx's error together with the last failure (both
// match errors.Is). Other errors are returned at once: ctlclient.ErrNotFound
// for a missing stream, protocol.ErrSegmentSealed for a sealed one.
func (c *Client) NewWriter(ctx context.Context, scope, stream string, opts ...WriterOption) (*Writer, error) {
	cfg := defaultWriterConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var last error // the last failure retried
	bo := cfg.newBackoff()
	for attempt := 0; ; attempt++ {
		segs, err := c.writerSegments(ctx, scope, stream)
		if err == nil && cfg.sequenced {
			rs, rerr := c.loadResume(ctx, scope, stream, cfg)
			if rerr != nil {
				return nil, rerr
			}
			w := c.newWriter(scope, stream, cfg, segs, false)
			w.resume = rs
			return w, nil
		}
		if err == nil {
			return c.newWriter(scope, stream, cfg, segs, false), nil
		}
		if ctx.Err() != nil && last != nil {
			return nil, fmt.Errorf("client: writer of %s/%s: %w; last failure: %w", scope, stream, ctx.Err(), last)
		}
		if !errors.Is(err, ctlclient.ErrUnreachable) && !errors.Is(err, ctlclient.ErrUnavailable) {
			return nil, err
		}
		last = err
		c.retrying(attempt+1, err)
		if serr := retry.Sleep(ctx, bo.NextBackOff()); serr != nil {
			return nil, fmt.Errorf("client: writer of %s/%s: %w; last failure: %w", scope, stream, serr, err)
		}
	}
}

// writerSegments returns the current segments of a stream open for
// writing (one try).
func (c *Client) writerSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error) {
	info, err := c.ctl.GetStream(ctx, scope, stream)
	if err != nil {
		return nil, fmt.Errorf("client: writer of %s/%s: %w", scope, stream, err)
	}
	if info.Sealed {
		return nil, fmt.Errorf("client: writer of %s/%s: %w", scope, stream, protocol.ErrSegmentSealed)
	}
	segs, err := c.ctl.CurrentSegments(ctx, scope, stream)
	if err != nil {
		return nil, fmt.Errorf("client: writer of %s/%s: %w", scope, stream, err)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("client: writer of %s/%s: the stream has no active segment", scope, stream)
	}
	return segs, nil
}

// newWriter returns a writer of scope/stream with configuration cfg and
// starts the goroutines of segs; txn marks a transaction's writer.
func (c *Client) newWriter(scope, stream string, cfg writerConfig, segs []api.SegmentRange, txn bool) *Writer {
	if txn {
		cfg.sequenced = false // a transaction numbers its own events
	}
	w := &Writer{c: c, scope: scope, stream: stream, cfg: cfg, txn: txn}
	if cfg.sequenced {
		w.resume = &resumeState{index: newResumeIndex(nil)}
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.mu.segs = map[string]*segWriter{}
	w.mu.groups = map[*ackGroup]struct{}{}
	w.mu.space = make(chan struct{})
	w.mu.Lock()
	for _, s := range segs {
		w.addSegmentLocked(s)
	}
	w.mu.Unlock()
	return w
}

// ID returns the writer id.
func (w *Writer) ID() string { return w.cfg.id }

// Write validates event, routes it by key (protocol.KeyHash; an empty key
// spreads events round-robin), and queues it for its segment's goroutine.
// It blocks only while the in-flight window (WithMaxInflight) is full,
// until room is made or ctx is done (then ctx.Err() and nothing is
// written). An event over protocol.MaxEventSize is refused at once with an
// error wrapping protocol.ErrEventTooLarge; nothing is sent and the writer
// stays usable. event may be reused when Write returns. Events with the
// same key are stored in the order of their Writes.
func (w *Writer) Write(ctx context.Context, key string, event []byte) (*Ack, error) {
	if w.cfg.sequenced {
		return nil, fmt.Errorf("client: write to %s/%s: Write on a sequenced writer (use WriteSeq): %w", w.scope, w.stream, ErrSequenced)
	}
	if err := protocol.CheckEvent(event); err != nil {
		return nil, fmt.Errorf("client: write to %s/%s: %w", w.scope, w.stream, err)
	}
	size := int64(protocol.EventHeaderSize + len(event))
	w.mu.Lock()
	for {
		if w.mu.closed {
			w.mu.Unlock()
			return nil, ErrClosed
		}
		if fits, err := w.waitSpaceLocked(ctx, size); err != nil {
			return nil, err
		} else if fits {
			break
		}
	}
	a := w.routeLocked(w.mu.routes, key).addLocked(key, 0, event, nil)
	w.mu.Unlock()
	return a, nil
}

// waitSpaceLocked reports whether an event of size bytes fits in the
// writer's in-flight budget now (an idle writer takes any event). If not,
// it unlocks w.mu, waits until some space is freed and locks w.mu again,
// for the caller to check anew; if ctx ends first, it returns ctx.Err()
// with w.mu unlocked.
func (w *Writer) waitSpaceLocked(ctx context.Context, size int64) (bool, error) {
	if w.mu.inflight == 0 || w.mu.inflight+size <= w.cfg.maxInflight {
		return true, nil
	}
	space := w.mu.space
	w.mu.Unlock()
	select {
	case <-space:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	w.mu.Lock()
	return false, nil
}

// newAckLocked returns a new unsettled Ack of group g for size bytes,
// which it counts in the window.
func (w *Writer) newAckLocked(g *ackGroup, size int) *Ack {
	if len(w.mu.slab) == 0 {
		w.mu.slab = make([]Ack, 256)
	}
	a := &w.mu.slab[0]
	w.mu.slab = w.mu.slab[1:]
	a.g, a.size = g, int32(size)
	g.n++
	w.mu.inflight += int64(size)
	return a
}

// newBlockLocked returns an empty block able to take size bytes: a
// released one if there is one, else a new one of minBlock bytes (or
// size), which grows up to MaxBatch as events come (small for a slow
// writer, MaxBatch once reused under load).
func (w *Writer) newBlockLocked(size int) *block {
	if n := len(w.mu.free); n > 0 {
		b := w.mu.free[n-1]
		w.mu.free[n-1] = nil
		w.mu.free = w.mu.free[:n-1]
		b.grow(size, w.cfg.maxBatch)
		return b
	}
	return &block{data: make([]byte, 0, max(size, min(minBlock, w.cfg.maxBatch)))}
}

// minBlock is the capacity of a new block's buffer.
const minBlock = 64 << 10

// grow makes room for size more bytes in b.data: doubling, up to max
// (beyond only for one large event).
func (b *block) grow(size, max int) {
	if cap(b.data)-len(b.data) >= size {
		return
	}
	n := min(2*cap(b.data), max)
	if n < len(b.data)+size {
		n = len(b.data) + size
	}
	data := make([]byte, len(b.data), n)
	copy(data, b.data)
	b.data = data
}

// releaseLocked keeps b's buffers for another block. b must not be used
// afterwards.
func (w *Writer) releaseLocked(b *block) {
	b.live = nil // a late acknowledgement settles nothing (ackSession)
	if cap(b.data) > w.cfg.maxBatch || len(w.mu.free) >= 4+2*len(w.mu.segs) {
		return
	}
	clear(b.acks)
	clear(b.keys)
	*b = block{data: b.data[:0], acks: b.acks[:0], keys: b.keys[:0], seqs: b.seqs[:0]}
	w.mu.free = append(w.mu.free, b)
}

// Flush blocks until every event written before it was called is
// acknowledged or has failed, or ctx is done. It returns the writer's
// first failure, also of an event that had failed before Flush was called
// (so after one, every Flush returns it), or ctx.Err() (the events are
// still being written, and a later Flush or Close waits for them again).
// Flush itself sends nothing: the segment goroutines retry meanwhile, as
// they always do.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	groups := make([]*ackGroup, 0, len(w.mu.groups))
	for g := range w.mu.groups {
		groups = append(groups, g)
	}
	first := w.mu.failure // of events already settled
	w.mu.Unlock()
	for _, g := range groups {
		select {
		case <-g.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if g.err != nil && first == nil {
			first = g.err
		}
	}
	return first
}

// Close flushes (until ctx is done), then stops the writer's goroutines,
// which it waits for: they stop at once, since each of their calls runs on
// a context Close cancels. So Close returns soon after ctx is done, also
// when a node does not answer; with a ctx already done it only stops
// (and removes a writer that noted times, below).
// Events not acknowledged by then fail with ErrClosed (they may still have
// been stored). Writes after Close fail with ErrClosed. It returns Flush's
// error. Closing twice is not an error.
//
// A writer that noted times (NoteTime, Txn.CommitAt) is then removed
// from the controller's writers, best effort: Close waits for that at
// most a few seconds (also with a ctx already done), a stream deleted
// meanwhile counts as done, and a failure is never returned, only told to
// the WithRetryNotify hook, if any: the controller times the writer out.
func (w *Writer) Close(ctx context.Context) error {
	err := w.Flush(ctx)
	w.mu.Lock()
	w.mu.closed = true
	w.mu.Unlock()
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	// Every unsettled event is in a block of a segment that has not
	// moved its events on: the goroutines are gone, their state is ours.
	for _, s := range w.mu.segs {
		for _, b := range s.takeAllLocked() {
			w.settleBlockLocked(b, ErrClosed)
		}
	}
	w.mu.Unlock()
	w.forgetTime(ctx)
	return err
}

// routeLocked picks among routes the segment for ev: the one whose range
// holds the key's hash (during a merge a successor may overlap a
// predecessor not yet known sealed: the older one wins, and forwards), or
// the next one round-robin for an empty key.
func (w *Writer) routeLocked(routes []*segWriter, key string) *segWriter {
	if key == "" {
		s := routes[w.mu.rr%len(routes)]
		w.mu.rr++
		return s
	}
	h := protocol.KeyHash(key)
	var best *segWriter
	for _, s := range routes {
		if s.r.KeyLow <= h && h < s.r.KeyHigh && (best == nil || s.r.Epoch < best.r.Epoch) {
			best = s
		}
	}
	if best == nil { // ranges always cover [0,1); guard against rounding
		best = routes[len(routes)-1]
	}
	return best
}

// addSegmentLocked starts the goroutine of segment r, unless it runs.
func (w *Writer) addSegmentLocked(r api.SegmentRange) *segWriter {
	if s := w.mu.segs[r.Segment]; s != nil {
		return s
	}
	s := &segWriter{w: w, r: r, wake: make(chan struct{}, 1),
		wireID: wireWriterID(w.cfg.id, r)}
	w.mu.segs[r.Segment] = s
	w.mu.routes = append(w.mu.routes, s)
	if w.cfg.sequenced {
		w.supersedeLocked(s)
	}
	w.wg.Add(1)
	go s.run()
	return s
}

// settleLocked gives Ack a its outcome once, releasing its window bytes,
// and closes its group's channel with the last of the group.
func (w *Writer) settleLocked(a *Ack, err error) {
	if a.settled {
		return
	}
	a.settled = true
	a.err = err
	w.mu.inflight -= int64(a.size)
	g := a.g
	if err != nil {
		if g.err == nil {
			g.err = err
		}
		w.failedLocked(err)
	}
	g.n--
	if g.n == 0 {
		delete(w.mu.groups, g)
		g.at = time.Now()
		close(g.done)
	}
}

// failedLocked records the failure of an event for Flush if it is the
// first (ErrClosed aside: Close settles events with it after its Flush).
func (w *Writer) failedLocked(err error) {
	if w.mu.failure == nil && !errors.Is(err, ErrClosed) {
		w.mu.failure = err
	}
}

// settleBlockLocked settles every event of b with err and releases b.
func (w *Writer) settleBlockLocked(b *block, err error) {
	for _, a := range b.acks {
		w.settleLocked(a, err)
	}
	w.releaseLocked(b)
}

// finish settles the events of blocks with err and wakes blocked Writes.
func (w *Writer) finish(err error, blocks ...*block) {
	w.mu.Lock()
	for _, b := range blocks {
		w.settleBlockLocked(b, err)
	}
	close(w.mu.space)
	w.mu.space = make(chan struct{})
	w.mu.Unlock()
}

// sleep waits d or until the writer closes; it reports whether to go on.
func (w *Writer) sleep(d time.Duration) bool { return retry.Sleep(w.ctx, d) == nil }
