package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
)

// replyQueue is the length of a connection's reply queue, between the
// goroutines that answer requests and the writer.
const replyQueue = 256

// writeBufferSize is the writer's buffer: small replies (acks, errors)
// collect there until the reply queue is empty.
const writeBufferSize = 32 << 10

// writeRearm is how many replies of one batch the writer writes between
// two settings of the write deadline (see writeLoop).
const writeRearm = 256

// conn is one client connection. Lifecycle (serve): the reader runs until
// the client goes, a fatal frame, or the server closes; then the reads
// are cancelled, the ack FIFO is closed and drained, the request
// goroutines are waited for, a last ErrorReply is queued if the stream was
// refused, the reply queue is closed and the writer drains it, and only
// then is the socket closed.
type conn struct {
	s    *Server
	nc   net.Conn
	peer *peer
	log  logrus.FieldLogger

	// ctx is done when the connection is dead (the writer failed, or the
	// server closes): senders stop waiting on the reply queue.
	ctx    context.Context
	cancel context.CancelFunc
	// readCtx, a child of ctx, is cancelled when the reader stops, so
	// that parked tail reads end.
	readCtx     context.Context
	cancelReads context.CancelFunc

	out   chan protocol.Message // reply queue, closed once every sender is done
	acks  chan ackItem          // append FIFO; the reader is its only sender
	reads chan struct{}         // read slots (Options.MaxReadsPerConn)
	ops   chan struct{}         // slots of other waiting requests
	wg    sync.WaitGroup        // request goroutines

	// deadlineSet is true while a handshake or idle read deadline is
	// set; it changes only under mu. Invariant: an idle deadline is set
	// only while mu.busy == 0 and mu.writers is empty. hasWriters mirrors
	// len(mu.writers) > 0. Both are atomic so that the reader of a busy
	// connection checks them without the lock.
	deadlineSet atomic.Bool
	hasWriters  atomic.Bool
	// closing is set once serve has set the write deadline of the last
	// replies: the writer no longer moves it.
	closing atomic.Bool

	// The reader's own state, touched only by the reader goroutine:
	// handshake is true until the first complete frame; inFrame is true
	// from the grant of a frame's request memory until the frame is read;
	// frameArmed is true once the frame deadline is set for it.
	handshake  bool
	inFrame    bool
	frameArmed bool

	mu struct {
		sync.Mutex
		writers map[string]*writerState
		// busy counts the requests in flight other than appends (reads,
		// setups, other ops): while it is above 0 the connection is not
		// idle.
		busy int
	}
}

// writerState is what a connection knows of a writer id. Its fields are
// guarded by conn.mu, which is never held while calling a container.
type writerState struct {
	// segment is the segment the writer is bound to by its last completed
	// SetupAppend; "" while it has none.
	segment string
	// settingUp is true while a SetupAppend for the writer is in flight.
	settingUp bool
	// last is the event number of the writer's last block queued since
	// its setup (protocol.NoEventNumber if none): the next must be above.
	last int64
	// refused: a block of the writer was refused as retriable, which
	// unbound it (see unbindLocked).
	refused bool
	// setups counts the writer's completed SetupAppends.
	setups int
}

// unbindLocked unbinds a writer whose block was refused with a retriable
// error (protocol.IsRetriable: the container is moving or unavailable,
// say over its untiered bound). The writer resends that block after a new
// SetupAppend, so its blocks already sent behind it are refused too
// (WriterNotSetUp) until then: were one of them stored, the SetupAppend
// would report its number, above the refused block's, and the writer
// would count the refused block as stored. After a refusal that is not
// retriable the writer stays bound: it gives up those events itself.
func (c *conn) unbindLocked(writer string) {
	if w := c.mu.writers[writer]; w != nil {
		w.segment, w.refused = "", true
	}
}

// ackItem is one AppendBlock in the ack FIFO: either queued in a container
// (p) or refused (err).
type ackItem struct {
	reqID       int64
	writer      string
	segment     string
	eventNumber int64
	p           *container.PendingAppend
	err         error
	// held is the request memory the block's bytes hold, released once
	// the append is durable or refused.
	held int
}

// settled is a closed channel: the ready channel of a refused append.
var settled = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// ready returns a channel closed once the item's reply can be built
// without waiting for the log: at once for a refused block, when its
// batch is durable (or the log failed) for a queued one. It is nil for a
// resend, which waits for a sync point instead (ackReply blocks then).
func (it *ackItem) ready() <-chan struct{} {
	if it.err != nil {
		return settled
	}
	return it.p.Done()
}

