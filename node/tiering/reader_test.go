package tiering

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// TestReaderLoadsParts writes a chunk with marks every ~700 bytes of
// events, then loads each part alone, the whole chunk, and parts whose
// recorded positions do not match the file (ErrBadChunk, never other
// bytes).
func TestReaderLoadsParts(t *testing.T) {
	store := tier2test.NewMem()
	seg := protocol.SegmentName("sc", "st", 3, 0)
	const first = 5000
	var data []byte
	var blocks [][]byte // of 20 events each
	for i := range 200 {
		if i%20 == 0 {
			blocks = append(blocks, nil)
		}
		ev := bytes.Repeat([]byte{byte(i)}, i%90)
		data = protocol.AppendEvent(data, ev)
		blocks[len(blocks)-1] = protocol.AppendEvent(blocks[len(blocks)-1], ev)
	}
	p := tier2.ChunkPath("sc", "st", 3, first)
	f, err := store.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	length, marks, err := writeEvents(f, first, each(blocks), 0, seqfile.None, 700)
	if err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	if length != int64(len(data)) || len(marks) < 4 || marks[0].Offset != first || marks[len(marks)-1].Offset != first+length {
		t.Fatalf("wrote %d bytes with marks %+v", length, marks)
	}
	size, err := store.Stat(p)
	if err != nil || marks[len(marks)-1].Pos != size.Size {
		t.Fatalf("last mark %+v, file %+v, %v", marks[len(marks)-1], size, err)
	}
	r := Reader{Store: store}
	for i := 0; i+1 < len(marks); i++ {
		m, next := marks[i], marks[i+1]
		if next.Offset-m.Offset < 700 && i+2 < len(marks) {
			t.Fatalf("part %d holds %d bytes, want at least 700", i, next.Offset-m.Offset)
		}
		part := container.ChunkPart{Offset: m.Offset, Length: next.Offset - m.Offset, Pos: m.Pos, End: next.Pos}
		got, err := r.LoadChunk(seg, first, part, nil)
		if err != nil || !bytes.Equal(got, data[m.Offset-first:next.Offset-first]) {
			t.Fatalf("part %d (%+v): %d bytes, %v", i, part, len(got), err)
		}
	}
	if got, err := r.LoadChunk(seg, first, container.ChunkPart{Offset: first, Length: length}, nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("whole chunk: %d bytes, %v", len(got), err)
	}
	m, next := marks[1], marks[2]
	good := container.ChunkPart{Offset: m.Offset, Length: next.Offset - m.Offset, Pos: m.Pos, End: next.Pos}
	for _, bad := range []struct {
		what string
		part container.ChunkPart
	}{
		{"a position off by one", container.ChunkPart{Offset: good.Offset, Length: good.Length, Pos: good.Pos + 1, End: good.End}},
		{"an end short of the next record", container.ChunkPart{Offset: good.Offset, Length: good.Length, Pos: good.Pos, End: good.End - 3}},
		{"the wrong first offset", container.ChunkPart{Offset: good.Offset + 4, Length: good.Length, Pos: good.Pos, End: good.End}},
		{"a longer length", container.ChunkPart{Offset: good.Offset, Length: good.Length + 1, Pos: good.Pos, End: good.End}},
		{"an end beyond the file", container.ChunkPart{Offset: good.Offset, Length: good.Length, Pos: good.Pos, End: size.Size + 10}},
		{"a position inside the header", container.ChunkPart{Offset: first, Length: marks[1].Offset - first, Pos: 10, End: marks[1].Pos}},
	} {
		if got, err := r.LoadChunk(seg, first, bad.part, nil); !errors.Is(err, ErrBadChunk) {
			t.Errorf("%s: %d bytes, %v; want ErrBadChunk", bad.what, len(got), err)
		}
	}
	// Compressed chunks have no marks: they are read whole.
	zp := tier2.ChunkPath("sc", "st", 4, 0)
	zf, _ := store.Create(zp)
	if _, zmarks, err := writeEvents(zf, 0, each([][]byte{data}), 0, seqfile.Block, 700); err != nil || zmarks != nil {
		t.Fatalf("block-compressed: marks %v, %v", zmarks, err)
	}
}

// each yields blocks one at a time, as writeEvents takes them.
func each(blocks [][]byte) func() ([]byte, error) {
	return func() ([]byte, error) {
		if len(blocks) == 0 {
			return nil, nil
		}
		b := blocks[0]
		blocks = blocks[1:]
		return b, nil
	}
}
