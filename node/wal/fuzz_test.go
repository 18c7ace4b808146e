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

// FuzzRecover: whatever follows a valid header in the only file, and
// whatever LSN replay starts from, Open either recovers or refuses with a
// *CorruptError; it never panics. A refusal leaves the file's bytes as
// they were; a recovery keeps the bytes of the records it replayed, zeroes
// only what follows them, and the log then takes appends.
func FuzzRecover(f *testing.F) {
	f.Add(appendRecord(appendRecord(nil, 1, 1, 0, []byte("a")), 1, 2, 1, []byte("b")), uint8(1))
	f.Add([]byte{1, 2, 3}, uint8(1))
	f.Add(append(appendRecord(nil, 1, 1, 0, []byte("a")), make([]byte, 40)...), uint8(2))
	f.Add(append(appendRecord(appendRecord(nil, 1, 1, 0, []byte("a")), 1, 2, 0, []byte("b"))[:30], appendRecord(nil, 1, 3, 1, []byte("c"))...), uint8(1))
	f.Add(append(appendRecord(appendRecord(nil, 1, 1, 0, []byte("a")), 1, 2, 1, []byte("b"))[:40], make([]byte, 100)...), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, from uint8) {
		dir := t.TempDir()
		name := filepath.Join(dir, fileName(1))
		data := append(fileHeader{seq: 1, firstLSN: 1}.encode(), body...)
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, recs, err := openCollect(Options{Dir: dir}, uint64(from))
		after, rerr := os.ReadFile(name)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("Open error %v is not a *CorruptError", err)
			}
			if !bytes.Equal(after, data) {
				t.Fatalf("a refused recovery changed the file")
			}
			return
		}
		defer w.Close()
		next := w.NextLSN()
		end := int(w.fileOff) // where the kept records end; the flusher is idle
		if uint64(from) > next {
			t.Fatalf("recovered a log that ends before LSN %d, but the caller had made LSN %d durable", next, from-1)
		}
		if uint64(len(recs)) != next-max(uint64(from), 1) {
			t.Fatalf("replayed %d records from LSN %d of a log that ends before %d", len(recs), from, next)
		}
		if len(after) != len(data) || !bytes.Equal(after[:end], data[:end]) || lastNonZero(after) >= end {
			t.Fatalf("recovery did not keep the records and zero only what follows them")
		}
		p, err := w.Append(1, []byte("next"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if p.LSN != next {
			t.Fatalf("append after a log that ended before LSN %d got LSN %d", next, p.LSN)
		}
	})
}
