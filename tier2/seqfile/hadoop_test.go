package seqfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReadHadoopFiles reads files written by Hadoop's own Java writer.
func TestReadHadoopFiles(t *testing.T) {
	cases := []struct {
		file string
		comp Compression
		sync string
	}{
		{"uncompressed.seq", None, "\xa8\x69\x81\x82\x12\x51\x2a\x7e\xc5\x61\x9c\x33\x6b\xc5\xd7\x75"},
		{"record_compressed_zlib.seq", Record, "\x43\x72\xb3\x16\xae\x21\xe1\xc8\x10\xbc\x05\x50\xe3\x12\xe9\x7c"},
		{"block_compressed_zlib.seq", Block, "\x78\x38\x6c\x32\x60\x72\x5a\xc8\xf2\x90\x4c\xe9\x06\x74\x98\x47"},
	}
	want := [][2]string{{"Alice", "Practice"}, {"Bob", "Hope"}}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "hadoop", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			h := r.Header()
			if h.Version != 6 || h.KeyClass != BytesWritable || h.ValueClass != BytesWritable ||
				h.Compression != c.comp || len(h.Metadata) != 0 || string(h.Sync[:]) != c.sync {
				t.Fatalf("header %+v", h)
			}
			if wantCodec := map[bool]string{true: DefaultCodec, false: ""}[c.comp != None]; h.Codec != wantCodec {
				t.Fatalf("codec %q, want %q", h.Codec, wantCodec)
			}
			for i, kv := range want {
				k, v, err := r.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				kb, err := DecodeBytes(k)
				if err != nil {
					t.Fatal(err)
				}
				vb, err := DecodeBytes(v)
				if err != nil {
					t.Fatal(err)
				}
				if string(kb) != kv[0] || string(vb) != kv[1] {
					t.Fatalf("record %d = %q -> %q, want %q -> %q", i, kb, vb, kv[0], kv[1])
				}
			}
			if _, _, err := r.Next(); err != io.EOF {
				t.Fatalf("after the last record: %v, want io.EOF", err)
			}
			if _, _, err := r.NextEvent(); !errors.Is(err, ErrClassMismatch) {
				t.Fatalf("NextEvent on BytesWritable keys: %v, want ErrClassMismatch", err)
			}
		})
	}
}
