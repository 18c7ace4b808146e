package seqfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSection bounds one uncompressed section of a block: a block closes
// once it reaches BlockSize (at most MaxRecordSize), so it holds less than
// that plus one record.
const maxSection = 2 * MaxRecordSize

// Header is what a file's header says.
type Header struct {
	Version     int
	KeyClass    string
	ValueClass  string
	Compression Compression
	Codec       string // DefaultCodec when compressed, "" otherwise
	Metadata    map[string]string
	Sync        [16]byte
	Size        int64 // bytes of the header, sync marker included
}

// Reader reads the records of one SequenceFile in order. It is not safe
// for concurrent use. Errors are sticky: after io.EOF or an error, Next
// returns the same again.
type Reader struct {
	br     *bufio.Reader
	pos    int64 // offset of the next byte br returns
	hdr    Header
	err    error
	recPos int64 // start of the record (or block) last returned

	int4   [4]byte
	syncB  [16]byte
	rec    []byte // record bytes, or compressed section
	val    []byte // decompressed value
	zr     io.ReadCloser
	events bool // classes checked for NextEvent

	// Block state: decompressed sections and cursors into them.
	left                         int
	keyLens, keys, valLens, vals []byte
	kl, k, vl, v                 int
}

// NewReader reads the header from r and returns a Reader positioned at
// the first record. Malformed headers give an error wrapping ErrCorrupt;
// a codec other than DefaultCodec gives ErrUnsupported.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10)}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header returns the file's header. The Metadata map is shared; do not
// modify it.
func (r *Reader) Header() Header { return r.hdr }

func (r *Reader) corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}

// ioErr turns a read error into the error to return: running out of
// bytes is damage, anything else is the underlying reader's failure.
func (r *Reader) ioErr(err error, off int64, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.corrupt(off, "file ends inside %s", what)
	}
	return fmt.Errorf("seqfile: read at byte %d: %w", r.pos, err)
}

