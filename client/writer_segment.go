package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// segWriter is the goroutine of one segment of a Writer, and its state.
//
// Invariants: queue holds events not yet in a block, in write order;
// inflight holds blocks in event-number order, each with fixed numbers and
// bytes, sent or waiting to be resent; every event of inflight comes before
// every event of queue.
type segWriter struct {
	w      *Writer
	r      api.SegmentRange
	wireID string
	wake   chan struct{} // cap 1: queue grew

	// Guarded by w.mu.
	queue  []*event
	queued int   // bytes in queue
	moved  bool  // sealed and emptied: events go to the successors
	failed error // the segment cannot be written: events fail at once

	// Owned by the goroutine.
	inflight []*block
	nextNum  int64 // the next event number; valid once numbered
	numbered bool
	endpoint string
}

type block struct {
	events []*event
	last   int64 // the event number of the last event
	data   []byte
	fut    *segclient.AppendFuture // nil: not sent on the current connection
}

// enqueueLocked queues ev; w.mu is held.
func (s *segWriter) enqueueLocked(ev *event) {
	if s.failed != nil {
		s.w.finishLocked(ev.ack, s.failed)
		return
	}
	s.queue = append(s.queue, ev)
	s.queued += len(ev.framed)
	select {
	case s.wake <- struct{}{}:
	default:
	}
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
		case errors.Is(err, protocol.ErrNoSuchSegment), errors.Is(err, errBlockRefused):
			s.fail(err)
			return
		}
		s.report(StateDisconnected, err)
		if progress {
			attempt = 0
		}
		if !s.w.sleep(s.w.backoff(attempt)) {
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
			if _, err := b.fut.Wait(ctx); err != nil {
				c.Invalidate(s.r.Segment, conn, err)
				if !retriable(err) {
					// The node refused this block but may take the next
					// ones: a later setup would then count it as stored.
					// Its events fail instead, and the segment with them.
					return progress, fmt.Errorf("%w: %w", errBlockRefused, err)
				}
				return progress, err
			}
			s.inflight = s.inflight[1:]
			s.w.finish(b.events, nil)
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
		s.w.finish(s.inflight[n].events, nil)
		n++
	}
	s.inflight = s.inflight[n:]
	for _, b := range s.inflight {
		b.fut = nil
	}
	return nil
}

func (s *segWriter) send(conn *segclient.Conn, b *block) error {
	fut, err := conn.AppendAsync(s.w.ctx, s.wireID, b.last, int32(len(b.events)), b.data, protocol.NoExpectedOffset)
	if err != nil {
		s.w.c.Invalidate(s.r.Segment, conn, err)
		return err
	}
	b.fut = fut
	return nil
}

// sendQueued turns the queue into blocks and sends them: at once when
// nothing is in flight, else only once MaxBatch bytes are queued.
func (s *segWriter) sendQueued(conn *segclient.Conn) error {
	w := s.w
	w.mu.Lock()
	if len(s.queue) == 0 || (len(s.inflight) > 0 && s.queued < w.cfg.maxBatch) {
		w.mu.Unlock()
		return nil
	}
	evs := s.queue
	s.queue, s.queued = nil, 0
	w.mu.Unlock()
	for len(evs) > 0 {
		n, size := 1, len(evs[0].framed)
		for n < len(evs) && size+len(evs[n].framed) <= w.cfg.maxBatch {
			size += len(evs[n].framed)
			n++
		}
		data := make([]byte, 0, size)
		for _, ev := range evs[:n] {
			data = append(data, ev.framed...)
		}
		b := &block{events: evs[:n:n], last: s.nextNum + int64(n) - 1, data: data}
		s.nextNum += int64(n)
		evs = evs[n:]
		s.inflight = append(s.inflight, b)
		if err := s.send(conn, b); err != nil {
			// The rest wait in blocks of their own for the next session.
			for len(evs) > 0 {
				rb := &block{events: evs[:1:1], last: s.nextNum, data: evs[0].framed}
				s.nextNum++
				s.inflight = append(s.inflight, rb)
				evs = evs[1:]
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
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !w.sleep(w.backoff(attempt-1)) {
			return
		}
		conn, err := c.SegmentConn(w.ctx, s.r.Segment)
		if err != nil {
			c.forget(s.r.Segment)
			s.report(StateDisconnected, err)
			continue
		}
		if err := s.setup(conn); err != nil {
			if errors.Is(err, protocol.ErrNoSuchSegment) {
				s.fail(err)
				return
			}
			s.report(StateDisconnected, err)
			continue
		}
		break
	}
	var succ []api.Successor
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !w.sleep(w.backoff(attempt-1)) {
			return
		}
		var err error
		succ, err = c.ctl.Successors(w.ctx, s.r.Segment)
		if err == nil && len(succ) > 0 {
			break
		}
		if err == nil {
			err = fmt.Errorf("client: sealed segment %s has no successor (the stream is sealed)", s.r.Segment)
			if info, gerr := c.ctl.GetStream(w.ctx, w.scope, w.stream); gerr == nil && info.Sealed {
				s.fail(fmt.Errorf("client: %s/%s: %w", w.scope, w.stream, protocol.ErrSegmentSealed))
				return
			}
		}
		s.report(StateDisconnected, err)
	}
	var evs []*event
	for _, b := range s.inflight {
		evs = append(evs, b.events...)
	}
	s.inflight = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	evs = append(evs, s.queue...)
	s.queue, s.queued, s.moved = nil, 0, true
	delete(w.mu.segs, s.r.Segment)
	w.removeRouteLocked(s)
	var next []*segWriter
	for _, sc := range succ {
		next = append(next, w.addSegmentLocked(sc.Segment))
	}
	for _, ev := range evs {
		w.routeLocked(next, ev).enqueueLocked(ev)
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
	var evs []*event
	for _, b := range s.inflight {
		evs = append(evs, b.events...)
	}
	s.inflight = nil
	w := s.w
	w.mu.Lock()
	s.failed = err
	evs = append(evs, s.queue...)
	s.queue, s.queued = nil, 0
	w.mu.Unlock()
	w.finish(evs, err)
}

func (w *Writer) removeRouteLocked(s *segWriter) {
	for i, r := range w.mu.routes {
		if r == s {
			w.mu.routes = append(w.mu.routes[:i:i], w.mu.routes[i+1:]...)
			return
		}
	}
}
