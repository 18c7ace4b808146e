package seqfile

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func smallEvents() []event {
	return []event{{0, nil}, {1, []byte("a")}, {2, []byte("hello")}, {3, bytes.Repeat([]byte("xy"), 40)}, {4, []byte("end")}}
}

// TestTruncateEveryLength cuts small files of each kind at every length:
// a cut between records reads as a shorter file, any other cut is
// ErrCorrupt.
func TestTruncateEveryLength(t *testing.T) {
	evs := smallEvents()
	for _, c := range []Compression{None, Record, Block} {
		opts := WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c,
			BlockSize: 1, Metadata: map[string]string{"a": "b"}, Sync: testSync}
		file, ends := writeEvents(t, opts, evs)
		for l := 0; l < len(file); l++ {
			got, err := readEvents(file[:l])
			if i := slices.Index(ends, int64(l)); i >= 0 {
				if err != nil {
					t.Fatalf("%v cut at record boundary %d: %v", c, l, err)
				}
				sameEvents(t, got, evs[:i])
				continue
			}
			mustCorrupt(t, err, c.String()+" cut mid-record")
		}
	}
}

// TestTruncateAroundSync cuts the uncompressed golden file around its
// first sync escape: the clean cuts are record ends and the end of the
// escape itself.
func TestTruncateAroundSync(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("testdata", "events_none.seq"))
	if err != nil {
		t.Fatal(err)
	}
	_, ends := writeEvents(t, goldenOpts(None), goldenEvents())
	esc := append([]byte{0xff, 0xff, 0xff, 0xff}, testSync[:]...)
	at := bytes.Index(file, esc)
	if at < 0 || !slices.Contains(ends, int64(at)) {
		t.Fatalf("sync escape at %d is not at a record end", at)
	}
	clean := append(slices.Clone(ends), int64(at+len(esc)))
	for l := at - 1500; l < at+1500; l++ {
		_, err := readEvents(file[:l])
		if slices.Contains(clean, int64(l)) {
			if err != nil {
				t.Fatalf("cut at %d (sync escape at %d): %v", l, at, err)
			}
			continue
		}
		mustCorrupt(t, err, "cut near a sync escape")
	}
	// A wrong sync escape is damage.
	bad := bytes.Clone(file)
	bad[at+10] ^= 1
	_, err = readEvents(bad)
	mustCorrupt(t, err, "wrong sync marker")
}

// TestFlipHeaderBytes flips bits in every header byte: structural bytes
// give ErrCorrupt; string contents may read (the file is still well formed).
func TestFlipHeaderBytes(t *testing.T) {
	evs := smallEvents()
	for _, c := range []Compression{None, Block} {
		opts := WriterOptions{KeyClass: LongWritable, ValueClass: BytesWritable, Compression: c,
			Metadata: map[string]string{"name": "value"}, Sync: testSync}
		file, ends := writeEvents(t, opts, evs)
		hdrLen := int(ends[0])
		// Offsets of free-form string content and of the sync marker.
		content := map[int]bool{}
		for _, s := range []string{LongWritable, BytesWritable, "name", "value"} {
			i := bytes.Index(file, []byte(s))
			for j := i; j < i+len(s); j++ {
				content[j] = true
			}
		}
		codec := map[int]bool{}
		if i := bytes.Index(file[:hdrLen], []byte(DefaultCodec)); i >= 0 {
			for j := i; j < i+len(DefaultCodec); j++ {
				codec[j] = true
			}
		}
		for pos := 0; pos < hdrLen; pos++ {
			for _, mask := range []byte{0x01, 0x40, 0x80, 0xff} {
				bad := bytes.Clone(file)
				bad[pos] ^= mask
				got, err := readAllRaw(bad)
				switch {
				case err == nil && (content[pos] || (c == None && pos >= hdrLen-16)):
					if got != len(evs) {
						t.Fatalf("%v flip %#x at %d: %d records", c, mask, pos, got)
					}
				case errors.Is(err, ErrUnsupported) && codec[pos]:
				case errors.Is(err, ErrCorrupt):
				default:
					t.Fatalf("%v flip %#x at header byte %d: got %v", c, mask, pos, err)
				}
			}
		}
	}
}

