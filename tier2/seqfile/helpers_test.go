package seqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// testSync is the fixed sync marker of the golden files.
var testSync = [16]byte{0x53, 0x4c, 0x55, 0x49, 0x43, 0x45, 0x2d, 0x47, 0x4f, 0x4c, 0x44, 0x45, 0x4e, 0x21, 0x00, 0xff}

type event struct {
	off  int64
	data []byte
}

// writeEvents writes evs with opts and returns the file and the file
// size after each event (the record boundaries for None/Record, and for
// Block when every record closes its block).
func writeEvents(t testing.TB, opts WriterOptions, evs []event) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	ends := []int64{w.Written()}
	for _, e := range evs {
		if err := w.AppendEvent(e.off, e.data); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, w.Written())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != w.Written() {
		t.Fatalf("Written() = %d after Close, file is %d bytes", w.Written(), buf.Len())
	}
	return buf.Bytes(), ends
}

// readEvents reads every event of file; err is the error that ended the
// read (nil at a clean io.EOF).
func readEvents(file []byte) ([]event, error) {
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, err
	}
	var evs []event
	for {
		off, data, err := r.NextEvent()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, event{off, bytes.Clone(data)})
	}
}

func sameEvents(t *testing.T, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].off != want[i].off || !bytes.Equal(got[i].data, want[i].data) {
			t.Fatalf("event %d: got offset %d, %d bytes; want offset %d, %d bytes", i, got[i].off, len(got[i].data), want[i].off, len(want[i].data))
		}
	}
}

func mustCorrupt(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: got %v, want ErrCorrupt", what, err)
	}
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
