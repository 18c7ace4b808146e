package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The byte format; see doc.go for the diagram.
const (
	fileMagic   = "SLUICEWL"
	fileVersion = 1
	fileSuffix  = ".wal"

	// FileHeaderSize is the size of the header at the start of every file.
	FileHeaderSize = 36
	// RecordHeaderSize is the size of the header before every payload.
	RecordHeaderSize = 25
	// MaxPayloadSize bounds one record's payload. A length field above it
	// is damage, not a record.
	MaxPayloadSize = 32 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// RecordType tells the log's user what a payload holds. Zero is never
// written, so a zeroed region never decodes as a record.
type RecordType uint8

type fileHeader struct {
	seq      uint64 // the file's sequence number, also in its name
	firstLSN uint64 // LSN of the file's first record (or of the next record if empty)
}

func (h fileHeader) encode() []byte {
	b := make([]byte, FileHeaderSize)
	copy(b[0:8], fileMagic)
	binary.LittleEndian.PutUint32(b[8:12], fileVersion)
	// b[12:16] reserved, zero.
	binary.LittleEndian.PutUint64(b[16:24], h.seq)
	binary.LittleEndian.PutUint64(b[24:32], h.firstLSN)
	binary.LittleEndian.PutUint32(b[32:36], crc32.Checksum(b[0:32], crcTable))
	return b
}

var (
	errShortHeader = errors.New("file header is shorter than 36 bytes")
	errBadMagic    = errors.New("file header has a wrong magic number")
	errBadVersion  = errors.New("file header has an unsupported version")
	errHeaderCRC   = errors.New("file header checksum mismatch")
)

func decodeFileHeader(b []byte) (fileHeader, error) {
	if len(b) < FileHeaderSize {
		return fileHeader{}, errShortHeader
	}
	if string(b[0:8]) != fileMagic {
		return fileHeader{}, errBadMagic
	}
	if crc32.Checksum(b[0:32], crcTable) != binary.LittleEndian.Uint32(b[32:36]) {
		return fileHeader{}, errHeaderCRC
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != fileVersion {
		return fileHeader{}, fmt.Errorf("%w %d", errBadVersion, v)
	}
	return fileHeader{
		seq:      binary.LittleEndian.Uint64(b[16:24]),
		firstLSN: binary.LittleEndian.Uint64(b[24:32]),
	}, nil
}

// recordHeader returns the header of a record whose payload is the
// concatenation of parts, checksum included. synced is the highest LSN
// known to be durable before the record's batch is written.
func recordHeader(typ RecordType, lsn, synced uint64, parts ...[]byte) [RecordHeaderSize]byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var hdr [RecordHeaderSize]byte
	binary.LittleEndian.PutUint32(hdr[4:8], uint32(n))
	hdr[8] = byte(typ)
	binary.LittleEndian.PutUint64(hdr[9:17], lsn)
	binary.LittleEndian.PutUint64(hdr[17:25], synced)
	crc := crc32.Update(0, crcTable, hdr[4:])
	for _, p := range parts {
		crc = crc32.Update(crc, crcTable, p)
	}
	binary.LittleEndian.PutUint32(hdr[0:4], crc)
	return hdr
}

// appendRecord appends one framed record to dst; the payload is the
// concatenation of parts.
func appendRecord(dst []byte, typ RecordType, lsn, synced uint64, parts ...[]byte) []byte {
	hdr := recordHeader(typ, lsn, synced, parts...)
	dst = append(dst, hdr[:]...)
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}

var (
	errShortRecord = errors.New("record is cut short")
	errBadLength   = errors.New("record length is out of range")
	errBadType     = errors.New("record type is zero")
	errRecordCRC   = errors.New("record checksum mismatch")
	errBadLSN      = errors.New("record has an unexpected sequence number")
)

// decodeRecord parses the record at the start of b. A valid record must
// carry the LSN want. The returned payload aliases b.
func decodeRecord(b []byte, want uint64) (typ RecordType, payload []byte, n int, err error) {
	typ, lsn, _, payload, n, err := decodeAnyRecord(b)
	if err != nil {
		return 0, nil, 0, err
	}
	if lsn != want {
		return 0, nil, 0, fmt.Errorf("%w: %d, expected %d", errBadLSN, lsn, want)
	}
	return typ, payload, n, nil
}

// decodeAnyRecord parses the record at the start of b, whatever its LSN.
func decodeAnyRecord(b []byte) (typ RecordType, lsn, synced uint64, payload []byte, n int, err error) {
	if len(b) < RecordHeaderSize {
		return 0, 0, 0, nil, 0, errShortRecord
	}
	length := binary.LittleEndian.Uint32(b[4:8])
	if length > MaxPayloadSize {
		return 0, 0, 0, nil, 0, errBadLength
	}
	n = RecordHeaderSize + int(length)
	if len(b) < n {
		return 0, 0, 0, nil, 0, errShortRecord
	}
	if crc32.Checksum(b[4:n], crcTable) != binary.LittleEndian.Uint32(b[0:4]) {
		return 0, 0, 0, nil, 0, errRecordCRC
	}
	typ = RecordType(b[8])
	if typ == 0 {
		return 0, 0, 0, nil, 0, errBadType
	}
	return typ, binary.LittleEndian.Uint64(b[9:17]), binary.LittleEndian.Uint64(b[17:25]), b[RecordHeaderSize:n], n, nil
}

// lastNonZero returns the index of the last non-zero byte of b, or -1:
// what follows it is the unwritten rest of a preallocated file.
func lastNonZero(b []byte) int {
	i := len(b)
	for i >= 8 && binary.LittleEndian.Uint64(b[i-8:i]) == 0 {
		i -= 8
	}
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return i - 1
}

// describeDamage says what is at off, where the record with LSN want was
// expected, for an operator reading a refusal or a repair.
func describeDamage(b []byte, off int, want uint64) string {
	rest := b[off:]
	span := fmt.Sprintf("the file's last non-zero byte is at offset %d of %d", lastNonZero(b), len(b))
	show := rest[:min(len(rest), 32)]
	if len(rest) < RecordHeaderSize {
		return fmt.Sprintf("%d bytes, too few for a record header (%x); %s", len(rest), show, span)
	}
	_, _, _, _, _, err := decodeAnyRecord(rest)
	if err == nil {
		err = fmt.Errorf("%w: %d, expected %d", errBadLSN, binary.LittleEndian.Uint64(rest[9:17]), want)
	}
	return fmt.Sprintf("%v: a header of length %d, type %d, LSN %d (expected %d), synced %d; first bytes %x; %s",
		err, binary.LittleEndian.Uint32(rest[4:8]), rest[8], binary.LittleEndian.Uint64(rest[9:17]), want,
		binary.LittleEndian.Uint64(rest[17:25]), show, span)
}

// provenDurable looks past damage at offset from, where the record with
// LSN want was expected, for a valid record that proves want had been made
// durable before it was written: one whose synced field is >= want. It
// returns that record's offset, or -1.
//
// Such a record means the damage hit acknowledged data: corruption. Without
// one, every valid record after the damage belongs to the batches that
// were being written or synced when the process or machine stopped (their
// pages may reach the disk in any order), none of them acknowledged: a
// torn tail.
//
// The LSN window is checked before the checksum so that scanning garbage
// stays linear.
func provenDurable(b []byte, from int, want uint64) int {
	limit := want + uint64(len(b)/RecordHeaderSize)
	for p := from + 1; p+RecordHeaderSize <= len(b); p++ {
		lsn := binary.LittleEndian.Uint64(b[p+9 : p+17])
		if lsn <= want || lsn > limit || b[p+8] == 0 || binary.LittleEndian.Uint64(b[p+17:p+25]) < want {
			continue
		}
		if _, _, _, _, _, err := decodeAnyRecord(b[p:]); err == nil {
			return p
		}
	}
	return -1
}

func fileName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, fileSuffix) }

func parseFileName(name string) (uint64, bool) {
	if len(name) != 16+len(fileSuffix) || name[16:] != fileSuffix {
		return 0, false
	}
	var seq uint64
	for _, c := range name[:16] {
		switch {
		case c >= '0' && c <= '9':
			seq = seq<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			seq = seq<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return seq, seq != 0
}
