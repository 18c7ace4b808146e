package cluster

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The record envelope: how both backends store a value (the format is
// drawn in doc.go).
const (
	// RecordMagic is a record's first byte. 0xC1 never begins valid UTF-8
	// or a MessagePack value, so no value stored before records had an
	// envelope (JSON, text, or empty) begins with it.
	RecordMagic byte = 0xC1
	// RecordVersion is the envelope's format version, its second byte.
	RecordVersion byte = 1
	// RecordHeaderLen is the envelope's size: magic, version, CRC-32C.
	RecordHeaderLen = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the CRC-32C of key, a zero byte (a key holds none), the
// version byte and payload: a record read under another key than it was
// written for fails its check like a flipped byte does.
func recordCRC(key string, version byte, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, []byte(key))
	c = crc32.Update(c, castagnoli, []byte{0, version})
	return crc32.Update(c, castagnoli, payload)
}

// EncodeRecord returns payload in a record envelope for key: a new slice
// of RecordHeaderLen+len(payload) bytes. Backends store what it returns
// and read it back with DecodeRecord under the same key.
func EncodeRecord(key string, payload []byte) []byte {
	buf := make([]byte, RecordHeaderLen+len(payload))
	buf[0], buf[1] = RecordMagic, RecordVersion
	binary.BigEndian.PutUint32(buf[2:], recordCRC(key, RecordVersion, payload))
	copy(buf[RecordHeaderLen:], payload)
	return buf
}

// DecodeRecord returns the payload of raw, a record stored under key: a
// sub-slice of raw (copy it if raw is not yours to keep).
//
// A raw value that does not begin with RecordMagic is a legacy record,
// written before records had an envelope, and is returned whole with
// legacy true: it has no checksum, so damage to it cannot be detected.
// The one exception is a record whose magic byte alone was damaged: if
// the rest still holds RecordVersion and a matching checksum, it is
// refused as corrupt rather than read as a legacy value.
//
// Every other mismatch (an unknown version, a record shorter than its
// header, a checksum that does not match) is an error that wraps
// ErrCorrupt and names the key.
func DecodeRecord(key string, raw []byte) (payload []byte, legacy bool, err error) {
	if len(raw) == 0 || raw[0] != RecordMagic {
		if len(raw) >= RecordHeaderLen && raw[1] == RecordVersion &&
			binary.BigEndian.Uint32(raw[2:]) == recordCRC(key, RecordVersion, raw[RecordHeaderLen:]) {
			return nil, false, fmt.Errorf("%w: key %q: record's first byte is 0x%02x, not the magic 0x%02x (its checksum matches)",
				ErrCorrupt, key, raw[0], RecordMagic)
		}
		return raw, true, nil
	}
	if len(raw) < RecordHeaderLen {
		return nil, false, fmt.Errorf("%w: key %q: record of %d bytes is shorter than its %d-byte header",
			ErrCorrupt, key, len(raw), RecordHeaderLen)
	}
	if raw[1] != RecordVersion {
		return nil, false, fmt.Errorf("%w: key %q: record version %d is not the one known version, %d",
			ErrCorrupt, key, raw[1], RecordVersion)
	}
	payload = raw[RecordHeaderLen:]
	stored := binary.BigEndian.Uint32(raw[2:])
	if got := recordCRC(key, RecordVersion, payload); got != stored {
		return nil, false, fmt.Errorf("%w: key %q: record checksum mismatch (stored CRC-32C 0x%08x, computed 0x%08x over %d payload bytes)",
			ErrCorrupt, key, stored, got, len(payload))
	}
	return payload, false, nil
}