func newConn(s *Server, nc net.Conn, p *peer) *conn {
	c := &conn{
		s: s, nc: nc, peer: p,
		log:   s.log.WithField("remote", nc.RemoteAddr().String()),
		out:   make(chan protocol.Message, replyQueue),
		acks:  make(chan ackItem, s.opts.AckQueue),
		reads: make(chan struct{}, s.opts.MaxReadsPerConn),
		ops:   make(chan struct{}, maxOpsPerConn),
	}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.readCtx, c.cancelReads = context.WithCancel(c.ctx)
	c.mu.writers = map[string]*writerState{}
	c.handshake = true
	return c
}

func (c *conn) serve() {
	c.log.Debug("server: connection opened")
	if d := c.s.opts.HandshakeTimeout; d > 0 {
		c.mu.Lock()
		c.setDeadlineLocked(time.Now().Add(d))
		c.mu.Unlock()
	}
	writerDone := make(chan struct{})
	acksDone := make(chan struct{})
	go c.writeLoop(acksDone, writerDone)

	last := c.readLoop()

	// Deliver what is owed, but do not wait forever for a client that
	// does not read.
	c.closing.Store(true)
	c.nc.SetWriteDeadline(time.Now().Add(closeWriteTimeout))
	c.cancelReads()
	close(c.acks)
	<-acksDone
	c.wg.Wait()
	if last != nil {
		c.send(last)
	}
	close(c.out)
	<-writerDone
	c.cancel()
	c.nc.Close()
	c.log.Debug("server: connection closed")
}

// send queues a reply; it gives up if the connection is dead.
func (c *conn) send(m protocol.Message) {
	if c.ctx.Err() != nil {
		releaseHeld(m)
		return
	}
	select {
	case c.out <- m:
	case <-c.ctx.Done():
		releaseHeld(m)
	}
}

// heldRead is a SegmentRead whose data the container lends (tier-2 chunk
// parts in reusable memory) until the reply is written.
type heldRead struct {
	*protocol.SegmentRead
	release func()
}

// releaseHeld gives back what a reply borrowed, once it is written or
// dropped.
func releaseHeld(m protocol.Message) {
	if h, ok := m.(heldRead); ok {
		h.release()
	}
}

// errorReply builds the ErrorReply for a failed request and logs failures
// that are the node's, not the client's.
func (c *conn) errorReply(reqID int64, err error, segment, writer string) *protocol.ErrorReply {
	r := protocol.NewErrorReply(reqID, err)
	if r.Segment == "" {
		r.Segment = segment
	}
	if r.WriterID == "" {
		r.WriterID = writer
	}
	switch r.Code {
	case protocol.CodeInternal, protocol.CodeContainerUnavailable:
		c.log.WithError(err).WithField("segment", segment).Error("server: request failed")
	}
	return r
}

// readLoop decodes and dispatches requests until the stream ends or must
// be closed. It returns the ErrorReply to send before closing, if any.
func (c *conn) readLoop() *protocol.ErrorReply {
	dec := protocol.NewDecoder(sockReader{c})
	dec.SetBudget(connMemory{c})
	for {
		// While the handshake deadline is set, it is the only one.
		if !c.hasWriters.Load() && !c.deadlineSet.Load() {
			c.mu.Lock()
			c.armIdleLocked()
			c.mu.Unlock()
		}
		m, err := dec.ReadMessage()
		if err != nil {
			if !protocol.IsFatal(err) {
				if !c.decodeFailed(err) {
					return nil
				}
				c.frameRead()
				continue
			}
			return c.fatal(err)
		}
		c.frameRead()
		req, ok := m.(protocol.Request)
		if !ok {
			if n := protocol.PayloadSize(m); n > 0 {
				c.releaseMem(n) // a SegmentRead from a client: nobody keeps it
			}
			var id int64 = -1
			if r, ok := m.(protocol.Reply); ok {
				id = r.ReqID()
			}
			c.log.Warnf("server: client sent %s, which is not a request", m.Type())
			c.send(c.errorReply(id, fmt.Errorf("%w: %s is not a request", protocol.ErrUnknownCommand, m.Type()), "", ""))
			continue
		}
		last, ok := c.dispatch(req)
		if last != nil || !ok {
			return last
		}
	}
}

