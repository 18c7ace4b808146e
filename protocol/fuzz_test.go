package protocol_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func FuzzDecoder(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(encode(f, m))
	}
	f.Add(encode(f, sampleMessages()...))
	f.Add(frame(999, 0, 4+5, 5, []byte{0x81, 0xa2, 'i', 'd', 0x2a}))
	f.Add(frame(uint16(protocol.TypeAppendBlock), 0, protocol.MaxFrameSize+1, 0, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		// With a Budget, what is held is exactly the payloads returned.
		checkBudget(t, in)
		dec := protocol.NewDecoder(bytes.NewReader(in))
		for i := 0; ; i++ {
			if i > len(in)/protocol.FrameHeaderSize+1 {
				t.Fatalf("more messages than the input can hold")
			}
			m, err := dec.ReadMessage()
			if err != nil {
				if m != nil {
					t.Fatalf("message %v with error %v", m, err)
				}
				if !protocol.IsFatal(err) {
					var de *protocol.DecodeError
					if !errors.As(err, &de) || !(errors.Is(err, protocol.ErrUnknownType) || errors.Is(err, protocol.ErrMalformedMessage)) {
						t.Fatalf("unexpected non-fatal error %v", err)
					}
					continue
				}
				if err != io.EOF && !errors.Is(err, protocol.ErrMalformedFrame) && !errors.Is(err, protocol.ErrFrameTooLarge) {
					t.Fatalf("unexpected fatal error %v", err)
				}
				// Fatal errors stop the decoder.
				if m2, err2 := dec.ReadMessage(); m2 != nil || err2 != err {
					t.Fatalf("after fatal %v: (%v, %v)", err, m2, err2)
				}
				return
			}
			var payload int
			switch p := m.(type) {
			case *protocol.AppendBlock:
				payload = len(p.Data)
			case *protocol.SegmentRead:
				for _, d := range p.Data {
					payload += len(d)
				}
			}
			if payload > len(in) {
				t.Fatalf("payload of %d bytes from %d bytes of input", payload, len(in))
			}
			// What decodes re-encodes and decodes to the same message.
			again, err := protocol.NewDecoder(bytes.NewReader(encode(t, m))).ReadMessage()
			if err != nil {
				t.Fatalf("re-decode %T: %v", m, err)
			}
			if !equalMessages(again, m) {
				t.Fatalf("re-decode:\n got %#v\nwant %#v", again, m)
			}
		}
	})
}

func equalMessages(a, b protocol.Message) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}
