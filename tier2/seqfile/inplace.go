package seqfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// EventsInPlace turns the bytes of a whole uncompressed LongWritable /
// BytesWritable file into its events framed as a segment holds them (each
// a 4-byte big-endian length and the bytes: exactly a BytesWritable's
// serialization), compacting them to the front of file, and returns that
// prefix. It checks that the keys are consecutive event offsets starting
// at first. It reads in place, without copying a record: the catch-up
// read path of tier 2.
//
// A compressed file gives ok false and changes nothing (read it with a
// Reader instead); damage gives an error wrapping ErrCorrupt, and file is
// then garbage.
func EventsInPlace(file []byte, first int64) (events []byte, ok bool, err error) {
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, false, err
	}
	hdr := r.Header()
	if hdr.Compression != None {
		if err := checkEventClasses(hdr); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	events, err = EventsInPlaceAt(hdr, file[hdr.Size:], hdr.Size, first)
	return events, err == nil, err
}

// EventsInPlaceAt is EventsInPlace for part of a file: records holds
// whole records (sync escapes allowed) starting at byte at of a file whose
// header is hdr, the first of them the event at offset first. A writer
// learns where such parts may start from Writer.Boundary. The events are
// compacted to the front of records; errors name positions in the file.
func EventsInPlaceAt(hdr Header, records []byte, at, first int64) ([]byte, error) {
	if err := checkEventClasses(hdr); err != nil {
		return nil, err
	}
	if hdr.Compression != None {
		return nil, fmt.Errorf("%w: in-place reading of %s-compressed records", ErrUnsupported, hdr.Compression)
	}
	corrupt := func(pos int, format string, args ...any) error {
		return fmt.Errorf("%w at byte %d: %s", ErrCorrupt, at+int64(pos), fmt.Sprintf(format, args...))
	}
	w, pos, want := 0, 0, first
	for pos < len(records) {
		if len(records)-pos < 4 {
			return nil, corrupt(pos, "records end inside a record length")
		}
		recLen := int32(binary.BigEndian.Uint32(records[pos:]))
		if recLen == syncEscape {
			if len(records)-pos < 4+16 || !bytes.Equal(records[pos+4:pos+20], hdr.Sync[:]) {
				return nil, corrupt(pos, "bad sync escape")
			}
			pos += 20
			continue
		}
		// record length, key length, key (8), value (4 + n).
		if recLen < 8+4 || len(records)-pos-8 < int(recLen) {
			return nil, corrupt(pos, "record length %d", recLen)
		}
		if kl := binary.BigEndian.Uint32(records[pos+4:]); kl != 8 {
			return nil, corrupt(pos+4, "key length %d, a LongWritable has 8", kl)
		}
		if key := int64(binary.BigEndian.Uint64(records[pos+8:])); key != want {
			return nil, corrupt(pos+8, "key %d, want the next event's offset %d", key, want)
		}
		value := records[pos+16 : pos+8+int(recLen)]
		if n := binary.BigEndian.Uint32(value); int(n) != len(value)-4 {
			return nil, corrupt(pos+16, "BytesWritable length %d in a value of %d bytes", n, len(value))
		}
		w += copy(records[w:], value)
		want += int64(len(value))
		pos += 8 + int(recLen)
	}
	return records[:w], nil
}

func checkEventClasses(hdr Header) error {
	if hdr.KeyClass != LongWritable || hdr.ValueClass != BytesWritable {
		return fmt.Errorf("%w: key %s, value %s", ErrClassMismatch, hdr.KeyClass, hdr.ValueClass)
	}
	return nil
}
