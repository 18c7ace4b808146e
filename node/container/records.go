package container

import (
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/node/wal"
)

// Record types in the container's log. The numbers are part of the on-disk
// format.
const (
	recCreate     wal.RecordType = 1
	recAppend     wal.RecordType = 2
	recSeal       wal.RecordType = 3
	recTruncate   wal.RecordType = 4
	recDelete     wal.RecordType = 5
	recMerge      wal.RecordType = 6
	recAttributes wal.RecordType = 7
	recTiered     wal.RecordType = 8
	recForget     wal.RecordType = 9
)

// appendHeaderFixed is the fixed part of an append record's header:
// segment id, offset, event number, writer id length.
const appendHeaderFixed = 8 + 8 + 8 + 2

// appendHeader encodes the header that precedes an append record's data.
func appendHeader(segID uint64, offset, eventNumber int64, writer string) []byte {
	b := make([]byte, appendHeaderFixed+len(writer))
	binary.LittleEndian.PutUint64(b[0:8], segID)
	binary.LittleEndian.PutUint64(b[8:16], uint64(offset))
	binary.LittleEndian.PutUint64(b[16:24], uint64(eventNumber))
	binary.LittleEndian.PutUint16(b[24:26], uint16(len(writer)))
	copy(b[26:], writer)
	return b
}

type appendRecord struct {
	segID       uint64
	offset      int64
	eventNumber int64
	writer      string
	dataOff     int // where the data starts in the payload
	data        []byte
}

func decodeAppend(p []byte) (appendRecord, error) {
	if len(p) < appendHeaderFixed {
		return appendRecord{}, fmt.Errorf("append record of %d bytes is shorter than its header", len(p))
	}
	wl := int(binary.LittleEndian.Uint16(p[24:26]))
	if len(p) < appendHeaderFixed+wl {
		return appendRecord{}, fmt.Errorf("append record of %d bytes is shorter than its writer id", len(p))
	}
	off := appendHeaderFixed + wl
	return appendRecord{
		segID:       binary.LittleEndian.Uint64(p[0:8]),
		offset:      int64(binary.LittleEndian.Uint64(p[8:16])),
		eventNumber: int64(binary.LittleEndian.Uint64(p[16:24])),
		writer:      string(p[26:off]),
		dataOff:     off,
		data:        p[off:],
	}, nil
}

type createRecord struct {
	ID    uint64           `msgpack:"id"`
	Name  string           `msgpack:"n"`
	Attrs map[string]int64 `msgpack:"a,omitempty"`
}

type sealRecord struct {
	ID     uint64 `msgpack:"id"`
	Length int64  `msgpack:"l"`
}

type truncateRecord struct {
	ID     uint64 `msgpack:"id"`
	Offset int64  `msgpack:"o"`
}

type deleteRecord struct {
	ID uint64 `msgpack:"id"`
}

type mergeRecord struct {
	Target uint64 `msgpack:"t"`
	Source uint64 `msgpack:"s"`
	Offset int64  `msgpack:"o"` // the target's length before the merge
}

// attributesRecord holds the outcome of an attribute update, not the
// conditions, so replay needs no decisions.
type attributesRecord struct {
	ID     uint64           `msgpack:"id"`
	Set    map[string]int64 `msgpack:"s,omitempty"`
	Remove []string         `msgpack:"r,omitempty"`
}

// tieredRecord says a segment's bytes [Offset, Offset+Length) are in a
// tier-2 chunk and no longer need the log.
type tieredRecord struct {
	ID     uint64 `msgpack:"id"`
	Offset int64  `msgpack:"o"`
	Length int64  `msgpack:"l"`
	// Marks are the chunk's ChunkMarks (encodeMarks); absent in records
	// written before chunks had them, whose chunks are read whole.
	Marks []byte `msgpack:"m,omitempty"`
}

// forgetRecord says a deleted segment's tier-2 chunks are removed.
type forgetRecord struct {
	Name string `msgpack:"n"`
}

func encode(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		// Only plain structs of ints, strings and maps are encoded here.
		panic(fmt.Sprintf("container: encode %T: %v", v, err))
	}
	return b
}
