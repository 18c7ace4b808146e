package seqfile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.seq golden files")

// goldenEvents are deterministic events: sizes 0..1499, compressible
// text, enough bytes to cross two sync intervals uncompressed.
func goldenEvents() []event {
	var evs []event
	total := 0
	for i := 0; total < 2*SyncInterval+10000; i++ {
		size := (i * 131) % 1500
		var b []byte
		for len(b) < size {
			b = fmt.Appendf(b, "event %d of the golden chunk;", i)
		}
		evs = append(evs, event{off: int64(1000 + i*7), data: b[:size]})
		total += size + 20
	}
	return evs
}

var goldenMeta = map[string]string{"sluice.stream": "scope/stream", "sluice.segment": "7"}

func goldenOpts(c Compression) WriterOptions {
	return WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c,
		BlockSize: 16384, Metadata: goldenMeta, Sync: testSync}
}

func TestGolden(t *testing.T) {
	evs := goldenEvents()
	for _, c := range []Compression{None, Record, Block} {
		t.Run(c.String(), func(t *testing.T) {
			file, _ := writeEvents(t, goldenOpts(c), evs)
			path := filepath.Join("testdata", "events_"+c.String()+".seq")
			if *update {
				if err := os.WriteFile(path, file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(file, want) {
				t.Fatalf("written bytes differ from %s (%d vs %d bytes)", path, len(file), len(want))
			}
			syncs := walkGolden(t, want, c, evs)
			if c == None && syncs != 2 {
				t.Fatalf("uncompressed golden has %d sync escapes, want 2", syncs)
			}
			if c == Block && syncs < 5 {
				t.Fatalf("block golden has %d blocks, want several", syncs)
			}
			got, err := readEvents(want)
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, got, evs)
		})
	}
}

// walker reads a golden file without the package's reader.
type walker struct {
	t   *testing.T
	b   []byte
	pos int
}

func (w *walker) take(n int) []byte {
	w.t.Helper()
	if w.pos+n > len(w.b) {
		w.t.Fatalf("file ends at %d, need %d bytes at %d", len(w.b), n, w.pos)
	}
	s := w.b[w.pos : w.pos+n]
	w.pos += n
	return s
}

func (w *walker) int32() int32 { return int32(binary.BigEndian.Uint32(w.take(4))) }

// vint reads the non-negative Hadoop VInts a golden file can hold: one
// byte below 0x80, or 0x8f/0x8e/0x8d followed by 1/2/3 bytes.
func (w *walker) vint() int {
	w.t.Helper()
	b := w.take(1)[0]
	if b < 0x80 {
		return int(b)
	}
	n := 0x90 - int(b)
	if n < 1 || n > 3 {
		w.t.Fatalf("unexpected VInt first byte %#x at %d", b, w.pos-1)
	}
	v := 0
	for _, c := range w.take(n) {
		v = v<<8 | int(c)
	}
	return v
}

func (w *walker) text(want string) {
	w.t.Helper()
	if n := w.vint(); n != len(want) {
		w.t.Fatalf("text length %d at %d, want %d", n, w.pos, len(want))
	}
	if got := string(w.take(len(want))); got != want {
		w.t.Fatalf("text %q, want %q", got, want)
	}
}

func (w *walker) syncEscape() {
	w.t.Helper()
	if esc := w.int32(); esc != -1 {
		w.t.Fatalf("want a sync escape at %d, found %d", w.pos-4, esc)
	}
	if s := w.take(16); !bytes.Equal(s, testSync[:]) {
		w.t.Fatalf("sync bytes %x at %d", s, w.pos-16)
	}
}

func (w *walker) zlib(what string) []byte {
	w.t.Helper()
	raw := w.take(w.vint())
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	return out
}

// walkGolden checks every field of a golden file and returns the number
// of sync escapes after the header.
func walkGolden(t *testing.T, b []byte, c Compression, evs []event) int {
	w := &walker{t: t, b: b}
	if string(w.take(4)) != "SEQ\x06" {
		t.Fatal("magic")
	}
	w.text(LongWritable)
	w.text(BytesWritable)
	flags := w.take(2)
	wantFlags := map[Compression]string{None: "\x00\x00", Record: "\x01\x00", Block: "\x01\x01"}[c]
	if string(flags) != wantFlags {
		t.Fatalf("flags %x, want %x", flags, wantFlags)
	}
	if c != None {
		w.text(DefaultCodec)
	}
	if n := w.int32(); n != 2 {
		t.Fatalf("metadata count %d", n)
	}
	w.text("sluice.segment") // sorted: "sluice.segment" < "sluice.stream"
	w.text("7")
	w.text("sluice.stream")
	w.text("scope/stream")
	if s := w.take(16); !bytes.Equal(s, testSync[:]) {
		t.Fatalf("header sync %x", s)
	}
	syncs := 0
	if c == Block {
		i := 0
		for w.pos < len(b) {
			w.syncEscape()
			syncs++
			count := w.vint()
			keyLens, keys := w.zlib("key lengths"), w.zlib("keys")
			valLens, vals := w.zlib("value lengths"), w.zlib("values")
			sub := &walker{t: t, b: keyLens}
			vsub := &walker{t: t, b: valLens}
			size := 0
			for j := 0; j < count; j++ {
				e := evs[i]
				if kl := sub.vint(); kl != 8 {
					t.Fatalf("block key length %d", kl)
				}
				if off := int64(binary.BigEndian.Uint64(keys[8*j:])); off != e.off {
					t.Fatalf("event %d key %d, want %d", i, off, e.off)
				}
				if vl := vsub.vint(); vl != 4+len(e.data) {
					t.Fatalf("event %d value length %d", i, vl)
				}
				if n := binary.BigEndian.Uint32(vals); int(n) != len(e.data) || !bytes.Equal(vals[4:4+n], e.data) {
					t.Fatalf("event %d value differs", i)
				}
				vals = vals[4+len(e.data):]
				size += 8 + 4 + len(e.data)
				// Hadoop closes a block as soon as keys+values reach the block size.
				if full := size >= 16384; full != (j == count-1) && w.pos < len(b) {
					t.Fatalf("block of %d records closed at %d bytes (record %d)", count, size, j)
				}
				i++
			}
			if len(keys) != 8*count || len(vals) != 0 || sub.pos != len(keyLens) || vsub.pos != len(valLens) {
				t.Fatalf("block sections hold extra bytes")
			}
		}
		if i != len(evs) {
			t.Fatalf("blocks hold %d events, want %d", i, len(evs))
		}
		return syncs
	}
	lastSync := 0
	for i, e := range evs {
		if w.pos >= lastSync+SyncInterval {
			w.syncEscape()
			lastSync = w.pos
			syncs++
		}
		start := w.pos
		recLen, keyLen := w.int32(), w.int32()
		if keyLen != 8 {
			t.Fatalf("event %d key length %d at %d", i, keyLen, start)
		}
		if off := int64(binary.BigEndian.Uint64(w.take(8))); off != e.off {
			t.Fatalf("event %d offset %d, want %d", i, off, e.off)
		}
		value := w.take(int(recLen) - 8)
		if c == Record {
			zr, err := zlib.NewReader(bytes.NewReader(value))
			if err != nil {
				t.Fatal(err)
			}
			if value, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if n := binary.BigEndian.Uint32(value); int(n) != len(e.data) || !bytes.Equal(value[4:], e.data) {
			t.Fatalf("event %d value differs", i)
		}
	}
	if w.pos != len(b) {
		t.Fatalf("%d bytes after the last record", len(b)-w.pos)
	}
	return syncs
}
