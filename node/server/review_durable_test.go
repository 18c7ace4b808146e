package server_test

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
)

// An append the reader queued in its container but could not push into
// the full ack FIFO, because the connection died meanwhile (here: its peer
// stopped reading and the write timeout closed it), is stored: a later
// SetupAppend counts it, and its resend is acknowledged. Its bytes must
// then be readable. The segment's readable end (segment.durable) moves
// only in PendingAppend.Wait, which the connection's writer calls for the
// appends of its FIFO; pushAck drops the one it could not push without
// waiting for it, and a resend's Wait (a sync point) does not move it
// either: the acknowledged event stays invisible to every reader until
// another append to the segment, a seal or a restart.
func TestReviewAppendDroppedAtFullFIFOIsReadable(t *testing.T) {
	e := startOpts(t, server.Options{HandshakeTimeout: testTimeout, IdleTimeout: -1, FrameTimeout: testTimeout,
		WriteTimeout: stallTimeout, AckQueue: 4})
	s := seg(44)
	// The peer reads nothing after its first append: the reads' replies
	// block the connection's writer, the FIFO fills, the reader waits in
	// pushAck with its last block queued in the container.
	a, id := stallingPeer(t, e, s)
	small := block("s")
	for ev := int64(2); ev < 40; ev++ {
		a.send(&protocol.AppendBlock{RequestID: id, WriterID: "w", LastEventNumber: ev, EventCount: 1, Data: small,
			ExpectedOffset: protocol.NoExpectedOffset})
		id++
	}
	e.waitStats("the stalled connection closed by the write timeout", func(st server.Stats) bool {
		return st.WriteTimedOut == 1 && st.Conns == 0 && st.HeldBytes == 0
	})

	c := e.dial()
	ctx := ctxT(t)
	last := must(c.SetupAppend(ctx, "w", s))(t)
	if last < 2 {
		t.Fatalf("setup: last event %d: no small block was stored", last)
	}
	// The writer resends its last block: the node acknowledges it.
	ack := must(c.Append(ctx, "w", last, 1, small, protocol.NoExpectedOffset))(t)
	end := int64(protocol.EventHeaderSize+1<<20) + (last-1)*int64(len(small)) // stallingPeer's 1 MiB event, then the small ones
	if ack.CurrentOffset != end {
		t.Fatalf("resend of block %d acknowledged at offset %d, want %d", last, ack.CurrentOffset, end)
	}
	// Every acknowledged byte is readable.
	off := int64(0)
	deadline := time.Now().Add(3 * time.Second)
	for off < end && time.Now().Before(deadline) {
		r, err := c.ReadSegment(ctx, s, off, 1<<20, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		for _, d := range r.Data {
			off += int64(len(d))
		}
	}
	if off < end {
		t.Fatalf("reads stop at offset %d, but events up to %d are stored and acknowledged (block %d, resent and acknowledged)", off, end, last)
	}
}
