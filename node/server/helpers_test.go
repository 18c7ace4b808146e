package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/protocol"
)

// testTimeout bounds every network wait of a test.
const testTimeout = 20 * time.Second

const containers = 4

type env struct {
	t    *testing.T
	node *node.Node
	srv  *server.Server
	addr string
	stop func() // closes the server, then the node; idempotent
}

// start opens a node on a temporary directory (on fs, if not nil) and
// serves it on 127.0.0.1; cleanup closes both.
func start(t *testing.T, fs vfs.FS) *env {
	t.Helper()
	e := startNoCleanup(t, fs)
	t.Cleanup(e.stop)
	return e
}

// startNoCleanup is start for a test that stops the server itself.
func startNoCleanup(t *testing.T, fs vfs.FS) *env {
	return startWith(t, func(c *node.Config) { c.FS = fs })
}

// startWith is startNoCleanup with a node configuration of the test's.
func startWith(t *testing.T, mod func(*node.Config)) *env {
	t.Helper()
	return startServer(t, mod, server.Options{})
}

// startOpts is start with server options of the test's (the Logger is
// set here).
func startOpts(t *testing.T, opts server.Options) *env {
	t.Helper()
	e := startServer(t, func(*node.Config) {}, opts)
	t.Cleanup(e.stop)
	return e
}

// startServer opens a node configured by mod and serves it with opts; the
// caller stops it.
func startServer(t *testing.T, mod func(*node.Config), opts server.Options) *env {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	log.SetLevel(logrus.DebugLevel)
	cfg := node.Config{Dir: t.TempDir(), Containers: containers, Logger: log}
	mod(&cfg)
	n, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	opts.Logger = log
	srv := server.New(n, opts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	e := &env{t: t, node: n, srv: srv, addr: l.Addr().String()}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			if err := srv.Close(); err != nil {
				t.Errorf("server close: %v", err)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve returned %v after Close, want nil", err)
				}
			case <-time.After(testTimeout):
				t.Errorf("Serve did not return after Close")
			}
			if err := n.Close(); err != nil {
				t.Errorf("node close: %v", err)
			}
		})
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) dial() *segclient.Conn {
	e.t.Helper()
	c, err := segclient.Dial(ctxT(e.t), e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func seg(n int64) string { return protocol.SegmentName("scope", "stream", n, 0) }

// segsInOneContainer returns k segment names that share a container.
func segsInOneContainer(k int) []string {
	var out []string
	want := -1
	for i := int64(0); len(out) < k; i++ {
		s := seg(1000 + i)
		if c := protocol.ContainerOf(s, containers); want == -1 || c == want {
			want = c
			out = append(out, s)
		}
	}
	return out
}

// block frames events and returns the block.
func block(events ...string) []byte {
	var b []byte
	for _, e := range events {
		b = protocol.AppendEvent(b, []byte(e))
	}
	return b
}

// readAll reads [from, to) of a segment.
func readAll(t *testing.T, c *segclient.Conn, segment string, from, to int64) []byte {
	t.Helper()
	var out []byte
	for off := from; off < to; {
		r, err := c.ReadSegment(ctxT(t), segment, off, int32(min(to-off, 1<<20)), 0)
		if err != nil {
			t.Fatalf("read %s at %d: %v", segment, off, err)
		}
		n := 0
		for _, d := range r.Data {
			out = append(out, d...)
			n += len(d)
		}
		if n == 0 || int64(n) > to-off {
			t.Fatalf("read %s at %d: %d bytes, asked for at most %d", segment, off, n, to-off)
		}
		off += int64(n)
	}
	return out
}

// events parses framed events.
func events(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for {
		ev, rest, err := protocol.NextEvent(data)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parse events: %v", err)
		}
		out = append(out, string(ev))
		data = rest
	}
}

// checkIs fails unless err matches want.
func checkIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

// rawConn speaks frames directly, to send what the client never would and
// to send requests without waiting for their replies.
type rawConn struct {
	t   *testing.T
	nc  net.Conn
	enc *protocol.Encoder
	dec *protocol.Decoder
}

func (e *env) raw() *rawConn {
	e.t.Helper()
	nc, err := net.DialTimeout("tcp", e.addr, testTimeout)
	if err != nil {
		e.t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	e.t.Cleanup(func() { nc.Close() })
	return &rawConn{t: e.t, nc: nc, enc: protocol.NewEncoder(nc), dec: protocol.NewDecoder(nc)}
}

func (r *rawConn) send(m protocol.Message) {
	r.t.Helper()
	if err := r.enc.WriteMessage(m); err != nil {
		r.t.Fatalf("send %s: %v", m.Type(), err)
	}
}

func (r *rawConn) write(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawConn) recv() protocol.Message {
	r.t.Helper()
	m, err := r.dec.ReadMessage()
	if err != nil {
		r.t.Fatalf("receive: %v", err)
	}
	return m
}

// recvError receives an ErrorReply and checks its request id and code.
func (r *rawConn) recvError(id int64, code protocol.ErrorCode) *protocol.ErrorReply {
	r.t.Helper()
	m := r.recv()
	er, ok := m.(*protocol.ErrorReply)
	if !ok {
		r.t.Fatalf("got %s %+v, want ErrorReply %s", m.Type(), m, code)
	}
	if er.RequestID != id || er.Code != code {
		r.t.Fatalf("got ErrorReply id %d code %s (%q), want id %d code %s", er.RequestID, er.Code, er.Message, id, code)
	}
	return er
}

// expectClosed checks that the server closes the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	m, err := r.dec.ReadMessage()
	if err == nil {
		r.t.Fatalf("got %s %+v, want the connection closed", m.Type(), m)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatalf("connection still open: %v", err)
	}
}

// frame builds a frame by hand: type, flags, msgpack header, payload.
func frame(typ protocol.Type, flags uint16, hdr, payload []byte) []byte {
	var b bytes.Buffer
	var p [12]byte
	binary.BigEndian.PutUint16(p[0:], uint16(typ))
	binary.BigEndian.PutUint16(p[2:], flags)
	binary.BigEndian.PutUint32(p[4:], uint32(4+len(hdr)+len(payload)))
	binary.BigEndian.PutUint32(p[8:], uint32(len(hdr)))
	b.Write(p[:])
	b.Write(hdr)
	b.Write(payload)
	return b.Bytes()
}

// must(f())(t) returns f's value, failing t on f's error.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func describe(m protocol.Message) string { return fmt.Sprintf("%s %+v", m.Type(), m) }
