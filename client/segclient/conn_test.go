package segclient_test

import (
	"context"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

// The node's behaviour is tested against the real server in node/server;
// these tests cover what only a misbehaving or scripted peer can show.

const testTimeout = 20 * time.Second

// peer is a scripted node: it answers Hello, then hands every request to
// the test.
type peer struct {
	l    net.Listener
	reqs chan protocol.Message
	enc  chan *protocol.Encoder
	done chan struct{}
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{l: l, reqs: make(chan protocol.Message, 16), enc: make(chan *protocol.Encoder, 1), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(testTimeout))
		enc := protocol.NewEncoder(nc)
		dec := protocol.NewDecoder(nc)
		m, err := dec.ReadMessage()
		if err != nil {
			return
		}
		h := m.(*protocol.Hello)
		enc.WriteMessage(&protocol.Hello{RequestID: h.RequestID, LowVersion: 1, HighVersion: 1})
		p.enc <- enc
		for {
			m, err := dec.ReadMessage()
			if err != nil {
				return
			}
			p.reqs <- m
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-p.done
	})
	return p
}

func dial(t *testing.T, p *peer) (*segclient.Conn, *protocol.Encoder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := segclient.Dial(ctx, p.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, <-p.enc
}

func (p *peer) next(t *testing.T) protocol.Request {
	t.Helper()
	select {
	case m := <-p.reqs:
		return m.(protocol.Request)
	case <-time.After(testTimeout):
		t.Fatal("no request")
		return nil
	}
}

func TestConnectionErrorFailsPendingAndLaterCalls(t *testing.T) {
	p := newPeer(t)
	c, enc := dial(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	errs := make(chan error, 2)
	go func() { errs <- c.CreateSegment(ctx, "a/b/1.#epoch.0") }()
	go func() {
		_, err := c.ReadSegment(ctx, "a/b/1.#epoch.0", 0, 10, time.Minute)
		errs <- err
	}()
	p.next(t)
	p.next(t)
	// The node refuses the connection as a whole.
	if err := enc.WriteMessage(&protocol.ErrorReply{RequestID: -1, Code: protocol.CodeMalformedFrame, Message: "bad frame"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := <-errs
		if !errors.Is(err, segclient.ErrConnectionClosed) || !errors.Is(err, protocol.ErrMalformedFrame) {
			t.Fatalf("pending call: %v, want ErrConnectionClosed and ErrMalformedFrame", err)
		}
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("connection not marked broken")
	}
	if err := c.DeleteSegment(ctx, "a/b/1.#epoch.0"); !errors.Is(err, segclient.ErrConnectionClosed) {
		t.Fatalf("later call: %v, want ErrConnectionClosed", err)
	}
	if _, err := c.AppendAsync(ctx, "w", 1, 1, protocol.AppendEvent(nil, []byte("x")), protocol.NoExpectedOffset); !errors.Is(err, segclient.ErrConnectionClosed) {
		t.Fatalf("later append: %v, want ErrConnectionClosed", err)
	}
}

func TestRepliesByRequestIDAndCancellation(t *testing.T) {
	p := newPeer(t)
	c, enc := dial(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// Two appends in flight, answered in reverse order: each future gets
	// its own reply.
	f1, err := c.AppendAsync(ctx, "w", 1, 1, protocol.AppendEvent(nil, []byte("1")), protocol.NoExpectedOffset)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := c.AppendAsync(ctx, "w", 2, 1, protocol.AppendEvent(nil, []byte("2")), protocol.NoExpectedOffset)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := p.next(t), p.next(t)
	enc.WriteMessage(&protocol.ErrorReply{RequestID: r2.ReqID(), Code: protocol.CodeSegmentSealed, Segment: "s"})
	enc.WriteMessage(&protocol.DataAppended{RequestID: r1.ReqID(), WriterID: "w", EventNumber: 1, CurrentOffset: 5})
	if a, err := f1.Wait(ctx); err != nil || a.CurrentOffset != 5 {
		t.Fatalf("first append: %+v, %v", a, err)
	}
	if _, err := f2.Wait(ctx); !errors.Is(err, protocol.ErrSegmentSealed) {
		t.Fatalf("second append: %v, want ErrSegmentSealed", err)
	}
	if _, err := f2.Wait(ctx); !errors.Is(err, protocol.ErrSegmentSealed) {
		t.Fatalf("second Wait: %v, want the same error", err)
	}

	// Cancelling abandons the wait; a late reply is dropped and the
	// connection goes on.
	cctx, ccancel := context.WithCancel(ctx)
	errs := make(chan error, 1)
	go func() { errs <- c.CreateSegment(cctx, "a/b/1.#epoch.0") }()
	late := p.next(t)
	ccancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	enc.WriteMessage(&protocol.SegmentCreated{RequestID: late.ReqID()})
	go func() {
		_, err := c.SealSegment(ctx, "a/b/1.#epoch.0")
		errs <- err
	}()
	seal := p.next(t)
	// A reply of the wrong type is an error, not a success.
	enc.WriteMessage(&protocol.SegmentDeleted{RequestID: seal.ReqID()})
	if err := <-errs; !errors.Is(err, protocol.ErrMalformedMessage) {
		t.Fatalf("mistyped reply: %v, want ErrMalformedMessage", err)
	}
	if c.Err() != nil {
		t.Fatalf("connection broken: %v", c.Err())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSegmentInfo(ctx, "a/b/1.#epoch.0"); !errors.Is(err, segclient.ErrConnectionClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

// TestReadWaitRoundsUpToMillisAndCaps: the wait goes on the wire in whole
// milliseconds, rounded up, and capped at the largest int32; a wait near
// the largest Duration must not wrap around while rounding.
func TestReadWaitRoundsUpToMillisAndCaps(t *testing.T) {
	p := newPeer(t)
	c, enc := dial(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, tc := range []struct {
		wait time.Duration
		want int32
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{time.Duration(math.MaxInt32) * time.Millisecond, math.MaxInt32},
		{time.Duration(math.MaxInt32)*time.Millisecond + 1, math.MaxInt32},
		{time.Duration(math.MaxInt64), math.MaxInt32},
	} {
		errs := make(chan error, 1)
		go func() {
			_, err := c.ReadSegment(ctx, "a/b/1.#epoch.0", 0, 10, tc.wait)
			errs <- err
		}()
		r := p.next(t).(*protocol.ReadSegment)
		enc.WriteMessage(&protocol.SegmentRead{RequestID: r.RequestID, Segment: r.Segment, AtTail: true})
		if err := <-errs; err != nil {
			t.Fatalf("wait %v: %v", tc.wait, err)
		}
		if r.WaitMillis != tc.want {
			t.Errorf("wait %v: %d ms on the wire, want %d", tc.wait, r.WaitMillis, tc.want)
		}
	}
}