// readN reads exactly n bytes into buf[:0], growing buf only as bytes
// arrive, so a bogus huge n on a short file allocates little.
func (r *Reader) readN(buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		step := n - len(buf)
		if cap(buf)-len(buf) < step && step > 1<<20 && step > len(buf) {
			step = max(len(buf), 1<<20)
		}
		if cap(buf)-len(buf) < step {
			nb := make([]byte, len(buf), len(buf)+step)
			copy(nb, buf)
			buf = nb
		}
		m, err := io.ReadFull(r.br, buf[len(buf):len(buf)+step])
		r.pos += int64(m)
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// readInt32 reads a big-endian int32. With atBoundary, running out of
// input before its first byte returns io.EOF itself.
func (r *Reader) readInt32(atBoundary bool, what string) (int32, error) {
	start := r.pos
	m, err := io.ReadFull(r.br, r.int4[:])
	r.pos += int64(m)
	if err != nil {
		if err == io.EOF && atBoundary {
			return 0, io.EOF
		}
		return 0, r.ioErr(err, start, what)
	}
	return int32(binary.BigEndian.Uint32(r.int4[:])), nil
}

// readVLong reads one Hadoop VLong from the stream.
func (r *Reader) readVLong(what string) (int64, error) {
	start := r.pos
	first, err := r.br.ReadByte()
	if err != nil {
		return 0, r.ioErr(err, start, what)
	}
	r.pos++
	n := vlongSize(first)
	var b [9]byte
	b[0] = first
	if n > 1 {
		m, err := io.ReadFull(r.br, b[1:n])
		r.pos += int64(m)
		if err != nil {
			return 0, r.ioErr(err, start, what)
		}
	}
	v, _, err := decodeVLong(b[:n])
	if err != nil {
		return 0, r.corrupt(start, "%s: %v", what, err)
	}
	return v, nil
}

// readLen reads a VInt length in [0, limit].
func (r *Reader) readLen(what string, limit int) (int, error) {
	start := r.pos
	v, err := r.readVLong(what)
	if err != nil {
		return 0, err
	}
	if v < 0 || v > int64(limit) {
		return 0, r.corrupt(start, "%s %d out of range 0..%d", what, v, limit)
	}
	return int(v), nil
}

func (r *Reader) readText(what string) (string, error) {
	n, err := r.readLen(what+" length", MaxRecordSize)
	if err != nil {
		return "", err
	}
	start := r.pos
	b, err := r.readN(nil, n)
	if err != nil {
		return "", r.ioErr(err, start, what)
	}
	if !utf8.Valid(b) {
		return "", r.corrupt(start, "%s is not UTF-8", what)
	}
	return string(b), nil
}

func (r *Reader) readBool(what string) (bool, error) {
	start := r.pos
	c, err := r.br.ReadByte()
	if err != nil {
		return false, r.ioErr(err, start, what)
	}
	r.pos++
	if c > 1 {
		return false, r.corrupt(start, "%s flag is %d, not 0 or 1", what, c)
	}
	return c == 1, nil
}

func (r *Reader) readHeader() error {
	magic, err := r.readN(r.int4[:0], 4)
	if err != nil {
		return r.ioErr(err, 0, "the header")
	}
	if string(magic[:3]) != "SEQ" {
		return r.corrupt(0, "magic %q, not \"SEQ\"", magic[:3])
	}
	if magic[3] != Version {
		return r.corrupt(3, "version %d, only %d is read", magic[3], Version)
	}
	h := &r.hdr
	h.Version = Version
	if h.KeyClass, err = r.readText("key class"); err != nil {
		return err
	}
	if h.ValueClass, err = r.readText("value class"); err != nil {
		return err
	}
	flagPos := r.pos
	comp, err := r.readBool("compression")
	if err != nil {
		return err
	}
	block, err := r.readBool("block compression")
	if err != nil {
		return err
	}
	switch {
	case block && !comp:
		return r.corrupt(flagPos, "block compression without compression")
	case block:
		h.Compression = Block
	case comp:
		h.Compression = Record
	}
	if comp {
		start := r.pos
		if h.Codec, err = r.readText("codec class"); err != nil {
			return err
		}
		if !isClassName(h.Codec) {
			return r.corrupt(start, "codec %q is not a class name", h.Codec)
		}
		if h.Codec != DefaultCodec {
			return fmt.Errorf("%w %q at byte %d (only %s)", ErrUnsupported, h.Codec, start, DefaultCodec)
		}
	}
	start := r.pos
	count, err := r.readInt32(false, "the metadata count")
	if err != nil {
		return err
	}
	if count < 0 {
		return r.corrupt(start, "metadata count %d", count)
	}
	h.Metadata = make(map[string]string)
	for i := int32(0); i < count; i++ {
		k, err := r.readText("metadata name")
		if err != nil {
			return err
		}
		v, err := r.readText("metadata value")
		if err != nil {
			return err
		}
		h.Metadata[k] = v
	}
	start = r.pos
	if _, err := r.readN(h.Sync[:0], syncSize); err != nil {
		return r.ioErr(err, start, "the sync marker")
	}
	h.Size = r.pos
	return nil
}

// checkSync reads the 16 bytes after a sync escape and compares them with
// the header's marker.
func (r *Reader) checkSync(escPos int64) error {
	if _, err := r.readN(r.syncB[:0], syncSize); err != nil {
		return r.ioErr(err, escPos, "a sync escape")
	}
	if r.syncB != r.hdr.Sync {
		return r.corrupt(escPos, "sync marker does not match the header's")
	}
	return nil
}

// inflate decompresses the zlib stream src into dst[:0]; the result must
// be at most limit bytes and src must hold nothing after the stream.
func (r *Reader) inflate(dst, src []byte, limit int, off int64, what string) ([]byte, error) {
	br := bytes.NewReader(src)
	var err error
	if r.zr == nil {
		r.zr, err = zlib.NewReader(br)
	} else {
		err = r.zr.(zlib.Resetter).Reset(br, nil)
	}
	if err != nil {
		return nil, r.corrupt(off, "%s: bad zlib data: %v", what, err)
	}
	dst = dst[:0]
	for {
		if len(dst) > limit {
			return nil, r.corrupt(off, "%s decompresses to more than %d bytes", what, limit)
		}
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(max(cap(dst), 4096), limit+1-len(dst)))
		}
		n, err := r.zr.Read(dst[len(dst):min(cap(dst), limit+1)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, r.corrupt(off, "%s: bad zlib data: %v", what, err)
		}
	}
	if len(dst) > limit {
		return nil, r.corrupt(off, "%s decompresses to more than %d bytes", what, limit)
	}
	if br.Len() != 0 {
		return nil, r.corrupt(off, "%s: %d bytes after the zlib stream", what, br.Len())
	}
	return dst, nil
}