// connMemory is the protocol.Budget of a connection's decoder: the
// server's request memory, the connection's peer's share first. A wait
// ends when the connection dies (its writer failed or timed out) or the
// server closes: c.ctx is cancelled then.
//
// The decoder calls Acquire once a frame's prefix has arrived and before
// it reads the frame's body, so a grant starts the frame's body: from
// then on the frame deadline (sockReader) applies to it.
type connMemory struct{ c *conn }

func (m connMemory) Acquire(n int) error {
	if err := m.c.s.acquireMem(m.c.ctx, m.c.peer, int64(n)); err != nil {
		return err
	}
	m.c.inFrame = true
	return nil
}

func (m connMemory) Release(n int) { m.c.releaseMem(n) }

func (c *conn) releaseMem(n int) { c.s.releaseMem(c.peer, int64(n)) }

// sockReader is the socket as the connection's decoder reads it, through
// the decoder's buffer: Read is called only when the buffer lacks bytes.
// The first Read of a frame body that holds request memory sets the
// frame deadline; a body that was already buffered costs nothing.
type sockReader struct{ c *conn }

func (r sockReader) Read(p []byte) (int, error) {
	if c := r.c; c.inFrame && !c.frameArmed {
		c.armFrame()
	}
	return r.c.nc.Read(p)
}

// armFrame sets the frame deadline, in place of a handshake or idle
// deadline: the rest of the frame must arrive within FrameTimeout (and,
// before the first complete frame, within HandshakeTimeout too). Time
// spent waiting for memory before counts for neither, and an idle
// deadline set before the frame began cannot expire inside it.
func (c *conn) armFrame() {
	c.frameArmed = true
	d := c.s.opts.FrameTimeout
	if h := c.s.opts.HandshakeTimeout; c.handshake && h > 0 && (d <= 0 || h < d) {
		d = h
	}
	c.mu.Lock()
	if d > 0 {
		c.setDeadlineLocked(time.Now().Add(d))
	} else {
		c.clearDeadlineLocked()
	}
	c.mu.Unlock()
}

// setDeadlineLocked sets the read deadline (handshake, idle or frame).
func (c *conn) setDeadlineLocked(t time.Time) {
	c.nc.SetReadDeadline(t)
	c.deadlineSet.Store(true)
}

// clearDeadlineLocked removes the read deadline, if one is set.
func (c *conn) clearDeadlineLocked() {
	if c.deadlineSet.Load() {
		c.nc.SetReadDeadline(time.Time{})
		c.deadlineSet.Store(false)
	}
}

// armIdleLocked sets the idle deadline if the connection is idle: no
// writer, nothing in flight, no deadline yet. The reader calls it before
// it reads a frame, a request goroutine when it ends.
func (c *conn) armIdleLocked() {
	d := c.s.opts.IdleTimeout
	if d <= 0 || c.deadlineSet.Load() || c.mu.busy > 0 || len(c.mu.writers) > 0 {
		return
	}
	c.setDeadlineLocked(time.Now().Add(d))
}

// frameRead clears the handshake, idle or frame deadline after a
// complete frame. A connection with a writer has none to clear unless the
// frame's body had to be waited for: it costs one atomic load.
func (c *conn) frameRead() {
	c.handshake, c.inFrame, c.frameArmed = false, false, false
	if c.deadlineSet.Load() {
		c.mu.Lock()
		c.clearDeadlineLocked()
		c.mu.Unlock()
	}
}

// startRequest and endRequest bracket a request in flight other than an
// append: while one is, the connection is not idle.
func (c *conn) startRequest() {
	c.mu.Lock()
	c.mu.busy++
	c.clearDeadlineLocked()
	c.mu.Unlock()
}

func (c *conn) endRequest() {
	c.mu.Lock()
	c.mu.busy--
	c.armIdleLocked()
	c.mu.Unlock()
}

// decodeFailed answers a frame that was skipped. The error of an
// AppendBlock frame goes through the ack FIFO to keep the order of
// append replies. It returns false if the connection died meanwhile.
func (c *conn) decodeFailed(err error) bool {
	var de *protocol.DecodeError
	id := int64(-1)
	t := protocol.Type(0)
	if errors.As(err, &de) {
		id, t = de.RequestID, de.Type
	}
	c.log.WithError(err).Warn("server: undecodable frame skipped")
	if t == protocol.TypeAppendBlock {
		return c.pushAck(ackItem{reqID: id, err: err})
	}
	c.send(c.errorReply(id, err, "", ""))
	return c.ctx.Err() == nil
}

