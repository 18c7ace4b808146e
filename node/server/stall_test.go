package server_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
)

// stallTimeout is the frame and write timeout of the tests below: short,
// but long enough that the honest client's frames and reads, on loopback,
// never miss it even on a loaded machine.
const stallTimeout = 2 * time.Second

// rawFrom is raw from the local IP from (another peer than 127.0.0.1),
// with a socket receive buffer of rcvBuf bytes if above 0.
func (e *env) rawFrom(from string, rcvBuf int) *rawConn {
	e.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: testTimeout}
	nc, err := d.Dial("tcp", e.addr)
	if err != nil {
		e.t.Fatalf("dial from %s: %v", from, err)
	}
	if rcvBuf > 0 {
		nc.(*net.TCPConn).SetReadBuffer(rcvBuf)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	e.t.Cleanup(func() { nc.Close() })
	return &rawConn{t: e.t, nc: nc, enc: protocol.NewEncoder(nc), dec: protocol.NewDecoder(nc)}
}

// setUpWriter creates segment s on r and sets up writer w on it.
func (r *rawConn) setUpWriter(s, w string) {
	r.t.Helper()
	r.send(&protocol.CreateSegment{RequestID: 1, Segment: s})
	if m := r.recv(); m.Type() != protocol.TypeSegmentCreated {
		r.t.Fatalf("create: %s", describe(m))
	}
	r.send(&protocol.SetupAppend{RequestID: 2, Segment: s, WriterID: w})
	if m := r.recv(); m.Type() != protocol.TypeAppendSetup {
		r.t.Fatalf("setup: %s", describe(m))
	}
}

// appendsDespite proves that a client of 127.0.0.1 appends a block
// bigger than what the stalled peer leaves of the request memory.
func appendsDespite(t *testing.T, e *env, s string) {
	t.Helper()
	c := e.dial()
	ctx := ctxT(t)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "honest", s); err != nil {
		t.Fatal(err)
	}
	data := block(string(bytes.Repeat([]byte{'h'}, 4<<10)))
	if _, err := c.Append(ctx, "honest", 1, 1, data, protocol.NoExpectedOffset); err != nil {
		t.Fatalf("append behind the stalled peer: %v", err)
	}
}

// A peer with a writer set up (so never idle) that stops in the middle of
// a maximal AppendBlock holds the frame's request memory, the whole of
// both budgets here, only until the frame timeout: then it loses its
// connection and the memory, and another peer's append goes through.
func TestMidFrameStallEndsAtFrameTimeout(t *testing.T) {
	e := startOpts(t, server.Options{RequestMemory: server.MinRequestMemory, PeerRequestMemory: server.MinRequestMemory,
		HandshakeTimeout: testTimeout, IdleTimeout: -1, FrameTimeout: stallTimeout, WriteTimeout: testTimeout})
	a := e.rawFrom("127.0.0.2", 0)
	a.setUpWriter(seg(40), "w") // the frame's header names writer "w"
	a.write(partialFrame(t, 1<<20))
	e.waitStats("the attacker's frame holds its memory", func(st server.Stats) bool { return st.HeldBytes > protocol.MaxFrameSize-1<<10 })

	appendsDespite(t, e, seg(41))
	a.expectClosed()
	st := e.waitStats("the attacker's memory released", func(st server.Stats) bool { return st.HeldBytes == 0 })
	if st.FrameTimedOut != 1 || st.TimedOut != 0 {
		t.Fatalf("stats %+v: want one connection closed by the frame timeout, none by the others", st)
	}
}

