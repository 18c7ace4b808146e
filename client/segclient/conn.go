package segclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/protocol"
)

// ErrConnectionClosed is wrapped by the error of every call on a connection
// that is broken or closed, and of every call pending when it broke.
var ErrConnectionClosed = errors.New("segclient: connection closed")

// errClosedByCaller is the cause recorded by Close.
var errClosedByCaller = errors.New("closed by the caller")

// Conn is one connection to a node. Its methods are safe for concurrent
// use.
type Conn struct {
	nc      net.Conn
	ids     atomic.Int64
	version int32

	// wlock is held (one token) while a request is written; a channel
	// rather than a mutex so that waiting for it honours ctx.
	wlock chan struct{}
	enc   *protocol.Encoder // guarded by wlock

	done       chan struct{} // closed when the connection breaks
	readerDone chan struct{}

	mu struct {
		sync.Mutex
		pending map[int64]*call // nil once broken
		err     error           // why it broke; wraps ErrConnectionClosed
	}
}

// call is a request waiting for its reply. The reader settles it with
// the reply (or the error of a reply it could not decode); fail settles
// every pending call with the connection's error.
type call struct {
	once  sync.Once
	ready chan struct{} // closed once m or err is set
	m     protocol.Message
	err   error
	// notify, if set, is called with the answer before ready is closed,
	// in the goroutine that settles the call (see AppendAsyncNotify).
	notify func(protocol.Message, error)
}

func newCall() *call { return &call{ready: make(chan struct{})} }

func (k *call) settle(m protocol.Message, err error) {
	k.once.Do(func() {
		k.m, k.err = m, err
		if k.notify != nil {
			k.notify(m, err)
		}
		close(k.ready)
	})
}

// Dial connects to the node at addr (host:port) and exchanges Hello. ctx
// bounds the dial and the handshake, not the connection's life.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("segclient: dial %s: %w", addr, err)
	}
	c := newConn(nc)
	hello, err := roundTrip[*protocol.Hello](ctx, c, &protocol.Hello{RequestID: c.nextID(),
		HighVersion: protocol.WireVersion, LowVersion: protocol.WireVersion})
	if err == nil && (hello.LowVersion > protocol.WireVersion || hello.HighVersion < protocol.WireVersion) {
		err = fmt.Errorf("segclient: node at %s speaks protocol versions [%d, %d], this client %d",
			addr, hello.LowVersion, hello.HighVersion, protocol.WireVersion)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("segclient: handshake with %s: %w", addr, err)
	}
	c.version = min(hello.HighVersion, protocol.WireVersion)
	return c, nil
}

func newConn(nc net.Conn) *Conn {
	c := &Conn{nc: nc, enc: protocol.NewEncoder(nc), wlock: make(chan struct{}, 1),
		done: make(chan struct{}), readerDone: make(chan struct{})}
	c.mu.pending = map[int64]*call{}
	go c.readLoop()
	return c
}

// Version is the protocol version agreed with the node.
func (c *Conn) Version() int32 { return c.version }

// LocalAddr and RemoteAddr are the connection's addresses.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr is the node's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Close closes the connection and waits for its reader goroutine. Pending
// calls fail with ErrConnectionClosed; requests already written may still
// be applied by the node. Closing twice is not an error.
func (c *Conn) Close() error {
	c.fail(errClosedByCaller)
	<-c.readerDone
	return nil
}

// Err returns nil while the connection works, and then why it broke
// (wrapping ErrConnectionClosed).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.err
}

// Done is closed when the connection breaks or is closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// fail breaks the connection for cause, once.
func (c *Conn) fail(cause error) {
	c.mu.Lock()
	if c.mu.err != nil {
		c.mu.Unlock()
		return
	}
	err := fmt.Errorf("%w: %w", ErrConnectionClosed, cause)
	c.mu.err = err
	pending := c.mu.pending
	c.mu.pending = nil
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
	for _, k := range pending {
		k.settle(nil, err)
	}
}

func (c *Conn) nextID() int64 { return c.ids.Add(1) }

// readLoop delivers replies to their calls until the connection breaks.
func (c *Conn) readLoop() {
	defer close(c.readerDone)
	dec := protocol.NewDecoder(c.nc)
	for {
		m, err := dec.ReadMessage()
		if err != nil {
			var de *protocol.DecodeError
			if !protocol.IsFatal(err) && errors.As(err, &de) && de.RequestID >= 0 {
				// A reply this client cannot read: fail its call only.
				c.deliver(de.RequestID, nil, err)
				continue
			}
			c.fail(fmt.Errorf("read: %w", err))
			return
		}
		r, ok := m.(protocol.Reply)
		if !ok {
			c.fail(fmt.Errorf("%w: the node sent %s, which is not a reply", protocol.ErrMalformedMessage, m.Type()))
			return
		}
		if er, ok := m.(*protocol.ErrorReply); ok && er.RequestID == -1 {
			// The node refuses the whole connection.
			c.fail(protocol.ErrorFromReply(er))
			return
		}
		c.deliver(r.ReqID(), m, nil)
	}
}

