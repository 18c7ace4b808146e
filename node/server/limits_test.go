package server_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
)

// dialIdle opens n connections to e from the local IP from that send
// nothing.
func (e *env) dialIdle(from string, n int) []net.Conn {
	e.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: testTimeout}
	out := make([]net.Conn, n)
	for i := range out {
		nc, err := d.Dial("tcp", e.addr)
		if err != nil {
			e.t.Fatalf("dial from %s: %v", from, err)
		}
		e.t.Cleanup(func() { nc.Close() })
		out[i] = nc
	}
	return out
}

// expectEOF waits for the node to close nc, having sent nothing on it.
func expectEOF(t *testing.T, what string, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(testTimeout))
	var b [1]byte
	n, err := nc.Read(b[:])
	if n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		return
	}
	t.Fatalf("%s: read (%d bytes, %v), want the connection closed by the node", what, n, err)
}

// works proves that c can create a segment, append to it and read it
// back.
func works(t *testing.T, c *segclient.Conn, s string) {
	t.Helper()
	ctx := ctxT(t)
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "w-"+s, s); err != nil {
		t.Fatal(err)
	}
	data := block("a", "b")
	if _, err := c.Append(ctx, "w-"+s, 2, 2, data, protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, s, 0, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatalf("read back %q, want %q", got, data)
	}
}

// More idle sockets than the whole node's cap, from one peer, do not lock
// out a client from another peer: the peer's connections beyond its own
// cap are closed as they are accepted. No timeout plays a part.
func TestOnePeerCannotLockOutAnother(t *testing.T) {
	e := startOpts(t, server.Options{MaxConnections: 8, MaxConnsPerPeer: 4, HandshakeTimeout: -1, IdleTimeout: -1})
	idle := e.dialIdle("127.0.0.2", 16)

	c := e.dial() // from 127.0.0.1
	works(t, c, seg(1))

	for i, nc := range idle[4:] {
		expectEOF(t, "socket beyond the peer's cap "+string(rune('a'+i)), nc)
	}
	st := e.srv.Stats()
	if st.Conns != 5 || st.RefusedPerPeer != 12 {
		t.Fatalf("stats %+v: want 5 connections (4 idle, 1 client) and 12 refused", st)
	}
}

// Sockets that never complete a first frame are closed after the
// handshake timeout, which frees their slots: a client that waited behind
// them at the cap gets in and works.
func TestHandshakeTimeoutFreesSlots(t *testing.T) {
	// Long enough that a real client's Hello, in the socket before the
	// node accepts it, is never late even on a loaded machine.
	const handshake = 2 * time.Second
	e := startOpts(t, server.Options{MaxConnections: 4, MaxConnsPerPeer: 4, HandshakeTimeout: handshake, IdleTimeout: -1})
	idle := e.dialIdle("127.0.0.2", 4)
	// Two of them start a frame and stop: a partial header, a header
	// announcing 100 bytes that never come.
	idle[1].Write([]byte{0, 1, 0})
	idle[2].Write(frame(protocol.TypeHello, 0, make([]byte, 100), nil)[:12])

	c := e.dial() // waits at the cap until a slot is freed
	works(t, c, seg(2))
	for _, nc := range idle {
		expectEOF(t, "silent socket", nc)
	}
	if st := e.srv.Stats(); st.TimedOut < 4 {
		t.Fatalf("stats %+v: want at least 4 connections timed out", st)
	}
}

// A connection with nothing registered on it is closed after the idle
// timeout; one with a writer set up, or with a read in flight, is not. A
// connection whose read completes is idle from then on.
func TestIdleTimeoutSparesWritersAndParkedReads(t *testing.T) {
	// The handshake timeout covers each connection until its first frame;
	// the first frames of w and r register something, so neither is ever
	// idle before the test means it to be.
	e := startOpts(t, server.Options{HandshakeTimeout: testTimeout, IdleTimeout: 50 * time.Millisecond})
	s := seg(3)
	if err := must(e.node.ContainerFor(s))(t).Create(s, nil); err != nil {
		t.Fatal(err)
	}
	w := e.raw()
	w.send(&protocol.SetupAppend{RequestID: 2, Segment: s, WriterID: "w"})
	if m := w.recv(); m.Type() != protocol.TypeAppendSetup {
		t.Fatalf("setup: %s", describe(m))
	}
	r := e.raw()
	r.send(&protocol.ReadSegment{RequestID: 1, Segment: s, Offset: 0, MaxBytes: 1 << 10, WaitMillis: int32(testTimeout / time.Millisecond)})

	// Idle since its Hello was answered: closed.
	i := e.raw()
	i.send(&protocol.Hello{RequestID: 1, LowVersion: protocol.WireVersion, HighVersion: protocol.WireVersion})
	if m := i.recv(); m.Type() != protocol.TypeHello {
		t.Fatalf("hello: %s", describe(m))
	}
	i.expectClosed()

	// The writer, older than i, still appends; the parked read gets the
	// data, and then r is idle.
	data := block("x")
	w.send(&protocol.AppendBlock{RequestID: 3, WriterID: "w", LastEventNumber: 1, EventCount: 1, Data: data,
		ExpectedOffset: protocol.NoExpectedOffset})
	if m := w.recv(); m.Type() != protocol.TypeDataAppended {
		t.Fatalf("append: %s", describe(m))
	}
	m := r.recv()
	if sr, ok := m.(*protocol.SegmentRead); !ok || len(sr.Data) != 1 || !bytes.Equal(sr.Data[0], data) {
		t.Fatalf("parked read: %s", describe(m))
	}
	r.expectClosed()

	w.send(&protocol.GetSegmentInfo{RequestID: 4, Segment: s})
	if m := w.recv(); m.Type() != protocol.TypeSegmentInfo {
		t.Fatalf("info: %s", describe(m))
	}
}