// fatal classifies the error that ended the stream and returns the reply
// owed to the client, if the stream was refused rather than lost.
func (c *conn) fatal(err error) *protocol.ErrorReply {
	switch {
	case errors.Is(err, io.EOF), c.ctx.Err() != nil:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded) && c.frameArmed:
		c.s.frameOut.Add(1)
		c.log.Warnf("server: a frame did not arrive whole within the frame timeout (%v); closing the connection and releasing its memory",
			c.s.opts.FrameTimeout)
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.s.timedOut.Add(1)
		if c.handshake {
			c.log.Debugf("server: no complete frame within the handshake timeout (%v); closing the connection", c.s.opts.HandshakeTimeout)
		} else {
			c.log.Debugf("server: connection idle for the idle timeout (%v); closing it", c.s.opts.IdleTimeout)
		}
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.log.WithError(err).Debug("server: connection ended inside a frame")
		return nil
	case errors.Is(err, protocol.ErrFrameTooLarge), errors.Is(err, protocol.ErrMalformedFrame):
		c.log.WithError(err).Warn("server: bad frame; closing the connection")
		return c.errorReply(-1, err, "", "")
	default:
		c.log.WithError(err).Debug("server: connection read failed")
		return nil
	}
}

// acquire takes a slot of sem; false if the connection died first.
func (c *conn) acquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// spawn runs f in a request goroutine holding a slot of sem.
func (c *conn) spawn(sem chan struct{}, f func()) bool {
	if !c.acquire(sem) {
		return false
	}
	c.startRequest()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-sem }()
		defer c.endRequest()
		f()
	}()
	return true
}

// pushAck queues an append's reply in the ack FIFO; if the connection
// died first, it waits for the append itself (the block is in the log:
// only Wait makes it readable once durable) and releases the block's
// request memory.
func (c *conn) pushAck(it ackItem) bool {
	select {
	case c.acks <- it:
		return true
	case <-c.ctx.Done():
		if it.err == nil && it.p != nil {
			it.p.Wait()
		}
		if it.held > 0 {
			c.releaseMem(it.held)
		}
		return false
	}
}

