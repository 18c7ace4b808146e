package protocol_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

func TestCheckBlock(t *testing.T) {
	two := protocol.AppendEvent(protocol.AppendEvent(nil, []byte("abc")), nil)
	claim := func(n uint32, body int) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), make([]byte, body)...)
	}
	tests := []struct {
		name   string
		in     []byte
		events int
		want   error
	}{
		{"empty", nil, 0, protocol.ErrInvalidArgument},
		{"one empty event", protocol.AppendEvent(nil, nil), 1, nil},
		{"exact", two, 2, nil},
		{"truncated header", two[:len(two)-2], 0, protocol.ErrInvalidArgument},
		{"truncated first header", two[:3], 0, protocol.ErrInvalidArgument},
		{"truncated body", two[:5], 0, protocol.ErrInvalidArgument},
		{"max size claimed, short body", claim(protocol.MaxEventSize, 10), 0, protocol.ErrInvalidArgument},
		{"max size + 1 claimed", claim(protocol.MaxEventSize+1, 10), 0, protocol.ErrEventTooLarge},
		{"max uint32 claimed", claim(0xffffffff, 0), 0, protocol.ErrEventTooLarge},
		{"max size event", claim(protocol.MaxEventSize, protocol.MaxEventSize), 1, nil},
		{"trailing garbage", append(two, 1), 0, protocol.ErrInvalidArgument},
	}
	for _, tt := range tests {
		n, err := protocol.CheckBlock(tt.in)
		if tt.want == nil {
			if err != nil || n != tt.events {
				t.Errorf("%s: (%d, %v), want %d events", tt.name, n, err, tt.events)
			}
		} else if !errors.Is(err, tt.want) || n != 0 {
			t.Errorf("%s: (%d, %v), want %v", tt.name, n, err, tt.want)
		}
	}
}

func TestCheckEvent(t *testing.T) {
	if err := protocol.CheckEvent(make([]byte, protocol.MaxEventSize)); err != nil {
		t.Errorf("max size: %v", err)
	}
	if err := protocol.CheckEvent(make([]byte, protocol.MaxEventSize+1)); !errors.Is(err, protocol.ErrEventTooLarge) {
		t.Errorf("max size + 1: %v", err)
	}
}

func TestNextEvent(t *testing.T) {
	events := [][]byte{[]byte("one"), {}, []byte("three"), bytes.Repeat([]byte{'x'}, 1000)}
	var block []byte
	for _, e := range events {
		block = protocol.AppendEvent(block, e)
	}
	if n, err := protocol.CheckBlock(block); err != nil || n != len(events) {
		t.Fatalf("CheckBlock: %d, %v", n, err)
	}
	rest := block
	for i, want := range events {
		var ev []byte
		var err error
		ev, rest, err = protocol.NextEvent(rest)
		if err != nil || !bytes.Equal(ev, want) {
			t.Fatalf("event %d: (%q, %v), want %q", i, ev, err, want)
		}
	}
	if _, _, err := protocol.NextEvent(rest); err != io.EOF {
		t.Fatalf("after last event: %v, want io.EOF", err)
	}

	// Every strict prefix ending inside an event asks for more bytes and
	// hands the partial event back untouched.
	for cut := 1; cut < 4+3; cut++ {
		ev, r, err := protocol.NextEvent(block[:cut])
		if !errors.Is(err, io.ErrUnexpectedEOF) || ev != nil || len(r) != cut {
			t.Errorf("prefix %d: (%q, %d bytes, %v)", cut, ev, len(r), err)
		}
	}
	bad := binary.BigEndian.AppendUint32(nil, protocol.MaxEventSize+1)
	if _, _, err := protocol.NextEvent(bad); !errors.Is(err, protocol.ErrEventTooLarge) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("oversized prefix: %v", err)
	}
}

func TestNextEventDoesNotGrowIntoRest(t *testing.T) {
	block := protocol.AppendEvent(protocol.AppendEvent(nil, []byte("ab")), []byte("cd"))
	ev, rest, _ := protocol.NextEvent(block)
	_ = append(ev, 'Z')
	if next, _, _ := protocol.NextEvent(rest); string(next) != "cd" {
		t.Fatalf("appending to an event overwrote the next one: %q", next)
	}
}

func FuzzCheckBlock(f *testing.F) {
	f.Add([]byte{})
	f.Add(protocol.AppendEvent(nil, []byte("x")))
	f.Add(protocol.AppendEvent(protocol.AppendEvent(nil, nil), []byte("hello")))
	f.Add([]byte{0, 0x80, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := protocol.CheckBlock(data)
		// CheckBlock and NextEvent must agree.
		count, rest := 0, data
		var nerr error
		for len(rest) > 0 && nerr == nil {
			_, rest, nerr = protocol.NextEvent(rest)
			if nerr == nil {
				count++
			}
		}
		if (err == nil) != (nerr == nil && len(data) > 0) {
			t.Fatalf("CheckBlock %v, NextEvent %v", err, nerr)
		}
		if err == nil && n != count {
			t.Fatalf("CheckBlock counts %d, NextEvent %d", n, count)
		}
		if err != nil && !errors.Is(err, protocol.ErrInvalidArgument) && !errors.Is(err, protocol.ErrEventTooLarge) {
			t.Fatalf("unclassified error %v", err)
		}
		if err == nil && n*protocol.EventHeaderSize > len(data) {
			t.Fatalf("%d events in %d bytes", n, len(data))
		}
	})
}
