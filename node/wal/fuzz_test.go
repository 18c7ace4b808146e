package wal

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func crc32cOf(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// FuzzDecodeRecord: the record decoder never panics, and whatever it accepts
// re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, 1, 1, 0, []byte("hello")))
	f.Add(appendRecord(nil, 9, 1<<40, 1<<39, nil))
	f.Add(make([]byte, RecordHeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, lsn, synced, payload, n, err := decodeAnyRecord(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		if re := appendRecord(nil, typ, lsn, synced, payload); !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// FuzzRecover: whatever follows a valid header in the only file, Open
// either recovers (cutting a torn tail) or refuses with ErrCorrupt; it
// never panics, and a recovered log accepts appends.
func FuzzRecover(f *testing.F) {
	f.Add(appendRecord(appendRecord(nil, 1, 1, 0, []byte("a")), 1, 2, 1, []byte("b")))
	f.Add([]byte{1, 2, 3})
	f.Add(append(appendRecord(nil, 1, 1, 0, []byte("a")), make([]byte, 40)...))
	f.Add(append(appendRecord(appendRecord(nil, 1, 1, 0, []byte("a")), 1, 2, 0, []byte("b"))[:30], appendRecord(nil, 1, 3, 1, []byte("c"))...))
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		data := append(fileHeader{seq: 1, firstLSN: 1}.encode(), body...)
		if err := os.WriteFile(filepath.Join(dir, fileName(1)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, recs, err := openCollect(Options{Dir: dir}, 1)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open error %v is not ErrCorrupt", err)
			}
			return
		}
		defer w.Close()
		p, err := w.Append(1, []byte("next"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if p.LSN != uint64(len(recs))+1 {
			t.Fatalf("append after %d recovered records got LSN %d", len(recs), p.LSN)
		}
	})
}
