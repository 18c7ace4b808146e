package server_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

// fixture is a segment with known content, to check after each bad input
// that nothing was harmed.
type fixture struct {
	seg  string
	data []byte
}

func newFixture(t *testing.T, e *env) fixture {
	t.Helper()
	ctx := ctxT(t)
	c := e.dial()
	f := fixture{seg: seg(7), data: block("one", "two", "three")}
	if err := c.CreateSegment(ctx, f.seg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "fixture", f.seg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "fixture", 1, 3, f.data, protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	return f
}

// check proves the node still serves: a new connection reads the fixture
// back and appends to it.
func (f fixture) check(t *testing.T, e *env) {
	t.Helper()
	c := e.dial()
	f.checkOn(t, c)
	c.Close()
}

func (f fixture) checkOn(t *testing.T, c *segclient.Conn) {
	t.Helper()
	if got := readAll(t, c, f.seg, 0, int64(len(f.data))); !bytes.Equal(got, f.data) {
		t.Fatalf("fixture reads back %q, want %q", got, f.data)
	}
	if info := must(c.GetSegmentInfo(ctxT(t), f.seg))(t); info.Length != int64(len(f.data)) {
		t.Fatalf("fixture length %d, want %d", info.Length, len(f.data))
	}
}

// checkRaw proves a raw connection still works after a non-fatal error.
func (f fixture) checkRaw(t *testing.T, r *rawConn, id int64) {
	t.Helper()
	r.send(&protocol.GetSegmentInfo{RequestID: id, Segment: f.seg})
	m := r.recv()
	if info, ok := m.(*protocol.SegmentInfo); !ok || info.RequestID != id || info.Length != int64(len(f.data)) {
		t.Fatalf("info on the same connection: %s", describe(m))
	}
}

func header(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFatalFramesCloseOnlyTheirConnection(t *testing.T) {
	e := start(t, nil)
	f := newFixture(t, e)
	bystander := e.dial() // open throughout: must not be affected
	cases := []struct {
		name  string
		bytes []byte
		code  protocol.ErrorCode
	}{
		{"frame above 16 MiB (header only)", func() []byte {
			var h [8]byte
			binary.BigEndian.PutUint16(h[0:], uint16(protocol.TypeAppendBlock))
			binary.BigEndian.PutUint32(h[4:], protocol.MaxFrameSize+1)
			return h[:]
		}(), protocol.CodeFrameTooLarge},
		{"flags not zero", frame(protocol.TypeGetSegmentInfo, 1, header(t, map[string]any{"id": 5, "s": f.seg}), nil),
			protocol.CodeMalformedFrame},
		{"header length beyond the frame", func() []byte {
			b := frame(protocol.TypeGetSegmentInfo, 0, header(t, map[string]any{"id": 5, "s": f.seg}), nil)
			binary.BigEndian.PutUint32(b[8:], 1000)
			return b
		}(), protocol.CodeMalformedFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.raw()
			// A good request first: its reply comes before the error.
			r.send(&protocol.GetSegmentInfo{RequestID: 1, Segment: f.seg})
			r.write(tc.bytes)
			if m, ok := r.recv().(*protocol.SegmentInfo); !ok || m.RequestID != 1 {
				t.Fatalf("reply to the request before the bad frame: %s", describe(m))
			}
			r.recvError(-1, tc.code)
			r.expectClosed()
			f.check(t, e)
			f.checkOn(t, bystander)
		})
	}
}

func TestBadRequestsAnsweredConnectionGoesOn(t *testing.T) {
	e := start(t, nil)
	f := newFixture(t, e)

	t.Run("garbage msgpack", func(t *testing.T) {
		r := e.raw()
		r.write(frame(protocol.TypeCreateSegment, 0, []byte{0xc1, 0xc1, 0xc1}, nil))
		r.recvError(-1, protocol.CodeMalformedMessage)
		f.checkRaw(t, r, 2)
		// A header whose id can be read gets its id back.
		r.write(frame(protocol.TypeCreateSegment, 0, header(t, map[string]any{"id": 3, "s": []int{1, 2}}), nil))
		r.recvError(3, protocol.CodeMalformedMessage)
		f.checkRaw(t, r, 4)
		f.check(t, e)
	})

	t.Run("unknown message type", func(t *testing.T) {
		r := e.raw()
		r.write(frame(999, 0, header(t, map[string]any{"id": 9}), []byte("payload")))
		r.recvError(9, protocol.CodeUnknownCommand)
		// A reply type is not a request either.
		r.send(&protocol.SegmentCreated{RequestID: 10, Segment: f.seg})
		r.recvError(10, protocol.CodeUnknownCommand)
		f.checkRaw(t, r, 11)
		f.check(t, e)
	})

	t.Run("event over 8 MiB", func(t *testing.T) {
		r := e.raw()
		r.send(&protocol.SetupAppend{RequestID: 1, WriterID: "big", Segment: f.seg})
		if m, ok := r.recv().(*protocol.AppendSetup); !ok {
			t.Fatalf("setup: %s", describe(m))
		}
		// The event header claims more than MaxEventSize; the frame stays
		// small.
		data := make([]byte, 4+100)
		binary.BigEndian.PutUint32(data, protocol.MaxEventSize+1)
		r.send(&protocol.AppendBlock{RequestID: 2, WriterID: "big", LastEventNumber: 1, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: data})
		er := r.recvError(2, protocol.CodeEventTooLarge)
		if er.WriterID != "big" {
			t.Fatalf("error reply names writer %q", er.WriterID)
		}
		// The next append of the writer works and comes after the error.
		ok := block("fits")
		r.send(&protocol.AppendBlock{RequestID: 3, WriterID: "big", LastEventNumber: 1, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: ok})
		m := r.recv()
		if da, isAck := m.(*protocol.DataAppended); !isAck || da.RequestID != 3 || da.CurrentOffset != int64(len(f.data)+len(ok)) {
			t.Fatalf("append after the refused one: %s", describe(m))
		}
		f.data = append(f.data, ok...)
		f.checkRaw(t, r, 4)
		f.check(t, e)
	})

	t.Run("append without setup", func(t *testing.T) {
		c := e.dial()
		_, err := c.Append(ctxT(t), "nobody", 1, 1, block("x"), protocol.NoExpectedOffset)
		checkIs(t, "append without setup", err, protocol.ErrWriterNotSetUp)
		// Set up on another connection does not count on this one.
		other := e.dial()
		if _, err := other.SetupAppend(ctxT(t), "elsewhere", f.seg); err != nil {
			t.Fatal(err)
		}
		_, err = c.Append(ctxT(t), "elsewhere", 1, 1, block("x"), protocol.NoExpectedOffset)
		checkIs(t, "append set up on another connection", err, protocol.ErrWriterNotSetUp)
		f.checkOn(t, c)
	})

	t.Run("unknown segment", func(t *testing.T) {
		c := e.dial()
		ctx := ctxT(t)
		missing := seg(404)
		_, err := c.GetSegmentInfo(ctx, missing)
		checkIs(t, "info", err, protocol.ErrNoSuchSegment)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Segment != missing {
			t.Fatalf("error %#v does not name the segment", err)
		}
		_, err = c.SetupAppend(ctx, "w", missing)
		checkIs(t, "setup", err, protocol.ErrNoSuchSegment)
		_, err = c.Append(ctx, "w", 1, 1, block("x"), protocol.NoExpectedOffset)
		checkIs(t, "append after a failed setup", err, protocol.ErrWriterNotSetUp)
		_, err = c.ReadSegment(ctx, missing, 0, 10, 0)
		checkIs(t, "read", err, protocol.ErrNoSuchSegment)
		_, err = c.SealSegment(ctx, missing)
		checkIs(t, "seal", err, protocol.ErrNoSuchSegment)
		f.checkOn(t, c)
	})

	t.Run("invalid segment name", func(t *testing.T) {
		c := e.dial()
		ctx := ctxT(t)
		for _, name := range []string{"", "no/epoch", "scope/stream/01.#epoch.0", "a/b/1.#epoch.0/../x"} {
			checkIs(t, "create "+name, c.CreateSegment(ctx, name), protocol.ErrInvalidArgument)
			_, err := c.ReadSegment(ctx, name, 0, 10, 0)
			checkIs(t, "read "+name, err, protocol.ErrInvalidArgument)
		}
		_, err := c.ReadSegment(ctx, f.seg, -1, 10, 0)
		checkIs(t, "read at a negative offset", err, protocol.ErrInvalidArgument)
		f.checkOn(t, c)
	})

	t.Run("hello from a newer client", func(t *testing.T) {
		r := e.raw()
		r.send(&protocol.Hello{RequestID: 1, LowVersion: protocol.WireVersion + 1, HighVersion: protocol.WireVersion + 3})
		r.recvError(1, protocol.CodeInvalidArgument)
		r.expectClosed()
		f.check(t, e)
	})
}
