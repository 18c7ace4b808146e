package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// segWriter is the goroutine of one segment of a Writer, and its state.
//
// Write frames each event straight into the segment's open block (a
// reused buffer); a full block waits in ready. Invariants: ready
// then open hold events not yet sent, in write order; inflight holds
// blocks in event-number order, each with fixed numbers and bytes, sent
// or waiting to be resent; every event of inflight comes before every
// event of ready and open.
type segWriter struct {
	w      *Writer
	r      api.SegmentRange
	wireID string
	wake   chan struct{} // cap 1: a block is worth sending

	// Guarded by w.mu.
	ready  []*block // full blocks, not yet sent
	open   *block   // the block taking new events, or nil
	nfl    int      // len(inflight) when the goroutine last looked at the queue
	moved  bool     // sealed and emptied: events go to the successors
	failed error    // the segment cannot be written: events fail at once
	// acked is the segment's length after this writer's last acknowledged
	// append (for NoteTime); ackedUnknown: blocks were acknowledged by a
	// setup, whose answer has no offset. Atomics: no lock on the ack path.
	acked        atomic.Int64
	ackedUnknown atomic.Bool

	// superseded (guarded by w.mu): newer segments of the writer cover
	// this one's range (sequenced writers only; see supersedeLocked).
	superseded bool

	// Owned by the goroutine.
	inflight []*block
	nextNum  int64 // the next event number; valid once numbered
	numbered bool
	endpoint string
	sess     *ackSession // the current session's
}

// block is an append block: framed events, and per event its Ack and key
// (to route it again if the segment is sealed).
type block struct {
	data []byte // protocol.AppendEvent framing
	acks []*Ack
	keys []string
	seqs []int64                 // sequenced writers: each event's sequence number
	grp  *ackGroup               // the group of the Acks created in this block, or nil
	last int64                   // the event number of the last event
	fut  *segclient.AppendFuture // nil: not sent on the current connection
	// live (guarded by w.mu) is the session the block was last sent in,
	// while its acknowledgement may still settle its events from the
	// connection's reader (ackSession); nil once released.
	live *ackSession
}

// ackSession lets the connection's reader goroutine settle the events of
// a session's blocks as their acknowledgements arrive (segclient's
// AppendAsyncNotify), without waking the segment's goroutine first: an
// Ack is done one goroutine hop earlier. The reader notifies a
// connection's acks one at a time, in the order the node sent them,
// which is the order of the blocks; from the first failure on (or once
// the session ended) it settles nothing more, and the segment's
// goroutine decides, as it always did, what becomes of the blocks left.
// The goroutine still pops each acknowledged block and releases it;
// settling an Ack twice is a no-op (settleLocked).
type ackSession struct {
	broken bool // guarded by w.mu
}

// notifier returns the callback that settles b's events when the node
// acknowledges b in session sess.
func (s *segWriter) notifier(sess *ackSession, b *block) func(*protocol.DataAppended, error) {
	w := s.w
	return func(da *protocol.DataAppended, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil || sess.broken || b.live != sess {
			sess.broken = true
			return
		}
		s.noteAcked(da.CurrentOffset, false)
		for _, a := range b.acks {
			w.settleLocked(a, nil)
		}
	}
}