// dispatch runs one request. It returns a reply to send before closing
// the connection, or ok == false if the connection died.
func (c *conn) dispatch(req protocol.Request) (last *protocol.ErrorReply, ok bool) {
	if err := req.Validate(); err != nil {
		if b, isAppend := req.(*protocol.AppendBlock); isAppend {
			return nil, c.pushAck(ackItem{reqID: b.RequestID, writer: b.WriterID, err: err, held: len(b.Data)})
		}
		c.log.WithError(err).Debug("server: invalid request")
		c.send(c.errorReply(req.ReqID(), err, "", ""))
		return nil, c.ctx.Err() == nil
	}
	switch r := req.(type) {
	case *protocol.Hello:
		if r.LowVersion > protocol.WireVersion {
			err := fmt.Errorf("%w: client speaks protocol versions [%d, %d], this node speaks [%d, %d]",
				protocol.ErrInvalidArgument, r.LowVersion, r.HighVersion, protocol.WireVersion, protocol.WireVersion)
			c.log.WithError(err).Warn("server: refusing the client")
			return c.errorReply(r.RequestID, err, "", ""), true
		}
		c.send(&protocol.Hello{RequestID: r.RequestID, HighVersion: protocol.WireVersion, LowVersion: protocol.WireVersion})

	case *protocol.AppendBlock:
		return nil, c.pushAck(c.appendBlock(r))

	case *protocol.SetupAppend:
		return nil, c.setupAppend(r)

	case *protocol.ReadSegment:
		return nil, c.spawn(c.reads, func() { c.read(r) })

	case *protocol.CreateSegment:
		return nil, c.spawn(c.ops, func() {
			err := c.onContainer(r.Segment, func(ct *container.Container) error { return ct.Create(r.Segment, r.Attributes) })
			c.reply(r.RequestID, err, r.Segment, &protocol.SegmentCreated{RequestID: r.RequestID, Segment: r.Segment})
		})

	case *protocol.GetSegmentInfo:
		return nil, c.spawn(c.ops, func() {
			var info container.Info
			var ts container.TierState
			var tierErr string
			err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
				if info, err = ct.Info(r.Segment); err != nil {
					return err
				}
				if w := c.s.node.TierWriter(ct.ID()); w != nil {
					tierErr = w.LastError()
				}
				ts, err = ct.TierState(r.Segment)
				return err
			})
			// In tier 2 means recoverable from it: in the container's
			// recovery record, not only in a chunk (see container.Recovery).
			tiered, untiered := ts.Tiered, ts.Untiered
			if c.s.node.HasTier2() {
				tiered, untiered = ts.Recorded, ts.Untiered+ts.Tiered-ts.Recorded
			}
			reply := &protocol.SegmentInfo{RequestID: r.RequestID, Segment: r.Segment,
				StartOffset: info.StartOffset, Length: info.Length, Sealed: info.Sealed,
				TieredOffset: tiered, UntieredBytes: untiered, Tier2Error: tierErr}
			if !info.Modified.IsZero() {
				reply.LastModifiedUnixNano = info.Modified.UnixNano()
			}
			if !ts.Oldest.IsZero() {
				reply.OldestUntieredUnixNano = ts.Oldest.UnixNano()
			}
			c.reply(r.RequestID, err, r.Segment, reply)
		})

	case *protocol.GetTierStats:
		return nil, c.spawn(c.ops, func() {
			reply := &protocol.TierStats{RequestID: r.RequestID}
			for id, st := range c.s.node.TierStats() {
				reply.Containers = append(reply.Containers, protocol.ContainerTier{Container: int32(id), TieredBytes: st.TieredBytes,
					Chunks: st.Chunks, Untiered: st.Untiered, LagNanos: int64(st.Lag), Errors: st.Errors, LastError: st.LastError, Stalled: st.Stalled})
			}
			sort.Slice(reply.Containers, func(i, j int) bool { return reply.Containers[i].Container < reply.Containers[j].Container })
			c.reply(r.RequestID, nil, "", reply)
		})

	case *protocol.GetSegmentRates:
		return nil, c.spawn(c.ops, func() { c.send(c.segmentRates(r)) })

	case *protocol.SealSegment:
		return nil, c.spawn(c.ops, func() {
			var length int64
			err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
				length, err = ct.Seal(r.Segment)
				return err
			})
			c.reply(r.RequestID, err, r.Segment, &protocol.SegmentSealed{RequestID: r.RequestID, Segment: r.Segment, Length: length})
		})

	case *protocol.TruncateSegment:
		return nil, c.spawn(c.ops, func() {
			var start int64
			err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
				start, err = ct.Truncate(r.Segment, r.Offset)
				return err
			})
			c.reply(r.RequestID, err, r.Segment, &protocol.SegmentTruncated{RequestID: r.RequestID, Segment: r.Segment, StartOffset: start})
		})

	case *protocol.CheckBoundary:
		return nil, c.spawn(c.ops, func() {
			err := c.onContainer(r.Segment, func(ct *container.Container) error { return ct.CheckBoundary(r.Segment, r.Offset) })
			c.reply(r.RequestID, err, r.Segment, &protocol.BoundaryChecked{RequestID: r.RequestID, Segment: r.Segment, Offset: r.Offset})
		})

	case *protocol.DeleteSegment:
		return nil, c.spawn(c.ops, func() {
			err := c.onContainer(r.Segment, func(ct *container.Container) error { return ct.Delete(r.Segment) })
			c.reply(r.RequestID, err, r.Segment, &protocol.SegmentDeleted{RequestID: r.RequestID, Segment: r.Segment})
		})

	case *protocol.MergeSegments:
		return nil, c.spawn(c.ops, func() {
			length, err := c.merge(r.Target, r.Source)
			c.reply(r.RequestID, err, r.Target, &protocol.SegmentsMerged{RequestID: r.RequestID, Target: r.Target,
				Source: r.Source, TargetLength: length})
		})

	case *protocol.GetAttributes:
		return nil, c.spawn(c.ops, func() {
			var values map[string]int64
			err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
				values, err = ct.GetAttributes(r.Segment, r.Keys)
				return err
			})
			c.reply(r.RequestID, err, r.Segment, &protocol.Attributes{RequestID: r.RequestID, Segment: r.Segment, Values: values})
		})

	case *protocol.UpdateAttributes:
		return nil, c.spawn(c.ops, func() {
			err := c.onContainer(r.Segment, func(ct *container.Container) error { return ct.UpdateAttributes(r.Segment, r.Updates) })
			c.reply(r.RequestID, err, r.Segment, &protocol.AttributesUpdated{RequestID: r.RequestID, Segment: r.Segment})
		})

	case *protocol.GetWriterState:
		return nil, c.spawn(c.ops, func() { c.writerState(r) })

	default:
		// A request type this server does not serve yet.
		err := fmt.Errorf("%w: %s", protocol.ErrUnknownCommand, req.Type())
		c.send(c.errorReply(req.ReqID(), err, "", ""))
	}
	return nil, c.ctx.Err() == nil
}

