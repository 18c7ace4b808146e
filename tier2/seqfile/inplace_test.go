package seqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestEventsInPlace(t *testing.T) {
	var want []byte
	var file bytes.Buffer
	w, err := NewWriter(&file, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable})
	if err != nil {
		t.Fatal(err)
	}
	off := int64(1000)
	for i := range 3000 { // several sync escapes
		ev := bytes.Repeat([]byte{byte(i)}, i%200)
		if err := w.AppendEvent(off, ev); err != nil {
			t.Fatal(err)
		}
		want = binary.BigEndian.AppendUint32(want, uint32(len(ev)))
		want = append(want, ev...)
		off += int64(4 + len(ev))
	}
	w.Close()
	b := bytes.Clone(file.Bytes())
	got, ok, err := EventsInPlace(b, 1000)
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("EventsInPlace: ok %v, err %v, %d bytes, want %d", ok, err, len(got), len(want))
	}
	// The wrong first offset, cut records and flipped lengths are damage.
	if _, _, err := EventsInPlace(bytes.Clone(file.Bytes()), 999); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong first offset: %v", err)
	}
	for _, cut := range []int{file.Len() - 1, file.Len() - 3, file.Len() - 150} {
		if _, _, err := EventsInPlace(bytes.Clone(file.Bytes()[:cut]), 1000); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	for i := 0; i < 2000; i += 7 {
		bad := bytes.Clone(file.Bytes())
		hdr, _ := NewReader(bytes.NewReader(bad))
		p := int(hdr.Header().Size) + i
		bad[p] ^= 0x80
		if got, ok, err := EventsInPlace(bad, 1000); err == nil && ok && bytes.Equal(got, want) {
			t.Fatalf("flip at %d went unnoticed", p)
		}
	}
	// A compressed file is left to the Reader.
	var z bytes.Buffer
	zw, _ := NewWriter(&z, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: Block})
	zw.AppendEvent(0, []byte("x"))
	zw.Close()
	if _, ok, err := EventsInPlace(z.Bytes(), 0); ok || err != nil {
		t.Fatalf("block-compressed: ok %v, err %v", ok, err)
	}
	// Other classes are refused.
	var o bytes.Buffer
	ow, _ := NewWriter(&o, WriterOptions{KeyClass: BytesWritable, ValueClass: BytesWritable})
	ow.Close()
	if _, _, err := EventsInPlace(o.Bytes(), 0); !errors.Is(err, ErrClassMismatch) {
		t.Fatalf("other classes: %v", err)
	}
}

// TestEventsInPlaceAtBoundaries reads a file in parts cut where the
// writer said records may start (Boundary, taken before appending an
// event), each part on its own with only the header known, and checks the
// parts give the events of their offsets, including parts that begin with
// a sync escape.
func TestEventsInPlaceAtBoundaries(t *testing.T) {
	var file bytes.Buffer
	w, err := NewWriter(&file, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable})
	if err != nil {
		t.Fatal(err)
	}
	type mark struct{ offset, pos int64 }
	var marks []mark
	var want []byte
	off := int64(500)
	for i := range 2000 {
		pos, ok := w.Boundary()
		if !ok {
			t.Fatal("an uncompressed file has a boundary before every record")
		}
		if i%7 == 0 {
			marks = append(marks, mark{off, pos})
		}
		ev := bytes.Repeat([]byte{byte(i)}, i%300)
		if err := w.AppendEvent(off, ev); err != nil {
			t.Fatal(err)
		}
		want = protocolEvent(want, ev)
		off += int64(4 + len(ev))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	marks = append(marks, mark{off, w.Written()})
	if w.Written() != int64(file.Len()) {
		t.Fatalf("Written %d, file %d bytes", w.Written(), file.Len())
	}
	r, err := NewReader(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	hdr := r.Header()
	if marks[0].pos != hdr.Size {
		t.Fatalf("first boundary %d, header ends at %d", marks[0].pos, hdr.Size)
	}
	syncFirst := 0
	for i := 0; i+1 < len(marks); i++ {
		m, next := marks[i], marks[i+1]
		part := bytes.Clone(file.Bytes()[m.pos:next.pos])
		if int32(binary.BigEndian.Uint32(part)) == syncEscape {
			syncFirst++
		}
		got, err := EventsInPlaceAt(hdr, part, m.pos, m.offset)
		if err != nil {
			t.Fatalf("part %d at byte %d: %v", i, m.pos, err)
		}
		if w := want[m.offset-500 : next.offset-500]; !bytes.Equal(got, w) {
			t.Fatalf("part %d: %d bytes of events, want %d", i, len(got), len(w))
		}
		// The wrong first offset and a part cut short are damage, and
		// the error names the byte of the file.
		if _, err := EventsInPlaceAt(hdr, bytes.Clone(file.Bytes()[m.pos:next.pos]), m.pos, m.offset+4); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("part %d with a wrong first offset: %v", i, err)
		}
		_, err = EventsInPlaceAt(hdr, bytes.Clone(file.Bytes()[m.pos:next.pos-1]), m.pos, m.offset)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "at byte") {
			t.Fatalf("part %d cut short: %v", i, err)
		}
	}
	if syncFirst == 0 {
		t.Fatal("no part began with a sync escape; the test does not cover them")
	}
	// A compressed header is refused: its records cannot be compacted.
	zhdr := hdr
	zhdr.Compression = Record
	if _, err := EventsInPlaceAt(zhdr, nil, hdr.Size, 0); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("record-compressed: %v", err)
	}
}

// TestBoundaryOfBlockCompressedFiles: only between blocks.
func TestBoundaryOfBlockCompressedFiles(t *testing.T) {
	var file bytes.Buffer
	w, err := NewWriter(&file, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: Block, BlockSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Boundary(); !ok {
		t.Fatal("no boundary before the first record")
	}
	if err := w.AppendEvent(0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Boundary(); ok {
		t.Fatal("a boundary inside an unfinished block")
	}
	if err := w.AppendEvent(5, bytes.Repeat([]byte("y"), 200)); err != nil { // closes the block
		t.Fatal(err)
	}
	if pos, ok := w.Boundary(); !ok || pos != w.Written() {
		t.Fatalf("after a block: boundary %d %v, written %d", pos, ok, w.Written())
	}
}

func protocolEvent(b, ev []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ev)))
	return append(b, ev...)
}

func FuzzEventsInPlace(f *testing.F) {
	var file bytes.Buffer
	w, _ := NewWriter(&file, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Sync: [16]byte{1}})
	for i := range 20 {
		w.AppendEvent(int64(i*9), []byte("event"))
	}
	w.Close()
	f.Add(file.Bytes(), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, first int64) {
		EventsInPlace(b, first) // must not panic
		if r, err := NewReader(bytes.NewReader(file.Bytes())); err == nil {
			EventsInPlaceAt(r.Header(), b, 0, first) // nor on a part
		}
	})
}