// addLocked frames event into the open block. a is nil for a new event
// (Write: it returns the new Ack) or the Ack of an event moved from a
// sealed segment. w.mu is held.
func (s *segWriter) addLocked(key string, seq int64, event []byte, a *Ack) *Ack {
	w := s.w
	if s.failed != nil {
		if a == nil {
			w.failedLocked(s.failed)
			return &Ack{g: settledGroup, err: s.failed, settled: true}
		}
		w.settleLocked(a, s.failed)
		return a
	}
	size := protocol.EventHeaderSize + len(event)
	b := s.open
	wake := s.nfl < sendAhead
	if b != nil && len(b.data)+size > w.cfg.maxBatch {
		s.ready = append(s.ready, b)
		b, wake = nil, true
	}
	if b == nil {
		b = w.newBlockLocked(size)
		s.open = b
	}
	if a == nil {
		if b.grp == nil {
			b.grp = &ackGroup{done: make(chan struct{})}
			w.mu.groups[b.grp] = struct{}{}
		}
		a = w.newAckLocked(b.grp, size)
	}
	b.grow(size, w.cfg.maxBatch)
	b.data = protocol.AppendEvent(b.data, event)
	b.acks = append(b.acks, a)
	b.keys = append(b.keys, key)
	if w.cfg.sequenced {
		b.seqs = append(b.seqs, seq)
	}
	if wake {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return a
}

// takeAllLocked removes and returns every block of the segment, in order:
// inflight (the goroutine must not run), ready, open.
func (s *segWriter) takeAllLocked() []*block {
	bs := append(s.inflight, s.ready...)
	if s.open != nil {
		bs = append(bs, s.open)
	}
	s.inflight, s.ready, s.open, s.nfl = nil, nil, nil, 0
	return bs
}

func (s *segWriter) report(st State, err error) {
	if f := s.w.cfg.state; f != nil {
		f(StateChange{Segment: s.r.Segment, State: st, Endpoint: s.endpoint, Err: err})
	}
}

// run connects and writes until the segment is sealed and its events moved,
// it fails for good, or the writer closes.
func (s *segWriter) run() {
	defer s.w.wg.Done()
	attempt := 0
	bo := s.w.cfg.newBackoff()
	for {
		progress, err := s.session()
		switch {
		case s.w.ctx.Err() != nil:
			return
		case errors.Is(err, protocol.ErrSegmentSealed) && s.w.txn:
			s.fail(err)
			return
		case errors.Is(err, protocol.ErrSegmentSealed):
			s.report(StateSealed, nil)
			s.moveToSuccessors()
			return
		case errors.Is(err, errRetired):
			return
		case errors.Is(err, protocol.ErrNoSuchSegment), errors.Is(err, errBlockRefused):
			s.fail(err)
			return
		}
		s.report(StateDisconnected, err)
		if progress {
			attempt = 0
			bo.Reset()
		}
		s.w.c.retrying(attempt+1, fmt.Errorf("client: segment %s: %w", s.r.Segment, err))
		if !s.w.sleep(bo.NextBackOff()) {
			return
		}
		attempt++
	}
}

// session runs one connection: setup, resend, then the send/ack loop.
// progress says whether any block was acknowledged.
func (s *segWriter) session() (progress bool, err error) {
	ctx := s.w.ctx
	c := s.w.c
	s.sess = &ackSession{}
	defer func() {
		s.w.mu.Lock()
		s.sess.broken = true
		s.w.mu.Unlock()
	}()
	s.report(StateConnecting, nil)
	addr, err := c.Endpoint(ctx, s.r.Segment)
	if err != nil {
		return false, err
	}
	s.endpoint = addr
	conn, err := c.Conn(ctx, addr)
	if err != nil {
		c.forget(s.r.Segment)
		return false, err
	}
	if err := s.setup(conn); err != nil {
		return false, err
	}
	s.report(StateConnected, nil)
	for _, b := range s.inflight {
		if err := s.send(conn, b); err != nil {
			return false, err
		}
	}
	for {
		if err := s.sendQueued(conn); err != nil {
			return progress, err
		}
		var headDone <-chan struct{}
		if len(s.inflight) > 0 {
			headDone = s.inflight[0].fut.Done()
		}
		select {
		case <-s.wake:
		case <-headDone:
			b := s.inflight[0]
			da, err := b.fut.Wait(ctx)
			if err != nil {
				c.Invalidate(s.r.Segment, conn, err)
				if !retriable(err) {
					// The node refused this block but may take the next
					// ones: a later setup would then count it as stored.
					// Its events fail instead, and the segment with them.
					return progress, fmt.Errorf("%w: %w", errBlockRefused, err)
				}
				return progress, err
			}
			s.inflight[0] = nil
			s.inflight = s.inflight[1:]
			s.noteAcked(da.CurrentOffset, false)
			s.w.finish(nil, b)
			progress = true
		case <-conn.Done():
			c.Invalidate(s.r.Segment, conn, conn.Err())
			return progress, conn.Err()
		case <-ctx.Done():
			return progress, ctx.Err()
		}
	}
}

// setup calls SetupAppend, acknowledges the blocks the node already holds,
// and on the first setup takes the event numbers up from the node's.
func (s *segWriter) setup(conn *segclient.Conn) error {
	last, err := conn.SetupAppend(s.w.ctx, s.wireID, s.r.Segment)
	if err != nil {
		s.w.c.Invalidate(s.r.Segment, conn, err)
		return err
	}
	if !s.numbered {
		s.numbered = true
		if last != protocol.NoEventNumber {
			s.nextNum = last + 1
		}
	}
	n := 0
	for n < len(s.inflight) && last != protocol.NoEventNumber && s.inflight[n].last <= last {
		n++
	}
	if n > 0 {
		s.noteAcked(0, true)
		s.w.finish(nil, s.inflight[:n]...)
		s.inflight = s.inflight[n:]
	}
	for _, b := range s.inflight {
		b.fut = nil
	}
	return nil
}

func (s *segWriter) send(conn *segclient.Conn, b *block) error {
	s.w.mu.Lock()
	b.live = s.sess
	s.w.mu.Unlock()
	fut, err := conn.AppendAsyncNotify(s.w.ctx, s.wireID, b.last, int32(len(b.acks)), b.data, protocol.NoExpectedOffset,
		s.notifier(s.sess, b))
	if err != nil {
		s.w.c.Invalidate(s.r.Segment, conn, err)
		return err
	}
	b.fut = fut
	return nil
}

// sendAhead is how many blocks may be in flight before a block that is
// not full waits for an acknowledgement. With one, an event written while
// a block is in flight waits for that block's round trip before its own
// starts (about one and a half round trips at a steady rate); with more,
// it goes at once and waits at the node for the log's running sync only,
// which the node's group commit has it share. Measured at 10 MiB/s of 1
// KiB events (docs/BENCHMARKS.md): four gave the lowest p50 and p99 (eight
// a worse p99: more frames on the same cores). Under load the blocks
// still fill up to MaxBatch while four are in flight.
const sendAhead = 4

// sendQueued numbers and sends the blocks waiting: all of them while
// fewer than sendAhead are in flight, else only the full ones (MaxBatch
// bytes). Write wakes the goroutine only when that would send something.
func (s *segWriter) sendQueued(conn *segclient.Conn) error {
	w := s.w
	w.mu.Lock()
	if w.cfg.sequenced {
		if s.superseded && len(s.inflight) == 0 && len(s.ready) == 0 && s.open == nil {
			// Nothing left, and nothing new will come: retire.
			s.nfl = 0
			delete(w.mu.segs, s.r.Segment)
			s.moved = true
			w.pokeAllLocked()
			w.mu.Unlock()
			return errRetired
		}
		if s.nfl > len(s.inflight) && w.newerOverlapLocked(s) {
			w.pokeAllLocked() // s holds fewer events: a hold may end
		}
		if w.heldLocked(s) {
			s.nfl = len(s.inflight)
			w.mu.Unlock()
			return nil
		}
	}
	take := s.ready
	s.ready = nil
	if len(s.inflight) < sendAhead && s.open != nil {
		take = append(take, s.open)
		s.open = nil
	}
	s.nfl = len(s.inflight) + len(take)
	w.mu.Unlock()
	for i, b := range take {
		n := int64(len(b.acks))
		b.last = s.nextNum + n - 1
		s.nextNum += n
		if w.cfg.sequenced {
			b.last = b.seqs[len(b.seqs)-1]
		}
		s.inflight = append(s.inflight, b)
		if err := s.send(conn, b); err != nil {
			// The rest wait, numbered, for the next session.
			for _, rb := range take[i+1:] {
				n := int64(len(rb.acks))
				rb.last = s.nextNum + n - 1
				s.nextNum += n
				if w.cfg.sequenced {
					rb.last = rb.seqs[len(rb.seqs)-1]
				}
				s.inflight = append(s.inflight, rb)
			}
			return err
		}
	}
	return nil
}

// moveToSuccessors runs once the node said the segment is sealed: it learns
// which events the segment kept (SetupAppend answers for a sealed segment),
// fetches the successors, and moves every other event, in order, to them,
// ahead of later writes. It retries with backoff until the writer closes.
func (s *segWriter) moveToSuccessors() {
	w, c := s.w, s.w.c
	bo := w.cfg.newBackoff()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !w.sleep(bo.NextBackOff()) {
			return
		}
		conn, err := c.SegmentConn(w.ctx, s.r.Segment)
		if w.ctx.Err() != nil {
			return // closed: nothing to report or retry
		}
		if err != nil {
			c.forget(s.r.Segment)
			s.report(StateDisconnected, err)
			c.retrying(attempt+1, fmt.Errorf("client: sealed segment %s: %w", s.r.Segment, err))
			continue
		}
		if err := s.setup(conn); err != nil {
			if errors.Is(err, protocol.ErrNoSuchSegment) {
				s.fail(err)
				return
			}
			if w.ctx.Err() != nil {
				return
			}
			s.report(StateDisconnected, err)
			c.retrying(attempt+1, fmt.Errorf("client: sealed segment %s: %w", s.r.Segment, err))
			continue
		}
		break
	}
	var succ []api.Successor
	bo.Reset()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !w.sleep(bo.NextBackOff()) {
			return
		}
		var err error
		succ, err = c.ctl.Successors(w.ctx, s.r.Segment)
		if err == nil && len(succ) > 0 {
			break
		}
		if w.ctx.Err() != nil {
			return // closed: nothing to report or retry
		}
		if err == nil {
			err = fmt.Errorf("client: sealed segment %s has no successor (the stream is sealed)", s.r.Segment)
			if info, gerr := c.ctl.GetStream(w.ctx, w.scope, w.stream); gerr == nil && info.Sealed {
				s.fail(fmt.Errorf("client: %s/%s: %w", w.scope, w.stream, protocol.ErrSegmentSealed))
				return
			}
		}
		s.report(StateDisconnected, err)
		c.retrying(attempt+1, fmt.Errorf("client: successors of %s: %w", s.r.Segment, err))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	blocks := s.takeAllLocked()
	s.moved = true
	delete(w.mu.segs, s.r.Segment)
	w.removeRouteLocked(s)
	var next []*segWriter
	for _, sc := range succ {
		next = append(next, w.addSegmentLocked(sc.Segment))
	}
	if w.cfg.sequenced {
		w.moveSequencedLocked(next, blocks)
		w.pokeAllLocked()
		return
	}
	for _, m := range eventsOf(nil, blocks) {
		w.routeLocked(next, m.key).addLocked(m.key, 0, m.ev, m.a)
	}
	for _, b := range blocks {
		w.releaseLocked(b)
	}
}

// errBlockRefused marks a block the node refused for a reason that a
// retry would not change.
var errBlockRefused = errors.New("client: the node refused an append block")

// retriable reports whether an append may succeed if sent again: the
// connection broke, the segment moved or its container is unavailable for
// now, it was sealed (its events move to the successors), or the writer is
// closing.
func retriable(err error) bool {
	return errors.Is(err, segclient.ErrConnectionClosed) || protocol.IsRetriable(err) ||
		errors.Is(err, protocol.ErrSegmentSealed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}

// fail ends the segment for good: its events, and those routed to it
// later, fail with err.
func (s *segWriter) fail(err error) {
	s.report(StateFailed, err)
	w := s.w
	w.mu.Lock()
	s.failed = err
	blocks := s.takeAllLocked()
	if w.cfg.sequenced {
		w.pokeAllLocked() // a hold on s's events may end
	}
	w.mu.Unlock()
	w.finish(err, blocks...)
}

func (w *Writer) removeRouteLocked(s *segWriter) {
	for i, r := range w.mu.routes {
		if r == s {
			w.mu.routes = append(w.mu.routes[:i:i], w.mu.routes[i+1:]...)
			return
		}
	}
}