// onContainer runs f on the container that owns segment.
func (c *conn) onContainer(segment string, f func(*container.Container) error) error {
	ct, err := c.s.node.ContainerFor(segment)
	if err != nil {
		return err
	}
	return f(ct)
}

// reply sends ok, or the ErrorReply for err.
func (c *conn) reply(reqID int64, err error, segment string, ok protocol.Message) {
	if err != nil {
		c.send(c.errorReply(reqID, err, segment, ""))
		return
	}
	c.send(ok)
}

// appendBlock queues a block in its container, from the reader goroutine
// so that a writer's blocks are logged in the order they arrived. A
// writer's blocks on one connection must rise in event number from its
// setup on (a resend follows a new SetupAppend: a block that goes back is
// refused, not acknowledged as a resend), and a block refused as
// retriable unbinds the writer (unbindLocked).
func (c *conn) appendBlock(r *protocol.AppendBlock) ackItem {
	it := ackItem{reqID: r.RequestID, writer: r.WriterID, eventNumber: r.LastEventNumber, held: len(r.Data)}
	c.mu.Lock()
	w := c.mu.writers[r.WriterID]
	if w == nil || w.segment == "" {
		msg := fmt.Sprintf("%v: %q", protocol.ErrWriterNotSetUp, r.WriterID)
		if w != nil && w.refused {
			msg += ": an earlier block of the writer was refused; SetupAppend again before appending"
		}
		c.mu.Unlock()
		it.err = &protocol.Error{Code: protocol.CodeWriterNotSetUp, WriterID: r.WriterID, Message: msg}
		return it
	}
	it.segment = w.segment
	last, setups := w.last, w.setups
	c.mu.Unlock()
	if last != protocol.NoEventNumber && r.LastEventNumber <= last {
		it.err = &protocol.Error{Code: protocol.CodeInvalidEventNumber, Segment: it.segment, WriterID: r.WriterID,
			Message: fmt.Sprintf("%v: writer %q: block numbered %d after one numbered %d on this connection (event numbers go backwards)",
				protocol.ErrInvalidEventNumber, r.WriterID, r.LastEventNumber, last)}
		return it
	}
	ct, err := c.s.node.ContainerFor(it.segment)
	if err == nil {
		it.p, err = ct.AppendAsync(container.Append{
			Segment: it.segment, Writer: r.WriterID, EventNumber: r.LastEventNumber,
			EventCount: r.EventCount, ExpectedOffset: r.ExpectedOffset, Data: r.Data,
		})
	}
	it.err = err
	c.mu.Lock()
	// Only the reader goroutine changes last and refused; a SetupAppend
	// that completed meanwhile starts afresh and is left alone.
	if w.setups == setups {
		switch {
		case err == nil:
			w.last = r.LastEventNumber
		case protocol.IsRetriable(err):
			c.unbindLocked(r.WriterID)
		}
	}
	c.mu.Unlock()
	return it
}

// ackReply is the reply to the append at the head of the ack FIFO, once
// it is durable or refused (it waits only for a resend's sync point, see
// ackItem.ready). It releases the request memory the block held: the
// bytes are the cache's now, or dropped.
func (c *conn) ackReply(it ackItem) protocol.Message {
	if it.err == nil {
		res, err := it.p.Wait()
		if it.held > 0 {
			c.releaseMem(it.held)
		}
		if err == nil {
			return &protocol.DataAppended{RequestID: it.reqID, WriterID: it.writer, EventNumber: it.eventNumber,
				PreviousEventNumber: res.PreviousEventNumber, CurrentOffset: res.Offset}
		}
		it.err = err
	} else if it.held > 0 {
		c.releaseMem(it.held)
	}
	return c.errorReply(it.reqID, it.err, it.segment, it.writer)
}

