package tier2test

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// Chunk is one chunk for WriteChunks: the segment it belongs to, its
// compression and its events.
type Chunk struct {
	Segment     int64
	Compression seqfile.Compression
	Events      [][]byte
}

// Event is an event WriteChunks wrote, at its offset.
type Event struct {
	Offset int64
	Data   []byte
}

// WriteChunks writes chunks through st as the node's storage writer lays
// them out: each a SequenceFile (LongWritable offsets, BytesWritable
// events) at <scope>/<stream>/segment=N/<first offset>.seq, a segment's
// chunks one after the other from offset 0, offsets counting framed
// events (protocol.EventHeaderSize and the event). It returns each
// segment's events with their offsets, in order.
func WriteChunks(t testing.TB, st tier2.Storage, scope, stream string, chunks []Chunk) map[int64][]Event {
	t.Helper()
	next := map[int64]int64{}
	evs := map[int64][]Event{}
	for _, c := range chunks {
		first := next[c.Segment]
		f, err := st.Create(tier2.ChunkPath(scope, stream, c.Segment, first))
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriter(f)
		w, err := seqfile.NewWriter(bw, seqfile.WriterOptions{KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable, Compression: c.Compression})
		if err != nil {
			t.Fatal(err)
		}
		off := first
		for _, ev := range c.Events {
			if err := w.AppendEvent(off, ev); err != nil {
				t.Fatal(err)
			}
			evs[c.Segment] = append(evs[c.Segment], Event{Offset: off, Data: ev})
			off += int64(protocol.EventHeaderSize + len(ev))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		next[c.Segment] = off
	}
	return evs
}

// WriteLetterChunk writes a SequenceFile chunk at p (any path, a chunk
// being written too) of n events of size bytes each, the i-th all the
// letter 'a'+i%26, keyed from first on in steps of size+8, and returns
// the file's bytes. The heads' fixtures use it where an event's bytes
// only need to be told apart.
func WriteLetterChunk(t testing.TB, st tier2.Storage, p string, first int64, n, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := seqfile.NewWriter(&buf, seqfile.WriterOptions{KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable})
	if err != nil {
		t.Fatal(err)
	}
	off := first
	for i := range n {
		if err := sw.AppendEvent(off, bytes.Repeat([]byte{byte('a' + i%26)}, size)); err != nil {
			t.Fatal(err)
		}
		off += int64(size) + 8
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	Put(t, st, p, buf.Bytes())
	return buf.Bytes()
}
