package client

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol"
)

// stitch completes an event cut anywhere by the end of a read, also inside
// its header, and hands whole reads over without copying them.
func TestStitch(t *testing.T) {
	var stream []byte
	var want []string
	for i, n := range []int{0, 1, 3, 4, 5, 17, 200, 2} {
		ev := bytes.Repeat([]byte{byte('a' + i)}, n)
		want = append(want, string(ev))
		stream = protocol.AppendEvent(stream, ev)
	}
	for _, cuts := range [][]int{
		{len(stream)},  // one read
		{1, 2, 3, 4},   // a header cut byte by byte
		{6, 11, 40},    // events cut in their data
		{4, 8, 12, 13}, // cuts at event boundaries
		{100, 101, 102, 103, len(stream) - 1},
	} {
		t.Run(fmt.Sprint(cuts), func(t *testing.T) {
			sr := &segRead{}
			prev := 0
			for _, c := range append(cuts, len(stream)) {
				if c > prev {
					sr.pend = append(sr.pend, stream[prev:c])
					prev = c
				}
			}
			if got := sr.buffered(); got != len(stream) {
				t.Fatalf("buffered %d, want %d", got, len(stream))
			}
			var got []string
			for {
				sr.stitch()
				ev, rest, err := protocol.NextEvent(sr.buf)
				if err != nil {
					if len(sr.buf) != 0 || len(sr.pend) != 0 {
						t.Fatalf("stuck with %d bytes and %d reads queued: %v", len(sr.buf), len(sr.pend), err)
					}
					break
				}
				got = append(got, string(ev))
				sr.buf, sr.bufOff = rest, sr.bufOff+protocol.EventHeaderSize+int64(len(ev))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || sr.bufOff != int64(len(stream)) {
				t.Fatalf("events %q ending at %d, want %q ending at %d", got, sr.bufOff, want, len(stream))
			}
		})
	}
	// A whole read is handed over as it is, not copied.
	sr := &segRead{pend: [][]byte{stream}}
	sr.stitch()
	if &sr.buf[0] != &stream[0] {
		t.Fatal("a read was copied into the buffer")
	}
}

// With reads much smaller than the events and than the blocks, and a read
// always ahead of the events taken, every event comes once, in order,
// with its bytes and offset, also those that several reads make up; the
// bytes of an event returned earlier never change.
func TestReadAheadReadsEveryEventOnce(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "ra", 1)
	a := newAppender(t, d)
	seg := segName("ra", 0, 0)
	var want []string
	var offs []int64
	for b := range 40 {
		var evs []string
		for i := range 5 {
			n := (b*5 + i) * 37 % 300 // 0 to 299 bytes
			evs = append(evs, fmt.Sprintf("%d/%s", b*5+i, bytes.Repeat([]byte{byte('a' + i)}, n)))
		}
		off := a.add(seg, evs...)
		for _, e := range evs {
			offs = append(offs, off)
			off += protocol.EventHeaderSize + int64(len(e))
		}
		want = append(want, evs...)
	}
	c := newTestClient(t, d)
	for _, rb := range []int{1, 64, 1000} {
		t.Run(fmt.Sprintf("readBuffer=%d", rb), func(t *testing.T) {
			r := newTestReader(t, c, "ra", WithReadBuffer(rb))
			evs := readN(t, r, len(want))
			for i, e := range evs {
				if string(e.Data) != want[i] || e.Offset != offs[i] || e.Segment != seg {
					t.Fatalf("event %d: %.20q at %s@%d, want %.20q at %d", i, e.Data, e.Segment, e.Offset, want[i], offs[i])
				}
			}
			if p := r.Position()[seg]; p != offs[len(offs)-1]+protocol.EventHeaderSize+int64(len(want[len(want)-1])) {
				t.Fatalf("position %d after the last event", p)
			}
			expectNothing(t, r)
		})
	}
}