// setupAppend starts a SetupAppend, refusing a second one for a writer
// whose setup is in flight.
func (c *conn) setupAppend(r *protocol.SetupAppend) bool {
	// Take the slot first: only this goroutine sets settingUp, so the
	// check below stays true until it is set.
	if !c.acquire(c.ops) {
		return false
	}
	c.mu.Lock()
	w := c.mu.writers[r.WriterID]
	if w == nil {
		w = &writerState{}
		c.mu.writers[r.WriterID] = w
		c.hasWriters.Store(true)
	}
	busy := w.settingUp
	w.settingUp = true
	if !busy {
		c.mu.busy++
		c.clearDeadlineLocked()
	}
	c.mu.Unlock()
	if busy {
		<-c.ops
		err := &protocol.Error{Code: protocol.CodeSetupInProgress, Segment: r.Segment, WriterID: r.WriterID,
			Message: fmt.Sprintf("%v: %q, on this connection", protocol.ErrSetupInProgress, r.WriterID)}
		c.log.WithField("writer", r.WriterID).Warn("server: SetupAppend while one is in flight for the writer")
		c.send(c.errorReply(r.RequestID, err, r.Segment, r.WriterID))
		return c.ctx.Err() == nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.ops }()
		var last int64
		err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
			last, err = ct.SetupAppend(r.Segment, r.WriterID)
			return err
		})
		c.mu.Lock()
		w.settingUp = false
		if err == nil {
			w.segment, w.last, w.refused = r.Segment, protocol.NoEventNumber, false
			w.setups++
		} else {
			// A failed setup unbinds: the writer's next block must not go
			// to a segment it meant to leave.
			delete(c.mu.writers, r.WriterID)
			c.hasWriters.Store(len(c.mu.writers) > 0)
		}
		c.mu.busy--
		c.armIdleLocked()
		c.mu.Unlock()
		if err != nil {
			c.send(c.errorReply(r.RequestID, err, r.Segment, r.WriterID))
			return
		}
		c.send(&protocol.AppendSetup{RequestID: r.RequestID, WriterID: r.WriterID, Segment: r.Segment, LastEventNumber: last})
	}()
	return true
}

// read serves one ReadSegment, waiting up to WaitMillis at the tail.
func (c *conn) read(r *protocol.ReadSegment) {
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	if r.WaitMillis == 0 {
		ctx, cancel = context.WithCancel(c.readCtx)
		cancel() // do not wait: return what is there
	} else {
		ctx, cancel = context.WithTimeout(c.readCtx, time.Duration(r.WaitMillis)*time.Millisecond)
	}
	defer cancel()
	var res container.ReadResult
	err := c.onContainer(r.Segment, func(ct *container.Container) (err error) {
		if r.AtEvent {
			res, err = ct.ReadAtEvent(ctx, r.Segment, r.Offset, int(r.MaxBytes))
		} else {
			res, err = ct.Read(ctx, r.Segment, r.Offset, int(r.MaxBytes))
		}
		return err
	})
	if err != nil {
		c.reply(r.RequestID, err, r.Segment, nil)
		return
	}
	c.send(heldRead{release: res.Release, SegmentRead: &protocol.SegmentRead{RequestID: r.RequestID, Segment: r.Segment,
		Offset: r.Offset, AtTail: res.AtTail, EndOfSegment: res.EndOfSegment, Data: res.Data}})
}

// merge merges source into target, which must live in the same container.
func (c *conn) merge(target, source string) (int64, error) {
	ct, err := c.s.node.ContainerFor(target)
	if err != nil {
		return 0, err
	}
	cs, err := c.s.node.ContainerFor(source)
	if err != nil {
		return 0, err
	}
	if ct != cs {
		return 0, fmt.Errorf("%w: merge: %q and %q are in different containers (%d, %d)",
			protocol.ErrInvalidArgument, target, source, ct.ID(), cs.ID())
	}
	return ct.Merge(target, source)
}