// deliver settles the call waiting for id, if it still waits.
func (c *Conn) deliver(id int64, m protocol.Message, err error) {
	c.mu.Lock()
	k, ok := c.mu.pending[id]
	delete(c.mu.pending, id)
	c.mu.Unlock()
	if ok {
		k.settle(m, err)
	}
}

func (c *Conn) unregister(id int64) {
	c.mu.Lock()
	delete(c.mu.pending, id)
	c.mu.Unlock()
}

// send registers id and writes req; the returned call gets the reply.
func (c *Conn) send(ctx context.Context, id int64, req protocol.Message) (*call, error) {
	return c.sendCall(ctx, id, req, newCall())
}

// sendCall is send with the call to register.
func (c *Conn) sendCall(ctx context.Context, id int64, req protocol.Message, k *call) (*call, error) {
	c.mu.Lock()
	if c.mu.err != nil {
		err := c.mu.err
		c.mu.Unlock()
		return nil, err
	}
	c.mu.pending[id] = k
	c.mu.Unlock()
	if err := c.write(ctx, req); err != nil {
		c.unregister(id)
		return nil, err
	}
	return k, nil
}

// aLongTimeAgo is a deadline in the past: it interrupts a blocked write.
var aLongTimeAgo = time.Unix(1, 0)

// write writes one frame under wlock. If ctx is done while the frame is
// being written, the write is interrupted and the connection broken (the
// stream would hold half a frame).
func (c *Conn) write(ctx context.Context, m protocol.Message) error {
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.Err()
	}
	defer func() { <-c.wlock }()
	if err := c.Err(); err != nil {
		return err
	}
	var (
		stop  func() bool
		fired chan struct{}
	)
	if ctx.Done() != nil {
		fired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			c.nc.SetWriteDeadline(aLongTimeAgo)
			close(fired)
		})
	}
	err := c.enc.WriteMessage(m)
	interrupted := stop != nil && !stop()
	if interrupted {
		<-fired
	}
	if err == nil || errors.Is(err, protocol.ErrFrameTooLarge) {
		// Written whole, or not at all: the stream is intact.
		if interrupted {
			c.nc.SetWriteDeadline(time.Time{})
		}
		if err != nil {
			return fmt.Errorf("segclient: %w", err)
		}
		return nil
	}
	cause := fmt.Errorf("write %s: %w", m.Type(), err)
	if interrupted {
		cause = fmt.Errorf("write %s interrupted: %w", m.Type(), ctx.Err())
	}
	c.fail(cause)
	return c.Err()
}

// wait waits for the reply of call k (request id) and abandons it if ctx
// is done first.
func (c *Conn) wait(ctx context.Context, id int64, k *call) (protocol.Message, error) {
	select {
	case <-k.ready:
		return k.m, k.err
	case <-ctx.Done():
		c.unregister(id)
		select {
		case <-k.ready: // answered meanwhile: take it
			return k.m, k.err
		default:
			return nil, ctx.Err()
		}
	}
}

// roundTrip sends req (whose request id is id) and waits for its reply,
// which must be a T or an ErrorReply.
func roundTrip[T protocol.Reply](ctx context.Context, c *Conn, req protocol.Request) (T, error) {
	var zero T
	id := req.ReqID()
	k, err := c.send(ctx, id, req)
	if err != nil {
		return zero, err
	}
	m, err := c.wait(ctx, id, k)
	if err != nil {
		return zero, err
	}
	return asReply[T](req.Type(), m)
}

// asReply turns m into the expected reply type, or its error.
func asReply[T protocol.Reply](reqType protocol.Type, m protocol.Message) (T, error) {
	var zero T
	if er, ok := m.(*protocol.ErrorReply); ok {
		return zero, protocol.ErrorFromReply(er)
	}
	t, ok := m.(T)
	if !ok {
		return zero, fmt.Errorf("segclient: %w: %s answered with %s", protocol.ErrMalformedMessage, reqType, m.Type())
	}
	return t, nil
}