// Next returns the next record's raw key and value bytes, or io.EOF after
// the last. The slices are valid until the next call.
func (r *Reader) Next() (key, value []byte, err error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	if r.hdr.Compression == Block {
		key, value, err = r.nextInBlock()
	} else {
		key, value, err = r.nextRecord()
	}
	if err != nil {
		r.err = err
		return nil, nil, err
	}
	return key, value, nil
}

func (r *Reader) nextRecord() ([]byte, []byte, error) {
	r.recPos = r.pos
	length, err := r.readInt32(true, "a record length")
	if err != nil {
		return nil, nil, err
	}
	if length == syncEscape {
		if err := r.checkSync(r.recPos); err != nil {
			return nil, nil, err
		}
		r.recPos = r.pos
		if length, err = r.readInt32(true, "a record length"); err != nil {
			return nil, nil, err
		}
	}
	if length < 0 || length > MaxRecordSize {
		return nil, nil, r.corrupt(r.recPos, "record length %d out of range 0..%d", length, MaxRecordSize)
	}
	klen, err := r.readInt32(false, "a record")
	if err != nil {
		return nil, nil, err
	}
	if klen < 0 || klen > length {
		return nil, nil, r.corrupt(r.recPos+4, "key length %d out of range 0..%d", klen, length)
	}
	if r.rec, err = r.readN(r.rec, int(length)); err != nil {
		return nil, nil, r.ioErr(err, r.recPos, "a record")
	}
	key, value := r.rec[:klen], r.rec[klen:]
	if r.hdr.Compression == Record {
		if r.val, err = r.inflate(r.val, value, MaxRecordSize, r.recPos+8+int64(klen), "record value"); err != nil {
			return nil, nil, err
		}
		value = r.val
	}
	return key, value, nil
}

func (r *Reader) nextInBlock() ([]byte, []byte, error) {
	if r.left == 0 {
		if err := r.loadBlock(); err != nil {
			return nil, nil, err
		}
	}
	// loadBlock checked that the lengths decode and add up.
	kn, n, _ := decodeVLong(r.keyLens[r.kl:])
	r.kl += n
	vn, n, _ := decodeVLong(r.valLens[r.vl:])
	r.vl += n
	key := r.keys[r.k : r.k+int(kn)]
	value := r.vals[r.v : r.v+int(vn)]
	r.k += int(kn)
	r.v += int(vn)
	r.left--
	return key, value, nil
}

