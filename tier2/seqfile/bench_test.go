package seqfile

import (
	"bytes"
	"io"
	"testing"
)

func benchOpts(c Compression) WriterOptions {
	return WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c, Sync: testSync}
}

// benchEvent is a 1 KiB event of mixed text, roughly as compressible as
// JSON events.
func benchEvent() []byte {
	b := make([]byte, 0, 1024)
	for i := 0; len(b) < 1024; i++ {
		b = append(b, byte('a'+i*7%26), byte('0'+i%10), ' ')
	}
	return b[:1024]
}

func BenchmarkWriteEvents(b *testing.B) {
	for _, c := range []Compression{None, Block} {
		b.Run(c.String(), func(b *testing.B) {
			ev := benchEvent()
			w, err := NewWriter(io.Discard, benchOpts(c))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.AppendEvent(int64(i), ev); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkReadEvents(b *testing.B) {
	for _, c := range []Compression{None, Block} {
		b.Run(c.String(), func(b *testing.B) {
			ev := benchEvent()
			const n = 20000
			var buf bytes.Buffer
			w, _ := NewWriter(&buf, benchOpts(c))
			for i := 0; i < n; i++ {
				w.AppendEvent(int64(i), ev)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			file := buf.Bytes()
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			b.ResetTimer()
			var r *Reader
			for i := 0; i < b.N; i++ {
				if i%n == 0 {
					var err error
					if r, err = NewReader(bytes.NewReader(file)); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := r.NextEvent(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