// CreateSegment creates an empty segment. It fails with
// protocol.ErrSegmentExists if the segment exists.
func (c *Conn) CreateSegment(ctx context.Context, segment string) error {
	return c.CreateSegmentWith(ctx, segment, nil)
}

// CreateSegmentWith creates a segment with attributes set in the same
// step (at most protocol.MaxCreateAttributes).
func (c *Conn) CreateSegmentWith(ctx context.Context, segment string, attrs map[string]int64) error {
	_, err := roundTrip[*protocol.SegmentCreated](ctx, c, &protocol.CreateSegment{RequestID: c.nextID(), Segment: segment, Attributes: attrs})
	return err
}

// GetSegmentInfo returns what readers can see of a segment: its start
// offset, durable length, whether it is sealed.
func (c *Conn) GetSegmentInfo(ctx context.Context, segment string) (*protocol.SegmentInfo, error) {
	return roundTrip[*protocol.SegmentInfo](ctx, c, &protocol.GetSegmentInfo{RequestID: c.nextID(), Segment: segment})
}

// GetSegmentRates returns the append rates of up to
// protocol.MaxRateSegments segments as the node measures them, one entry
// per segment in the order asked (Missing where the node does not serve
// it).
func (c *Conn) GetSegmentRates(ctx context.Context, segments []string) (*protocol.SegmentRates, error) {
	return roundTrip[*protocol.SegmentRates](ctx, c, &protocol.GetSegmentRates{RequestID: c.nextID(), Segments: segments})
}

// GetTierStats returns the node's storage writers' counters, one entry
// per container it hosts with tier 2.
func (c *Conn) GetTierStats(ctx context.Context) (*protocol.TierStats, error) {
	return roundTrip[*protocol.TierStats](ctx, c, &protocol.GetTierStats{RequestID: c.nextID()})
}

// ReadSegment reads up to maxBytes from offset. If nothing is there yet,
// the node waits up to wait (rounded up to a millisecond; 0: not at all)
// for bytes to arrive, and then answers with no data and AtTail set. The
// node may return fewer bytes than asked. Reading at the end of a sealed
// segment is not an error: the reply has EndOfSegment set. Reading below
// the start offset fails with protocol.ErrSegmentTruncated. ctx should
// outlast wait, or the call gives up first.
func (c *Conn) ReadSegment(ctx context.Context, segment string, offset int64, maxBytes int32, wait time.Duration) (*protocol.SegmentRead, error) {
	return c.readSegment(ctx, segment, offset, maxBytes, wait, false)
}

// ReadSegmentAtEvent is ReadSegment from an offset that must be where an
// event starts: the node refuses any other with
// protocol.ErrNotEventBoundary, for this read only.
func (c *Conn) ReadSegmentAtEvent(ctx context.Context, segment string, offset int64, maxBytes int32, wait time.Duration) (*protocol.SegmentRead, error) {
	return c.readSegment(ctx, segment, offset, maxBytes, wait, true)
}

// ReadSegmentNotify is ReadSegment, or ReadSegmentAtEvent with atEvent,
// that also calls notify, unless nil, with the answer, once, in the
// goroutine that settles the call (the connection's reader for a reply;
// see AppendAsyncNotify), before the call returns it. notify must not
// block or call the connection: it lets a caller hand a tail read's data
// on without waking the goroutine that waits in the call first.
func (c *Conn) ReadSegmentNotify(ctx context.Context, segment string, offset int64, maxBytes int32, wait time.Duration, atEvent bool,
	notify func(*protocol.SegmentRead, error)) (*protocol.SegmentRead, error) {
	if notify == nil {
		return c.readSegment(ctx, segment, offset, maxBytes, wait, atEvent)
	}
	req := readRequest(c.nextID(), segment, offset, maxBytes, wait, atEvent)
	k := newCall()
	k.notify = func(m protocol.Message, err error) {
		if err != nil {
			notify(nil, err)
			return
		}
		notify(asReply[*protocol.SegmentRead](protocol.TypeReadSegment, m))
	}
	if _, err := c.sendCall(ctx, req.RequestID, req, k); err != nil {
		return nil, err
	}
	m, err := c.wait(ctx, req.RequestID, k)
	if err != nil {
		return nil, err
	}
	return asReply[*protocol.SegmentRead](protocol.TypeReadSegment, m)
}

func (c *Conn) readSegment(ctx context.Context, segment string, offset int64, maxBytes int32, wait time.Duration, atEvent bool) (*protocol.SegmentRead, error) {
	return roundTrip[*protocol.SegmentRead](ctx, c, readRequest(c.nextID(), segment, offset, maxBytes, wait, atEvent))
}