// A peer that stops reading its replies blocks its connection's writer,
// and behind it the acks of its appends, whose memory (here a block of
// nearly the whole budget) is released only once acked. At the write
// timeout the node drops the connection and releases it all, and another
// peer's append goes through.
func TestUnreadRepliesEndAtWriteTimeout(t *testing.T) {
	e := startOpts(t, server.Options{RequestMemory: server.MinRequestMemory, PeerRequestMemory: server.MinRequestMemory,
		HandshakeTimeout: testTimeout, IdleTimeout: -1, FrameTimeout: testTimeout, WriteTimeout: stallTimeout})
	s := seg(42)
	// From here on the attacker reads nothing. Reads of the 1 MiB block
	// fill the sockets' buffers and block the connection's writer, which
	// acks appends; the appends queued behind it, the last of nearly the
	// whole budget, stay held.
	a, id := stallingPeer(t, e, s)
	ev := int64(2)
	for range 400 {
		a.send(&protocol.AppendBlock{RequestID: id, WriterID: "w", LastEventNumber: ev, EventCount: 1, Data: block("s"),
			ExpectedOffset: protocol.NoExpectedOffset})
		id, ev = id+1, ev+1
	}
	half := bytes.Repeat([]byte{'b'}, protocol.MaxEventSize-1<<10)
	a.send(&protocol.AppendBlock{RequestID: id, WriterID: "w", LastEventNumber: ev + 1, EventCount: 2,
		Data: protocol.AppendEvent(protocol.AppendEvent(nil, half), half), ExpectedOffset: protocol.NoExpectedOffset})
	// And the attacker's reader waits for memory its own appends hold:
	// the connection still ends, and releases everything.
	a.send(&protocol.AppendBlock{RequestID: id + 1, WriterID: "w", LastEventNumber: ev + 2, EventCount: 1,
		Data: block(string(bytes.Repeat([]byte{'s'}, 4<<10))), ExpectedOffset: protocol.NoExpectedOffset})

	appendsDespite(t, e, seg(43))
	st := e.waitStats("the attacker dropped and its memory released", func(st server.Stats) bool {
		return st.Conns == 1 && st.HeldBytes == 0
	})
	if st.WriteTimedOut != 1 || st.TimedOut != 0 || st.FrameTimedOut != 0 {
		t.Fatalf("stats %+v: want one connection closed by the write timeout, none by the others", st)
	}
}

// A connection that waits for request memory in the middle of a frame is
// not idle: its idle deadline, set before the frame began, passes while
// it waits, and yet its frame is read and answered once memory is free.
// Here the memory is held by another peer's unfinished frame until that
// one's frame timeout, longer than the idle timeout.
func TestWaitForMemoryIsNotIdle(t *testing.T) {
	const idle = stallTimeout
	e := startOpts(t, server.Options{RequestMemory: server.MinRequestMemory, PeerRequestMemory: server.MinRequestMemory,
		HandshakeTimeout: testTimeout, IdleTimeout: idle, FrameTimeout: 2 * idle, WriteTimeout: testTimeout})
	hello := &protocol.Hello{RequestID: 1, LowVersion: protocol.WireVersion, HighVersion: protocol.WireVersion}
	// b's idle deadline runs from its Hello on.
	b := e.rawFrom("127.0.0.3", 0)
	b.send(hello)
	if m := b.recv(); m.Type() != protocol.TypeHello {
		t.Fatalf("hello: %s", describe(m))
	}
	a := e.rawFrom("127.0.0.2", 0)
	a.send(hello)
	if m := a.recv(); m.Type() != protocol.TypeHello {
		t.Fatalf("hello: %s", describe(m))
	}
	a.write(partialFrame(t, 1<<20))
	e.waitStats("a's frame holds the memory", func(st server.Stats) bool { return st.HeldBytes > protocol.MaxFrameSize-1<<10 })

	// b's frame is bigger than the decoder's buffer, so that its body is
	// read from the socket after the wait.
	sent := make(chan error, 1)
	go func() {
		sent <- b.enc.WriteMessage(&protocol.AppendBlock{RequestID: 2, WriterID: "nobody", LastEventNumber: 1, EventCount: 1,
			Data: block(string(bytes.Repeat([]byte{'b'}, 256<<10))), ExpectedOffset: protocol.NoExpectedOffset})
	}()
	b.recvError(2, protocol.CodeWriterNotSetUp)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	a.expectClosed()
	if st := e.waitStats("a's memory released", func(st server.Stats) bool { return st.HeldBytes == 0 }); st.FrameTimedOut != 1 {
		t.Fatalf("stats %+v: want a closed by the frame timeout", st)
	}
}

// stallingPeer sets up writer "w" on s from 127.0.0.2, appends one 1 MiB
// block (acknowledged), then asks 32 times for it and reads no reply from
// then on: the replies fill the sockets' buffers and block the
// connection's writer. It returns the peer and the next request id.
func stallingPeer(t *testing.T, e *env, s string) (*rawConn, int64) {
	t.Helper()
	a := e.rawFrom("127.0.0.2", 4<<10)
	a.setUpWriter(s, "w")
	big := block(string(bytes.Repeat([]byte{'r'}, 1<<20)))
	a.send(&protocol.AppendBlock{RequestID: 3, WriterID: "w", LastEventNumber: 1, EventCount: 1, Data: big,
		ExpectedOffset: protocol.NoExpectedOffset})
	if m := a.recv(); m.Type() != protocol.TypeDataAppended {
		t.Fatalf("append: %s", describe(m))
	}
	id := int64(10)
	for range 32 {
		a.send(&protocol.ReadSegment{RequestID: id, Segment: s, Offset: 0, MaxBytes: 1 << 20})
		id++
	}
	return a, id
}