// writeLoop writes the replies of the connection until the reply queue
// is closed and the ack FIFO closed and drained. It is also the acker:
// it takes the append at the head of the ack FIFO and, once its batch is
// durable (its ready channel), encodes its reply straight into the
// buffer, with no goroutine in between: a group commit wakes it once for
// all the acks it covers. It flushes whenever nothing else is ready (so
// nothing is left buffered while it waits), and before it blocks in a
// resend's wait. acksDone is closed once the FIFO is closed and every
// append in it answered (serve then sends the last reply). Each batch
// must be written within WriteTimeout. After a write error (or timeout)
// it closes the connection and cancels its context, which unblocks the
// reader and every sender, and then drops replies but keeps draining
// (and waiting for the appends, whose memory it releases once durable),
// so that no sender blocks.
func (c *conn) writeLoop(acksDone, done chan<- struct{}) {
	defer close(done)
	bw := bufio.NewWriterSize(c.nc, writeBufferSize)
	buffered := protocol.NewEncoder(bw)
	direct := protocol.NewEncoder(c.nc)
	var failed error
	// The write deadline: set at the start of each batch, before each
	// SegmentRead with data, and every writeRearm replies in between, so
	// that what the peer must take within WriteTimeout is bounded (at
	// most writeRearm small replies, or one read's data) even while a
	// batch lasts for ever under a steady flow of replies. A timer
	// update, no syscall.
	wt := c.s.opts.WriteTimeout
	var sinceArmed int
	arm := func() {
		sinceArmed = 0
		if wt > 0 && !c.closing.Load() {
			c.nc.SetWriteDeadline(time.Now().Add(wt))
		}
	}
	// inBatch: replies were written since the last flush.
	inBatch := false
	// broke records the first write error and kills the connection.
	broke := func(err error) {
		failed = err
		if c.ctx.Err() != nil {
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !c.closing.Load() {
			c.s.writeOut.Add(1)
			c.log.Warnf("server: the client did not read its replies within the write timeout (%v); closing the connection and releasing its memory", wt)
		} else {
			c.log.WithError(err).Debug("server: connection write failed")
		}
		c.cancel()
		c.nc.Close()
	}
	write := func(m protocol.Message) {
		if h, ok := m.(heldRead); ok {
			defer h.release() // written (writev, no copy) or dropped: the data is no longer needed
			m = h.SegmentRead
		}
		if failed != nil {
			return
		}
		if !inBatch {
			inBatch = true
			arm()
		}
		var err error
		if sinceArmed++; sinceArmed > writeRearm {
			arm()
		}
		if sr, ok := m.(*protocol.SegmentRead); ok && len(sr.Data) > 0 {
			// Header and cached blocks in one writev, no copy.
			arm()
			if err = bw.Flush(); err == nil {
				err = direct.WriteMessage(m)
			}
		} else {
			err = buffered.WriteMessage(m)
		}
		if errors.Is(err, protocol.ErrFrameTooLarge) {
			// Nothing was written: answer the request with the error.
			if r, ok := m.(protocol.Reply); ok {
				c.log.WithError(err).Error("server: reply does not fit a frame")
				err = buffered.WriteMessage(protocol.NewErrorReply(r.ReqID(), fmt.Errorf("%w: %w", protocol.ErrInternal, err)))
			}
		}
		if err != nil {
			broke(err)
		}
	}
	flush := func() {
		if !inBatch {
			return
		}
		inBatch = false
		if failed == nil {
			if err := bw.Flush(); err != nil {
				broke(err)
			}
		}
	}
	out, acks := c.out, c.acks
	var head ackItem
	haveHead := false
	// One step: a reply from the queue, the next append of the FIFO, or
	// the head's reply once it is durable.
	onOut := func(m protocol.Message, ok bool) {
		if !ok {
			out = nil
			return
		}
		write(m)
	}
	onAck := func(it ackItem, ok bool) {
		if !ok {
			acks = nil
			close(acksDone)
			return
		}
		head, haveHead = it, true
	}
	onHead := func() {
		haveHead = false
		write(c.ackReply(head))
		head = ackItem{}
	}
	for out != nil || acks != nil || haveHead {
		var ackIn <-chan ackItem
		var headReady <-chan struct{}
		if haveHead {
			if headReady = head.ready(); headReady == nil {
				// A resend waits for a sync point: flush what is owed
				// first.
				flush()
				onHead()
				continue
			}
		} else {
			ackIn = acks
		}
		select {
		case m, ok := <-out:
			onOut(m, ok)
			continue
		case it, ok := <-ackIn:
			onAck(it, ok)
			continue
		case <-headReady:
			onHead()
			continue
		default:
		}
		// Nothing is ready: flush, then wait.
		flush()
		select {
		case m, ok := <-out:
			onOut(m, ok)
		case it, ok := <-ackIn:
			onAck(it, ok)
		case <-headReady:
			onHead()
		}
	}
	flush()
}