// readRequest builds a ReadSegment, its wait rounded up to a millisecond.
func readRequest(id int64, segment string, offset int64, maxBytes int32, wait time.Duration, atEvent bool) *protocol.ReadSegment {
	ms := int64(0)
	if wait > 0 {
		// Round up without adding to wait first: near the largest
		// Duration that would wrap around to a negative wait.
		ms = int64(wait / time.Millisecond)
		if wait%time.Millisecond != 0 {
			ms++
		}
		ms = min(ms, math.MaxInt32)
	}
	return &protocol.ReadSegment{RequestID: id, Segment: segment,
		Offset: offset, MaxBytes: maxBytes, WaitMillis: int32(ms), AtEvent: atEvent}
}

// SealSegment makes a segment read-only and returns its final length.
// Sealing a sealed segment is not an error.
func (c *Conn) SealSegment(ctx context.Context, segment string) (length int64, err error) {
	r, err := roundTrip[*protocol.SegmentSealed](ctx, c, &protocol.SealSegment{RequestID: c.nextID(), Segment: segment})
	if err != nil {
		return 0, err
	}
	return r.Length, nil
}

// CheckBoundary returns nil if offset is an event boundary of the segment
// (where an event starts, or its length); otherwise the node's error, which
// wraps protocol.ErrNotEventBoundary and names the nearest boundaries. It
// changes nothing.
func (c *Conn) CheckBoundary(ctx context.Context, segment string, offset int64) error {
	_, err := roundTrip[*protocol.BoundaryChecked](ctx, c, &protocol.CheckBoundary{RequestID: c.nextID(),
		Segment: segment, Offset: offset})
	return err
}

// WriterState returns the last event number segment holds for writer
// (protocol.NoEventNumber if none) and whether the segment is sealed,
// without binding writer to the connection (GetWriterState). A segment
// that does not exist, also one deleted by a truncation, is
// protocol.ErrNoSuchSegment.
func (c *Conn) WriterState(ctx context.Context, segment, writer string) (last int64, sealed bool, err error) {
	r, err := roundTrip[*protocol.WriterState](ctx, c, &protocol.GetWriterState{RequestID: c.nextID(),
		Segment: segment, WriterID: writer})
	if err != nil {
		return 0, false, err
	}
	return r.LastEventNumber, r.Sealed, nil
}

// TruncateSegment makes the bytes below offset unreadable and returns the
// segment's start offset afterwards. offset must be an event boundary
// above the start (protocol.ErrNotEventBoundary otherwise), or at or below
// the start (nothing changes).
func (c *Conn) TruncateSegment(ctx context.Context, segment string, offset int64) (startOffset int64, err error) {
	r, err := roundTrip[*protocol.SegmentTruncated](ctx, c, &protocol.TruncateSegment{RequestID: c.nextID(),
		Segment: segment, Offset: offset})
	if err != nil {
		return 0, err
	}
	return r.StartOffset, nil
}

// DeleteSegment deletes a segment.
func (c *Conn) DeleteSegment(ctx context.Context, segment string) error {
	_, err := roundTrip[*protocol.SegmentDeleted](ctx, c, &protocol.DeleteSegment{RequestID: c.nextID(), Segment: segment})
	return err
}

// MergeSegments appends the sealed source (a transaction segment of
// target) to target, deletes source, and returns target's new length.
// Both must live in the same container, as a transaction segment and its
// parent do.
func (c *Conn) MergeSegments(ctx context.Context, target, source string) (targetLength int64, err error) {
	r, err := roundTrip[*protocol.SegmentsMerged](ctx, c, &protocol.MergeSegments{RequestID: c.nextID(),
		Target: target, Source: source})
	if err != nil {
		return 0, err
	}
	return r.TargetLength, nil
}

// GetAttributes returns the values of those keys that are set (at least
// one key must be asked for).
func (c *Conn) GetAttributes(ctx context.Context, segment string, keys []string) (map[string]int64, error) {
	r, err := roundTrip[*protocol.Attributes](ctx, c, &protocol.GetAttributes{RequestID: c.nextID(),
		Segment: segment, Keys: keys})
	if err != nil {
		return nil, err
	}
	if r.Values == nil {
		return map[string]int64{}, nil
	}
	return r.Values, nil
}

// UpdateAttributes applies updates all together or not at all; a failed
// condition gives protocol.ErrAttributeConflict.
func (c *Conn) UpdateAttributes(ctx context.Context, segment string, updates []protocol.AttributeUpdate) error {
	_, err := roundTrip[*protocol.AttributesUpdated](ctx, c, &protocol.UpdateAttributes{RequestID: c.nextID(),
		Segment: segment, Updates: updates})
	return err
}

