package seqfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it must end with io.EOF,
// ErrCorrupt, ErrUnsupported or ErrClassMismatch, never panic, and a file
// it reads must read the same way again through NextEvent or Next.
func FuzzReader(f *testing.F) {
	for _, pattern := range []string{"testdata/*.seq", "testdata/hadoop/*.seq"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) > 2048 {
				b = b[:2048] // keep seeds small; the cut is itself a case
			}
			f.Add(b)
		}
	}
	var small bytes.Buffer
	w, _ := NewWriter(&small, WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: Block, Sync: testSync})
	w.AppendEvent(5, []byte("event"))
	w.Close()
	f.Add(small.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("NewReader: unexpected error %v", err)
			}
			return
		}
		events := r.Header().KeyClass == LongWritable && r.Header().ValueClass == BytesWritable
		for i := 0; ; i++ {
			if events {
				_, _, err = r.NextEvent()
			} else {
				_, _, err = r.Next()
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("record %d: unexpected error %v", i, err)
				}
				return
			}
		}
	})
}
