package protocol

import (
	"encoding/binary"
	"fmt"
	"io"
)

const (
	// EventHeaderSize is the size of an event's length prefix.
	EventHeaderSize = 4
	// MaxEventSize is the largest event, in bytes, without its header.
	MaxEventSize = 8 << 20
)

// AppendEvent appends event, framed as | length u32 BE | bytes |, to dst
// and returns the extended slice. The caller checks len(event) <=
// MaxEventSize beforehand (CheckEvent); AppendEvent does not.
func AppendEvent(dst, event []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(event)))
	return append(dst, event...)
}

// CheckEvent returns an error wrapping ErrEventTooLarge if event is larger
// than MaxEventSize.
func CheckEvent(event []byte) error {
	if len(event) > MaxEventSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrEventTooLarge, len(event), MaxEventSize)
	}
	return nil
}

// CheckBlock verifies that data is a non-empty whole number of framed
// events, each at most MaxEventSize, and returns how many there are.
// Events of zero bytes are allowed. The error wraps ErrEventTooLarge for an
// oversized event and ErrInvalidArgument for an empty or truncated block.
func CheckBlock(data []byte) (events int, err error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("%w: empty event block", ErrInvalidArgument)
	}
	off := 0
	for off < len(data) {
		if len(data)-off < EventHeaderSize {
			return 0, fmt.Errorf("%w: event block truncated in the header of event %d at offset %d", ErrInvalidArgument, events, off)
		}
		n := binary.BigEndian.Uint32(data[off:])
		if n > MaxEventSize {
			return 0, fmt.Errorf("%w: event %d at offset %d claims %d bytes, limit %d", ErrEventTooLarge, events, off, n, MaxEventSize)
		}
		off += EventHeaderSize
		if uint64(len(data)-off) < uint64(n) {
			return 0, fmt.Errorf("%w: event block truncated in the body of event %d (%d of %d bytes)", ErrInvalidArgument, events, len(data)-off, n)
		}
		off += int(n)
		events++
	}
	return events, nil
}

// NextEvent splits the first framed event off data. event aliases data.
// It returns io.EOF when data is empty, an error wrapping
// io.ErrUnexpectedEOF when data holds only part of an event (the reader
// fetches more bytes and calls again with the part prepended), and an
// error wrapping ErrEventTooLarge when the length prefix exceeds
// MaxEventSize (corrupt data: fetching more will not help).
func NextEvent(data []byte) (event, rest []byte, err error) {
	if len(data) == 0 {
		return nil, nil, io.EOF
	}
	if len(data) < EventHeaderSize {
		return nil, data, fmt.Errorf("sluice: partial event header (%d bytes): %w", len(data), io.ErrUnexpectedEOF)
	}
	n := binary.BigEndian.Uint32(data)
	if n > MaxEventSize {
		return nil, data, fmt.Errorf("%w: length prefix %d, limit %d", ErrEventTooLarge, n, MaxEventSize)
	}
	if uint64(len(data)-EventHeaderSize) < uint64(n) {
		return nil, data, fmt.Errorf("sluice: partial event (%d of %d bytes): %w", len(data)-EventHeaderSize, n, io.ErrUnexpectedEOF)
	}
	end := EventHeaderSize + int(n)
	return data[EventHeaderSize:end:end], data[end:], nil
}
