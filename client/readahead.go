package client

import (
	"encoding/binary"

	"github.com/sluice-streams/sluice/protocol"
)

// Read-ahead. A segment's reader keeps one fetch in flight while fewer
// than readBuffer bytes are buffered, not only once the buffer holds no
// whole event: while the application takes the events of one read, the
// next is on its way (catching up, the node loads the next part of a
// tier-2 chunk meanwhile instead of after the reader ran dry). A fetch's
// bytes queue in segRead.pend as the node sent them; they are never
// copied into the buffer wholesale: only an event cut by a read's end is
// stitched together from the end of one read and the start of the next.
// So a segment holds at most about twice readBuffer.

// buffered is the bytes sr holds: its buffer and the reads queued behind.
func (sr *segRead) buffered() int {
	n := len(sr.buf)
	for _, p := range sr.pend {
		n += len(p)
	}
	return n
}

// fetchOff is where sr's next fetch starts: after every byte it holds.
func (sr *segRead) fetchOff() int64 { return sr.bufOff + int64(sr.buffered()) }

// stitch moves queued reads into sr.buf until it starts with a whole
// event or nothing is queued: an empty buffer takes the next read as it
// is; a buffer holding the start of an event gets the bytes that complete
// it (one event's copy) and the read's rest stays queued. Afterwards,
// either sr.buf starts with a whole event or sr.pend is empty.
func (sr *segRead) stitch() {
	for len(sr.pend) > 0 {
		if _, _, err := protocol.NextEvent(sr.buf); err == nil {
			return
		}
		if len(sr.buf) == 0 {
			sr.buf, sr.pend[0] = sr.pend[0], nil
			sr.pend = sr.pend[1:]
			continue
		}
		want := protocol.EventHeaderSize
		if len(sr.buf) >= protocol.EventHeaderSize {
			want += int(binary.BigEndian.Uint32(sr.buf))
		}
		k := min(want-len(sr.buf), len(sr.pend[0]))
		// A new slice: sr.buf may share its array with bytes already
		// returned to the application.
		sr.buf = append(append(make([]byte, 0, len(sr.buf)+k), sr.buf...), sr.pend[0][:k]...)
		if sr.pend[0] = sr.pend[0][k:]; len(sr.pend[0]) == 0 {
			sr.pend[0] = nil
			sr.pend = sr.pend[1:]
		}
	}
	if len(sr.pend) == 0 {
		sr.pend = nil
	}
}
