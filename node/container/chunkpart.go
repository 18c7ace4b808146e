package container

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// ChunkMark is a place where a tier-2 chunk's file can be read from: the
// record of the event at Offset (or a sync escape before it) starts at
// byte Pos of the file. A storage writer records marks with a chunk so
// that a reader loads the part of the file it needs, not the whole file.
// A chunk's marks begin with its first event (Pos: the header's end) and
// end with its end (Pos: the file's size).
type ChunkMark struct {
	Offset int64
	Pos    int64
}

// ChunkPart is a piece of a tier-2 chunk that can be read alone: the
// segment's bytes [Offset, Offset+Length), whose records are at bytes
// [Pos, End) of the chunk's file. Pos and End are 0 for a chunk recorded
// without marks: it is read whole.
type ChunkPart struct {
	Offset, Length int64
	Pos, End       int64
}

// Whole reports whether the part is a whole chunk read from its file's
// start.
func (p ChunkPart) Whole() bool { return p.End == 0 }

// numParts is how many parts the chunk is read in.
func (c chunk) numParts() int {
	if len(c.marks) < 2 {
		return 1
	}
	return len(c.marks) - 1
}

// part returns the chunk's i-th part.
func (c chunk) part(i int) ChunkPart {
	if len(c.marks) < 2 {
		return ChunkPart{Offset: c.offset, Length: c.length}
	}
	m, next := c.marks[i], c.marks[i+1]
	return ChunkPart{Offset: m.Offset, Length: next.Offset - m.Offset, Pos: m.Pos, End: next.Pos}
}

// findPart returns the index of the part holding offset.
func (c chunk) findPart(offset int64) int {
	if len(c.marks) < 2 {
		return 0
	}
	return sort.Search(len(c.marks)-2, func(i int) bool { return c.marks[i+1].Offset > offset })
}

// checkMarks checks that marks describe a chunk of the segment's bytes
// [offset, offset+length): none at all, or at least two, from offset to
// its end, both offsets and positions rising.
func checkMarks(marks []ChunkMark, offset, length int64) error {
	if len(marks) == 0 {
		return nil
	}
	if len(marks) < 2 || marks[0].Offset != offset || marks[len(marks)-1].Offset != offset+length {
		return fmt.Errorf("chunk marks must run from %d to %d", offset, offset+length)
	}
	if marks[0].Pos <= 0 {
		return errors.New("the first chunk mark must follow the file's header")
	}
	for i := 1; i < len(marks); i++ {
		if marks[i].Offset <= marks[i-1].Offset || marks[i].Pos <= marks[i-1].Pos {
			return fmt.Errorf("chunk marks %d and %d do not rise: %+v, %+v", i-1, i, marks[i-1], marks[i])
		}
		// A part is loaded into a buffer of its file bytes: they cannot
		// exceed what its events take as records, so damaged marks never
		// ask for more memory than the part needs.
		if events, file := marks[i].Offset-marks[i-1].Offset, marks[i].Pos-marks[i-1].Pos; file > maxPartFileBytes(events) {
			return fmt.Errorf("chunk marks %d and %d: %d file bytes for %d bytes of events", i-1, i, file, events)
		}
	}
	return nil
}

// maxPartFileBytes bounds the file bytes of a part holding events bytes of
// framed events: each event of a 4-byte frame and n bytes is a record of
// 16 more bytes (record and key lengths, the key), at most 5 times its
// frame for an empty event, plus a 20-byte sync escape at most every 2000
// bytes and one before the first record.
func maxPartFileBytes(events int64) int64 { return 6*events + 64 }

// encodeMarks packs marks as uvarint deltas from (offset, 0).
func encodeMarks(marks []ChunkMark, offset int64) []byte {
	if len(marks) == 0 {
		return nil
	}
	b := make([]byte, 0, 6*len(marks))
	prev := ChunkMark{Offset: offset}
	for _, m := range marks {
		b = binary.AppendUvarint(b, uint64(m.Offset-prev.Offset))
		b = binary.AppendUvarint(b, uint64(m.Pos-prev.Pos))
		prev = m
	}
	return b
}

// decodeMarks unpacks encodeMarks' output and checks the marks.
func decodeMarks(b []byte, offset, length int64) ([]ChunkMark, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var marks []ChunkMark
	prev := ChunkMark{Offset: offset}
	for len(b) > 0 {
		do, n := binary.Uvarint(b)
		if n <= 0 || do > uint64(length) {
			return nil, errors.New("chunk marks are damaged")
		}
		b = b[n:]
		dp, n := binary.Uvarint(b)
		if n <= 0 || dp > 1<<62 {
			return nil, errors.New("chunk marks are damaged")
		}
		b = b[n:]
		prev = ChunkMark{Offset: prev.Offset + int64(do), Pos: prev.Pos + int64(dp)}
		marks = append(marks, prev)
	}
	if err := checkMarks(marks, offset, length); err != nil {
		return nil, err
	}
	return marks, nil
}