func (r *Reader) loadBlock() error {
	r.recPos = r.pos
	esc, err := r.readInt32(true, "a block")
	if err != nil {
		return err
	}
	if esc != syncEscape {
		return r.corrupt(r.recPos, "block starts with %d, not a sync escape", esc)
	}
	if err := r.checkSync(r.recPos); err != nil {
		return err
	}
	countPos := r.pos
	count, err := r.readLen("block record count", maxSection)
	if err != nil {
		return err
	}
	if count == 0 {
		return r.corrupt(countPos, "block of 0 records")
	}
	for i, dst := range []*[]byte{&r.keyLens, &r.keys, &r.valLens, &r.vals} {
		what := [...]string{"block key lengths", "block keys", "block value lengths", "block values"}[i]
		n, err := r.readLen(what+" size", maxSection)
		if err != nil {
			return err
		}
		start := r.pos
		if r.rec, err = r.readN(r.rec, n); err != nil {
			return r.ioErr(err, start, what)
		}
		if *dst, err = r.inflate(*dst, r.rec, maxSection, start, what); err != nil {
			return err
		}
	}
	if err := checkLens(r.keyLens, len(r.keys), count); err != nil {
		return r.corrupt(r.recPos, "block keys: %v", err)
	}
	if err := checkLens(r.valLens, len(r.vals), count); err != nil {
		return r.corrupt(r.recPos, "block values: %v", err)
	}
	r.left = count
	r.kl, r.k, r.vl, r.v = 0, 0, 0, 0
	return nil
}

// checkLens checks that lens holds exactly count VInt lengths, each at
// least 0, adding up to total.
func checkLens(lens []byte, total, count int) error {
	sum, off := 0, 0
	for i := 0; i < count; i++ {
		v, n, err := decodeVInt(lens[off:])
		if err != nil {
			return fmt.Errorf("length %d of %d: %v", i, count, err)
		}
		if v < 0 || int(v) > total-sum {
			return fmt.Errorf("length %d of %d is %d, %d bytes remain", i, count, v, total-sum)
		}
		sum += int(v)
		off += n
	}
	if off != len(lens) {
		return fmt.Errorf("%d bytes after %d lengths", len(lens)-off, count)
	}
	if sum != total {
		return fmt.Errorf("lengths add up to %d, section holds %d bytes", sum, total)
	}
	return nil
}

// NextEvent returns the next Sluice event of a LongWritable/BytesWritable
// file, or io.EOF after the last. event is valid until the next call. A
// file of other classes gives ErrClassMismatch.
func (r *Reader) NextEvent() (offset int64, event []byte, err error) {
	if !r.events {
		if r.hdr.KeyClass != LongWritable || r.hdr.ValueClass != BytesWritable {
			return 0, nil, fmt.Errorf("%w: classes are %s/%s", ErrClassMismatch, r.hdr.KeyClass, r.hdr.ValueClass)
		}
		r.events = true
	}
	key, value, err := r.Next()
	if err != nil {
		return 0, nil, err
	}
	if offset, err = DecodeLong(key); err != nil {
		r.err = fmt.Errorf("%w (record at byte %d)", err, r.recPos)
		return 0, nil, r.err
	}
	if event, err = DecodeBytes(value); err != nil {
		r.err = fmt.Errorf("%w (record at byte %d)", err, r.recPos)
		return 0, nil, r.err
	}
	return offset, event, nil
}

// DecodeLong decodes a serialized LongWritable (8 bytes big-endian).
func DecodeLong(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: LongWritable of %d bytes, want 8", ErrCorrupt, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// DecodeBytes decodes a serialized BytesWritable (int32 length, bytes)
// and returns the bytes, a subslice of b.
func DecodeBytes(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: BytesWritable of %d bytes, want at least 4", ErrCorrupt, len(b))
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 || int64(n) != int64(len(b)-4) {
		return nil, fmt.Errorf("%w: BytesWritable says %d bytes, holds %d", ErrCorrupt, n, len(b)-4)
	}
	return b[4:], nil
}

// isClassName reports whether s looks like a qualified Java class name,
// so that a real but unsupported codec is told apart from damage.
func isClassName(s string) bool {
	if len(s) == 0 || len(s) > 1024 || s[0] == '.' || s[len(s)-1] == '.' || !strings.Contains(s, ".") {
		return false
	}
	for _, c := range s {
		if c != '.' && c != '_' && c != '$' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}