// readAllRaw reads every record with Next and returns how many there were.
func readAllRaw(file []byte) (int, error) {
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		_, _, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// craftedHeader builds a header by hand.
func craftedHeader(comp, block byte) []byte {
	h := []byte("SEQ\x06")
	h = appendText(h, LongWritable)
	h = appendText(h, BytesWritable)
	h = append(h, comp, block)
	if comp == 1 {
		h = appendText(h, DefaultCodec)
	}
	h = append(h, be32(0)...)
	return append(h, testSync[:]...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestCorruptionTable(t *testing.T) {
	none, rec, blk := craftedHeader(0, 0), craftedHeader(1, 0), craftedHeader(1, 1)
	esc := cat(be32(-1), testSync[:])
	key := []byte{0, 0, 0, 0, 0, 0, 0, 9}
	val := cat(be32(3), []byte("abc"))
	goodRec := cat(be32(int32(len(key)+len(val))), be32(8), key, val)
	section := func(b []byte) []byte { z := zlibBytes(b); return cat(appendVLong(nil, int64(len(z))), z) }
	goodBlock := cat(esc, []byte{1}, section([]byte{8}), section(key), section([]byte{7}), section(val))
	hdrMeta := func(count int32) []byte {
		h := []byte("SEQ\x06")
		h = appendText(h, "K")
		h = appendText(h, "V")
		h = append(h, 0, 0)
		return append(h, be32(count)...)
	}

	// Sanity: the crafted good files read.
	for i, f := range [][]byte{cat(none, goodRec, esc, goodRec), cat(blk, goodBlock, goodBlock)} {
		if evs, err := readEvents(f); err != nil || len(evs) != 2 || evs[1].off != 9 || string(evs[1].data) != "abc" {
			t.Fatalf("good crafted file %d: %v %v", i, evs, err)
		}
	}
	recVal := zlibBytes(val)
	cases := []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"bad magic", cat([]byte("SEX"), none[3:])},
		{"version 5", cat([]byte("SEQ\x05"), none[4:])},
		{"version 7", cat([]byte("SEQ\x07"), none[4:])},
		{"class length negative", cat([]byte("SEQ\x06\xff"), none[5:])},
		{"class length huge", cat([]byte("SEQ\x06\x8c\x7f\xff\xff\xff"), none[5:])},
		{"class not UTF-8", cat([]byte("SEQ\x06\x02\xff\xfe"), none[5+len(LongWritable):])},
		{"compression flag 2", cat(none[:len(none)-22], []byte{2, 0}, none[len(none)-20:])},
		{"block without compression", cat(none[:len(none)-22], []byte{0, 1}, none[len(none)-20:])},
		{"metadata count negative", cat(hdrMeta(-1), testSync[:])},
		{"metadata count beyond the file", cat(hdrMeta(1<<30), []byte("\x01a\x01b"), testSync[:])},
		{"truncated sync marker", none[:len(none)-3]},
		{"record length negative", cat(none, be32(-5), be32(0))},
		{"record length huge", cat(none, be32(1<<30), be32(8), key)},
		{"record length max int", cat(none, be32(1<<31-1), be32(8), key)},
		{"key length negative", cat(none, be32(12), be32(-1), key, val)},
		{"key length above record", cat(none, be32(12), be32(13), key, val)},
		{"record cut short", cat(none, goodRec[:len(goodRec)-1])},
		{"length cut short", cat(none, goodRec, []byte{0, 0})},
		{"wrong sync marker", cat(none, goodRec, be32(-1), make([]byte, 16), goodRec)},
		{"sync escape cut short", cat(none, goodRec, esc[:10])},
		{"two sync escapes", cat(none, esc, esc, goodRec)},
		{"bad zlib value", cat(rec, be32(int32(8+len(recVal))), be32(8), key, bytes.Repeat([]byte{0x55}, len(recVal)))},
		{"zlib value bad checksum", cat(rec, be32(int32(8+len(recVal))), be32(8), key, recVal[:len(recVal)-1], []byte{recVal[len(recVal)-1] ^ 1})},
		{"bytes after zlib value", cat(rec, be32(int32(9+len(recVal))), be32(8), key, recVal, []byte{0})},
		{"zlib value cut", cat(rec, be32(int32(7+len(recVal))), be32(8), key, recVal[:len(recVal)-1])},
		{"block without sync escape", cat(blk, be32(5), goodBlock[4:])},
		{"block wrong sync", cat(blk, be32(-1), make([]byte, 16), goodBlock[20:])},
		{"block of zero records", cat(blk, esc, []byte{0}, goodBlock[21:])},
		{"block count above lengths", cat(blk, esc, []byte{2}, goodBlock[21:])},
		{"block count negative", cat(blk, esc, []byte{0xff}, goodBlock[21:])},
		{"block section size huge", cat(blk, esc, []byte{1, 0x8c, 0x7f, 0xff, 0xff, 0xff})},
		{"block section bad zlib", cat(blk, esc, []byte{1}, []byte{3, 1, 2, 3}, goodBlock[21:])},
		{"block lengths do not add up", cat(blk, esc, []byte{1}, section([]byte{7}), section(key), section([]byte{7}), section(val))},
		{"block value length negative", cat(blk, esc, []byte{1}, section([]byte{8}), section(key), section([]byte{0xff}), section(val))},
		{"block extra length bytes", cat(blk, esc, []byte{1}, section([]byte{8, 0}), section(key), section([]byte{7}), section(val))},
		{"block cut", cat(blk, goodBlock[:len(goodBlock)-2])},
		{"LongWritable of 7 bytes", cat(none, be32(int32(7+len(val))), be32(7), key[:7], val)},
		{"BytesWritable length wrong", cat(none, be32(12+8), be32(8), key, be32(4), []byte("abc"))},
		{"BytesWritable negative", cat(none, be32(12+8), be32(8), key, be32(-1), []byte("abc"))},
		{"BytesWritable too short", cat(none, be32(10), be32(8), key, []byte{0, 0})},
	}
	for _, c := range cases {
		_, err := readEvents(c.file)
		mustCorrupt(t, err, c.name)
		if testing.Verbose() {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

func TestUnsupportedCodec(t *testing.T) {
	h := []byte("SEQ\x06")
	h = appendText(h, LongWritable)
	h = appendText(h, BytesWritable)
	h = append(h, 1, 0)
	h = appendText(h, "org.apache.hadoop.io.compress.SnappyCodec")
	h = append(h, be32(0)...)
	h = append(h, testSync[:]...)
	if _, err := NewReader(bytes.NewReader(h)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("snappy codec: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

func TestReadErrorIsNotCorruption(t *testing.T) {
	_, err := NewReader(io.MultiReader(bytes.NewReader([]byte("SEQ")), errReader{}))
	if err == nil || errors.Is(err, ErrCorrupt) {
		t.Fatalf("I/O error reported as %v", err)
	}
}
