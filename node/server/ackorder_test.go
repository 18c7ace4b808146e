package server_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

// The connection's writer answers appends in request order whatever
// becomes ready first: blocks refused at once (no writer set up), resends
// (which wait for a sync point), new blocks that wait for their batch,
// with reads answered in between. A fatal frame after them is answered
// (request id -1) only after every append before it.
func TestAcksInRequestOrderAcrossKinds(t *testing.T) {
	e := start(t, nil)
	ctx := ctxT(t)
	s := seg(7)
	c := e.dial()
	if err := c.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	const stored = 4
	var length int64
	for i := int64(1); i <= stored; i++ {
		ack := must(c.Append(ctx, "w", i, 1, block(fmt.Sprintf("event %d", i)), protocol.NoExpectedOffset))(t)
		length = ack.CurrentOffset
	}

	r := e.raw()
	r.send(&protocol.SetupAppend{RequestID: 1, Segment: s, WriterID: "w"})
	if m, ok := r.recv().(*protocol.AppendSetup); !ok || m.LastEventNumber != stored {
		t.Fatalf("setup: %s, want last event %d", describe(m), stored)
	}
	type want struct {
		id      int64
		code    protocol.ErrorCode // with refused
		refused bool
		prev    int64 // DataAppended: PreviousEventNumber
	}
	var wants []want
	id := int64(10)
	appendBlock := func(writer string, ev int64, w want) {
		r.send(&protocol.AppendBlock{RequestID: id, WriterID: writer, LastEventNumber: ev, EventCount: 1,
			Data: block(fmt.Sprintf("event %d", ev)), ExpectedOffset: protocol.NoExpectedOffset})
		w.id = id
		wants = append(wants, w)
		id++
	}
	reads := map[int64]bool{}
	read := func() {
		r.send(&protocol.ReadSegment{RequestID: id, Segment: s, Offset: 0, MaxBytes: 1 << 10})
		reads[id] = true
		id++
	}
	// Resends of stored blocks, then new ones, a refused one among them,
	// and reads.
	appendBlock("w", stored-1, want{prev: stored})
	appendBlock("nobody", 1, want{refused: true, code: protocol.CodeWriterNotSetUp})
	appendBlock("w", stored, want{prev: stored})
	read()
	prev := int64(stored)
	for ev := int64(stored + 1); ev <= stored+40; ev++ {
		appendBlock("w", ev, want{prev: prev})
		prev = ev
		if ev%7 == 0 {
			appendBlock("nobody", ev, want{refused: true, code: protocol.CodeWriterNotSetUp})
			read()
		}
	}
	// A frame that breaks the stream: answered last.
	var h [8]byte
	binary.BigEndian.PutUint16(h[0:], uint16(protocol.TypeAppendBlock))
	binary.BigEndian.PutUint32(h[4:], protocol.MaxFrameSize+1)
	r.write(h[:])

	var got []int64
	for len(got) < len(wants) || len(reads) > 0 {
		m := r.recv()
		switch m := m.(type) {
		case *protocol.SegmentRead:
			if !reads[m.RequestID] {
				t.Fatalf("unexpected %s", describe(m))
			}
			delete(reads, m.RequestID)
			continue
		case *protocol.DataAppended:
			w := wants[len(got)]
			if m.RequestID != w.id || w.refused || m.PreviousEventNumber != w.prev {
				t.Fatalf("reply %d: %s; want request %d (refused %v, previous event %d)", len(got), describe(m), w.id, w.refused, w.prev)
			}
			if w.prev == stored && m.CurrentOffset < length {
				t.Fatalf("resend acknowledged at offset %d, below the stored length %d", m.CurrentOffset, length)
			}
			got = append(got, m.RequestID)
		case *protocol.ErrorReply:
			if m.RequestID == -1 {
				t.Fatalf("the fatal frame answered after %d of %d appends: %s", len(got), len(wants), describe(m))
			}
			w := wants[len(got)]
			if m.RequestID != w.id || !w.refused || m.Code != w.code {
				t.Fatalf("reply %d: %s; want request %d (refused %v, code %s)", len(got), describe(m), w.id, w.refused, w.code)
			}
			got = append(got, m.RequestID)
		default:
			t.Fatalf("unexpected %s", describe(m))
		}
	}
	if !slices.IsSorted(got) {
		t.Fatalf("append replies out of order: %v", got)
	}
	r.recvError(-1, protocol.CodeFrameTooLarge)
	r.expectClosed()

	// The segment holds each event once, in order.
	var wantEvents []string
	for i := 1; i <= stored+40; i++ {
		wantEvents = append(wantEvents, fmt.Sprintf("event %d", i))
	}
	info := must(c.GetSegmentInfo(ctx, s))(t)
	if gotEvents := events(t, readAll(t, c, s, 0, info.Length)); !slices.Equal(gotEvents, wantEvents) {
		t.Fatalf("segment holds %q, want %q", gotEvents, wantEvents)
	}
}
