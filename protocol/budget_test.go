package protocol_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/protocol"
)

// countingBudget is a Budget that grants everything and counts what is
// held; it fails the test on a release of more than is held.
type countingBudget struct {
	t        testing.TB
	held     int
	acquires []int
	refuse   error // Acquire returns it, if set
}

func (b *countingBudget) Acquire(n int) error {
	if n <= 0 || n > protocol.MaxFrameSize {
		b.t.Fatalf("Acquire(%d): want 1..%d", n, protocol.MaxFrameSize)
	}
	if b.refuse != nil {
		return b.refuse
	}
	b.acquires = append(b.acquires, n)
	b.held += n
	return nil
}

func (b *countingBudget) Release(n int) {
	if n <= 0 || n > b.held {
		b.t.Fatalf("Release(%d) with %d held", n, b.held)
	}
	b.held -= n
}

// checkBudget decodes in to its end with a countingBudget and checks,
// after every ReadMessage, that what is held is exactly the payloads of
// the messages returned so far; then releases them and checks that
// nothing is left.
func checkBudget(t testing.TB, in []byte) {
	b := &countingBudget{t: t}
	dec := protocol.NewDecoder(bytes.NewReader(in))
	dec.SetBudget(b)
	owed := 0
	for i := 0; ; i++ {
		if i > len(in)/protocol.FrameHeaderSize+1 {
			t.Fatalf("more messages than the input can hold")
		}
		m, err := dec.ReadMessage()
		if err == nil {
			owed += protocol.PayloadSize(m)
		}
		if b.held != owed {
			t.Fatalf("after message %d (%v, %v): %d bytes held, want the %d of the payloads returned", i, m, err, b.held, owed)
		}
		if err != nil && protocol.IsFatal(err) {
			break
		}
	}
	if owed > 0 {
		b.Release(owed)
	}
}

func TestBudgetHeldIsReturnedPayloads(t *testing.T) {
	big := strings.Repeat("k", 100<<10) // a header above the scratch buffer
	payload := bytes.Repeat([]byte{7}, 3<<20)
	bigHdr, err := msgpack.Marshal(map[string]any{"id": 9, "k": big})
	if err != nil {
		t.Fatal(err)
	}
	good := encode(t,
		&protocol.AppendBlock{RequestID: 1, WriterID: "w", LastEventNumber: 1, EventCount: 1, Data: payload, ExpectedOffset: -1},
		&protocol.GetAttributes{RequestID: 2, Segment: seg, Keys: []string{big}},
		&protocol.SegmentRead{RequestID: 3, Segment: seg, Data: [][]byte{payload[:10], payload[:20]}},
		&protocol.Hello{RequestID: 4, HighVersion: 1, LowVersion: 1},
	)
	cases := map[string][]byte{
		"good frames": good,
		// A frame whose header does not decode, after its payload was read.
		"bad header with payload": frame(uint16(protocol.TypeAppendBlock), 0, 4+1+5, 1, []byte{0xc1, 1, 2, 3, 4, 5}),
		// A big header of an unknown type: read (for its request id) and released.
		"unknown type, big header": frame(999, 0, uint32(4+len(bigHdr)), uint32(len(bigHdr)), bigHdr),
		// Payload on a message that has none: skipped, never allocated.
		"payload on Hello": frame(uint16(protocol.TypeHello), 0, 4+1+3, 1, []byte{0x80, 1, 2, 3}),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			checkBudget(t, in)
			// Every truncation of it, too: a frame cut anywhere holds nothing.
			for _, cut := range []int{len(in) - 1, len(in) / 2, 13, 12, 7} {
				if cut > 0 && cut < len(in) {
					checkBudget(t, in[:cut])
				}
			}
		})
	}
	b := &countingBudget{t: t}
	dec := protocol.NewDecoder(bytes.NewReader(good))
	dec.SetBudget(b)
	m, err := dec.ReadMessage()
	if err != nil || protocol.PayloadSize(m) != len(payload) {
		t.Fatalf("first message: %v, %v", m, err)
	}
	if len(b.acquires) != 1 || b.acquires[0] != len(payload) {
		t.Fatalf("acquired %v, want the whole payload (%d) at once", b.acquires, len(payload))
	}
	if d := m.(*protocol.AppendBlock).Data; cap(d) != len(d) {
		t.Fatalf("payload cap %d, len %d: the budget counts len, the memory is cap", cap(d), len(d))
	}
}

// A Budget that refuses ends the stream with its error, holding nothing
// and reading no further.
func TestBudgetRefusalIsFatal(t *testing.T) {
	stop := errors.New("connection closing")
	b := &countingBudget{t: t, refuse: stop}
	in := encode(t, &protocol.AppendBlock{RequestID: 1, WriterID: "w", LastEventNumber: 1, EventCount: 1, Data: []byte("x"), ExpectedOffset: -1})
	dec := protocol.NewDecoder(bytes.NewReader(in))
	dec.SetBudget(b)
	_, err := dec.ReadMessage()
	if !errors.Is(err, stop) || !protocol.IsFatal(err) || b.held != 0 {
		t.Fatalf("got %v (fatal %v), %d held; want fatal %v, nothing held", err, protocol.IsFatal(err), b.held, stop)
	}
	if _, err2 := dec.ReadMessage(); err2 != err {
		t.Fatalf("after the refusal: %v, want the same error", err2)
	}
}
