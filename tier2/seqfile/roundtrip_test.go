package seqfile

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// randomEvents returns events of random sizes 0..1 MiB (mostly small) and
// one of 8 MiB, with random bytes.
func randomEvents(seed uint64) []event {
	rng := rand.New(rand.NewPCG(seed, 7))
	var evs []event
	off := int64(rng.IntN(1000))
	for i := 0; i < 600; i++ {
		size := rng.IntN(4096)
		switch {
		case i%60 == 59:
			size = rng.IntN(1<<20 + 1)
		case i == 300:
			size = 8 << 20
		case i%50 == 0:
			size = 0
		}
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		evs = append(evs, event{off: off, data: b})
		off += int64(size) + 1
	}
	return evs
}

func TestRoundTrip(t *testing.T) {
	evs := randomEvents(42)
	for _, c := range []Compression{None, Record, Block} {
		t.Run(c.String(), func(t *testing.T) {
			opts := WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c,
				Metadata: map[string]string{"k": "v"}}
			file, _ := writeEvents(t, opts, evs)
			r, err := NewReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			h := r.Header()
			if h.Compression != c || h.Metadata["k"] != "v" || h.Sync == ([16]byte{}) {
				t.Fatalf("header %+v", h)
			}
			// Count sync escapes (uncompressed) or blocks: several of each.
			if n := bytes.Count(file, append([]byte{0xff, 0xff, 0xff, 0xff}, h.Sync[:]...)); n < 5 {
				t.Fatalf("%d sync escapes, want several", n)
			}
			for i, e := range evs {
				off, data, err := r.NextEvent()
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if off != e.off || !bytes.Equal(data, e.data) {
					t.Fatalf("event %d differs", i)
				}
			}
			if _, _, err := r.NextEvent(); err != io.EOF {
				t.Fatalf("after the last event: %v", err)
			}
			if _, _, err := r.Next(); err != io.EOF {
				t.Fatalf("io.EOF is not sticky: %v", err)
			}
		})
	}
}

func TestRawAppendAndEmptyFile(t *testing.T) {
	for _, c := range []Compression{None, Record, Block} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, WriterOptions{KeyClass: "K", ValueClass: "V", Compression: c, BlockSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		hdr := w.Written()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if int64(buf.Len()) != hdr {
			t.Fatalf("%v: empty file is %d bytes, header %d", c, buf.Len(), hdr)
		}
		if err := w.Append(nil, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Append after Close: %v", err)
		}
		buf.Reset()
		w, _ = NewWriter(&buf, WriterOptions{KeyClass: "K", ValueClass: "V", Compression: c, BlockSize: 10})
		recs := [][2]string{{"", ""}, {"k", ""}, {"", "v"}, {"key", "value value"}}
		for _, kv := range recs {
			if err := w.Append([]byte(kv[0]), []byte(kv[1])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if h := r.Header(); h.KeyClass != "K" || h.ValueClass != "V" || h.Size != hdr {
			t.Fatalf("header %+v, size want %d", h, hdr)
		}
		for _, kv := range recs {
			k, v, err := r.Next()
			if err != nil || string(k) != kv[0] || string(v) != kv[1] {
				t.Fatalf("%v: got %q %q %v, want %q %q", c, k, v, err, kv[0], kv[1])
			}
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("%v: %v", c, err)
		}
		if _, _, err := r.NextEvent(); !errors.Is(err, ErrClassMismatch) {
			t.Fatalf("%v: NextEvent on K/V classes: %v", c, err)
		}
	}
}

func TestWriterOptionErrors(t *testing.T) {
	bad := []WriterOptions{
		{ValueClass: "V"},
		{KeyClass: "K"},
		{KeyClass: "K", ValueClass: "V", Compression: 3},
		{KeyClass: "K", ValueClass: "V", BlockSize: -1},
		{KeyClass: "K", ValueClass: "V", BlockSize: MaxRecordSize + 1},
	}
	for i, o := range bad {
		if _, err := NewWriter(io.Discard, o); err == nil {
			t.Errorf("options %d accepted: %+v", i, o)
		}
	}
	w, err := NewWriter(io.Discard, WriterOptions{KeyClass: "K", ValueClass: "V"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendEvent(0, make([]byte, MaxRecordSize)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized event: %v", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	w, err := NewWriter(&failWriter{n: 1000}, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 100<<10) // larger than the buffer: reaches the failing writer
	if err := w.AppendEvent(1, big); err == nil {
		t.Fatal("write to a failing writer succeeded")
	}
	if err := w.AppendEvent(2, nil); err == nil {
		t.Fatal("error not sticky")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a write error succeeded")
	}
}

func TestAppendEventDoesNotAllocate(t *testing.T) {
	ev := bytes.Repeat([]byte("event bytes "), 90)
	for _, c := range []Compression{None, Record, Block} {
		w, err := NewWriter(io.Discard, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c, BlockSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 500; i++ { // grow the buffers through several blocks
			w.AppendEvent(int64(i), ev)
		}
		if n := testing.AllocsPerRun(2000, func() { w.AppendEvent(7, ev) }); n != 0 {
			t.Errorf("%v: %.2f allocations per AppendEvent", c, n)
		}
	}
}