// waitStats polls the server's counters until cond holds; the counters
// are the observable event (they change as the node reads), bounded by
// testTimeout.
func (e *env) waitStats(what string, cond func(server.Stats) bool) server.Stats {
	e.t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		st := e.srv.Stats()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: stats %+v after %v", what, st, testTimeout)
		}
		<-tick.C
	}
}

// Connections that each send the start of a maximal frame hold at most
// the request memory, each peer at most its share; the others wait
// unread. A client of another peer still appends, and everything held
// comes back when the attackers go.
func TestPartialFramesStayWithinRequestMemory(t *testing.T) {
	const frame = protocol.MaxFrameSize
	opts := server.Options{RequestMemory: 5 * frame, PeerRequestMemory: 2 * frame, HandshakeTimeout: -1, IdleTimeout: -1}
	e := startOpts(t, opts)
	payload := int64(len(partialFrame(t, 0)) - 12) // header bytes
	payload = frame - 4 - payload                  // what each attacker's frame reserves

	var attackers []net.Conn
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		attackers = append(attackers, attack(t, e.addr, &net.TCPAddr{IP: net.ParseIP(ip)}, 10, 1<<10, testTimeout)...)
	}
	// Two frames per peer fit its share; the other 16 connections wait.
	st := e.waitStats("attackers hold their shares", func(st server.Stats) bool { return st.HeldBytes == 4*payload })
	if st.HeldBytes > opts.RequestMemory {
		t.Fatalf("held %d bytes, above the request memory %d", st.HeldBytes, opts.RequestMemory)
	}

	c := e.dial()
	works(t, c, seg(4))
	if st := e.srv.Stats(); st.HeldBytes != 4*payload {
		t.Fatalf("after the client's requests: held %d, want the attackers' %d", st.HeldBytes, 4*payload)
	}

	for _, nc := range attackers {
		nc.Close()
	}
	e.waitStats("everything released", func(st server.Stats) bool { return st.HeldBytes == 0 })
}

// A budget of exactly one maximal frame, node-wide and per peer, still
// lets every frame through: two connections pipelining maximal blocks
// take turns, each block waiting for the one before to be durable. No
// frame waits while holding part of the budget, so nothing deadlocks.
func TestOneFrameBudgetMakesProgress(t *testing.T) {
	e := startOpts(t, server.Options{RequestMemory: server.MinRequestMemory, PeerRequestMemory: server.MinRequestMemory})
	const blocks = 2
	ev := bytes.Repeat([]byte{'e'}, protocol.MaxEventSize-4<<10)
	data := protocol.AppendEvent(protocol.AppendEvent(nil, ev), ev) // two events: the frame is just under 16 MiB

	errs := make(chan error, 2)
	for i := range 2 {
		c := e.dial()
		s, w := seg(int64(10+i)), "big"+string(rune('a'+i))
		ctx := ctxT(t)
		if err := c.CreateSegment(ctx, s); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetupAppend(ctx, w, s); err != nil {
			t.Fatal(err)
		}
		go func() {
			var fs []*segclient.AppendFuture
			for b := range blocks {
				f, err := c.AppendAsync(ctx, w, int64(2*b+2), 2, data, protocol.NoExpectedOffset)
				if err != nil {
					errs <- err
					return
				}
				fs = append(fs, f)
			}
			for _, f := range fs {
				if _, err := f.Wait(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	e.waitStats("everything released", func(st server.Stats) bool { return st.HeldBytes == 0 })
}

func TestOptionsValidate(t *testing.T) {
	const min = server.MinRequestMemory
	tests := []struct {
		opts server.Options
		ok   bool
	}{
		{server.Options{}, true},
		{server.Options{MaxConnections: -1}, false},
		{server.Options{MaxConnections: 10, MaxConnsPerPeer: 10}, true},
		{server.Options{MaxConnections: 10, MaxConnsPerPeer: 11}, false},
		{server.Options{MaxConnsPerPeer: server.DefaultMaxConnections + 1}, false},
		{server.Options{MaxConnsPerPeer: -1, HandshakeTimeout: -1, IdleTimeout: -1}, true},
		{server.Options{RequestMemory: min}, true},
		{server.Options{RequestMemory: min - 1}, false},
		{server.Options{RequestMemory: -1}, false},
		{server.Options{PeerRequestMemory: min}, true},
		{server.Options{PeerRequestMemory: min - 1}, false},
		{server.Options{PeerRequestMemory: server.DefaultRequestMemory}, true},
		{server.Options{PeerRequestMemory: server.DefaultRequestMemory + 1}, false},
		{server.Options{RequestMemory: 2 * min, PeerRequestMemory: 2*min + 1}, false},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, server.ErrInvalidOptions)) {
			t.Errorf("%+v: Validate() = %v, want ok %v", tt.opts, err, tt.ok)
		}
	}
}
