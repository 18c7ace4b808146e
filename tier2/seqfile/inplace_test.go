package seqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
	_ = fmt.Sprint
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
	})
}
