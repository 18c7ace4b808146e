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
	if hdr.KeyClass != LongWritable || hdr.ValueClass != BytesWritable {
		return nil, false, fmt.Errorf("%w: key %s, value %s", ErrClassMismatch, hdr.KeyClass, hdr.ValueClass)
	}
	if hdr.Compression != None {
		return nil, false, nil
	}
	corrupt := func(at int, format string, args ...any) error {
		return fmt.Errorf("%w at byte %d: %s", ErrCorrupt, at, fmt.Sprintf(format, args...))
	}
	w, pos, want := 0, int(hdr.Size), first
	for pos < len(file) {
		if len(file)-pos < 4 {
			return nil, false, corrupt(pos, "file ends inside a record length")
		}
		recLen := int32(binary.BigEndian.Uint32(file[pos:]))
		if recLen == syncEscape {
			if len(file)-pos < 4+16 || !bytes.Equal(file[pos+4:pos+20], hdr.Sync[:]) {
				return nil, false, corrupt(pos, "bad sync escape")
			}
			pos += 20
			continue
		}
		// record length, key length, key (8), value (4 + n).
		if recLen < 8+4 || len(file)-pos-8 < int(recLen) {
			return nil, false, corrupt(pos, "record length %d", recLen)
		}
		if kl := binary.BigEndian.Uint32(file[pos+4:]); kl != 8 {
			return nil, false, corrupt(pos+4, "key length %d, a LongWritable has 8", kl)
		}
		if key := int64(binary.BigEndian.Uint64(file[pos+8:])); key != want {
			return nil, false, corrupt(pos+8, "key %d, want the next event's offset %d", key, want)
		}
		value := file[pos+16 : pos+8+int(recLen)]
		if n := binary.BigEndian.Uint32(value); int(n) != len(value)-4 {
			return nil, false, corrupt(pos+16, "BytesWritable length %d in a value of %d bytes", n, len(value))
		}
		w += copy(file[w:], value)
		want += int64(len(value))
		pos += 8 + int(recLen)
	}
	return file[:w], true, nil
}