// SetupAppend binds writerID to segment on this connection and returns the
// last event number the segment holds for the writer
// (protocol.NoEventNumber if none): the writer resends only the blocks
// after it. Appends for writerID may be sent once it returns. A second
// SetupAppend for the same writer while one is in flight fails with
// protocol.ErrSetupInProgress.
func (c *Conn) SetupAppend(ctx context.Context, writerID, segment string) (lastEventNumber int64, err error) {
	r, err := roundTrip[*protocol.AppendSetup](ctx, c, &protocol.SetupAppend{RequestID: c.nextID(),
		WriterID: writerID, Segment: segment})
	if err != nil {
		return 0, err
	}
	return r.LastEventNumber, nil
}

// Append appends a block of eventCount framed events (protocol.AppendEvent)
// for a writer set up on this connection and waits until the node has it
// on stable storage. lastEventNumber is the writer's number for the
// block's last event: a block at or below the number the segment holds is
// acknowledged without being stored again. expectedOffset, unless
// protocol.NoExpectedOffset, makes the append conditional on the
// segment's length (protocol.ErrConditionalCheckFailed). data must not be
// modified until the call returns.
func (c *Conn) Append(ctx context.Context, writerID string, lastEventNumber int64, eventCount int32, data []byte, expectedOffset int64) (*protocol.DataAppended, error) {
	f, err := c.AppendAsync(ctx, writerID, lastEventNumber, eventCount, data, expectedOffset)
	if err != nil {
		return nil, err
	}
	return f.Wait(ctx)
}

// AppendAsync writes an append block like Append but returns once it is
// written, with a future for its acknowledgement, so that a caller can
// pipeline blocks. The node acknowledges a connection's appends in the
// order they were sent, and an error for one does not stop the following
// ones: after a failure, the caller decides what to resend (a conditional
// append that failed may make later ones fail too). data may be reused
// once AppendAsync returns.
func (c *Conn) AppendAsync(ctx context.Context, writerID string, lastEventNumber int64, eventCount int32, data []byte, expectedOffset int64) (*AppendFuture, error) {
	return c.AppendAsyncNotify(ctx, writerID, lastEventNumber, eventCount, data, expectedOffset, nil)
}

// AppendAsyncNotify is AppendAsync that also calls notify, unless nil,
// with the answer Wait will return, once, before the future's Done is
// closed. notify runs in the goroutine that settles the future: the
// connection's reader for a reply (so a connection's acknowledgements
// are notified one at a time, in the order the node sent them), or the
// goroutine that breaks the connection. It must not block or call the
// connection; it saves the caller the wake-up of a goroutine that waits
// on Done. When AppendAsyncNotify returns an error, notify may still be
// called, with an error.
func (c *Conn) AppendAsyncNotify(ctx context.Context, writerID string, lastEventNumber int64, eventCount int32, data []byte,
	expectedOffset int64, notify func(*protocol.DataAppended, error)) (*AppendFuture, error) {
	id := c.nextID()
	k := newCall()
	if notify != nil {
		k.notify = func(m protocol.Message, err error) {
			if err != nil {
				notify(nil, err)
				return
			}
			notify(asReply[*protocol.DataAppended](protocol.TypeAppendBlock, m))
		}
	}
	k, err := c.sendCall(ctx, id, &protocol.AppendBlock{RequestID: id, WriterID: writerID,
		LastEventNumber: lastEventNumber, EventCount: eventCount, ExpectedOffset: expectedOffset, Data: data}, k)
	if err != nil {
		return nil, err
	}
	return &AppendFuture{k: k}, nil
}

// AppendFuture is the acknowledgement of an AppendAsync to come.
type AppendFuture struct {
	k *call
}

// Wait blocks until the append is acknowledged (it is then durable), fails,
// the connection breaks, or ctx is done. Giving up on ctx leaves the
// future usable: a later Wait still gets the answer. Wait may be called
// any number of times, from several goroutines; every call after the
// answer returns the same result.
func (f *AppendFuture) Wait(ctx context.Context) (*protocol.DataAppended, error) {
	select {
	case <-f.k.ready:
	case <-ctx.Done():
		select {
		case <-f.k.ready:
		default:
			return nil, ctx.Err()
		}
	}
	if f.k.err != nil {
		return nil, f.k.err
	}
	return asReply[*protocol.DataAppended](protocol.TypeAppendBlock, f.k.m)
}

// Done is closed when the answer is in: Wait then returns at once.
func (f *AppendFuture) Done() <-chan struct{} { return f.k.ready }
