package seqfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Class names of the Writables Sluice uses, and the one codec supported.
const (
	LongWritable  = "org.apache.hadoop.io.LongWritable"
	BytesWritable = "org.apache.hadoop.io.BytesWritable"
	DefaultCodec  = "org.apache.hadoop.io.compress.DefaultCodec"
)

// Format constants shared with Hadoop.
const (
	// Version is the SequenceFile format version written and read.
	Version = 6
	// SyncInterval is Hadoop's SequenceFile.SYNC_INTERVAL: the writer
	// emits a sync escape before a record once the file position is this
	// many bytes past the last one.
	SyncInterval = 100 * 1024
	// DefaultBlockSize is the uncompressed bytes of keys plus values per
	// block, Hadoop's io.seqfile.compress.blocksize default.
	DefaultBlockSize = 1000000
	// MaxRecordSize bounds one record (key plus value, as stored) and
	// WriterOptions.BlockSize. Sluice events are at most 8 MiB.
	MaxRecordSize = 64 << 20

	syncSize   = 16
	syncEscape = -1
)

// Compression selects how a file is compressed.
type Compression int

// Compression kinds; the codec of Record and Block is always DefaultCodec.
const (
	None   Compression = iota // records stored as they are
	Record                    // each value a zlib stream, keys plain
	Block                     // blocks of records, keys and values zlib
)

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Record:
		return "record"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// Errors. Reader errors caused by the bytes of the file wrap ErrCorrupt.
var (
	ErrCorrupt       = errors.New("seqfile: corrupt")
	ErrUnsupported   = errors.New("seqfile: unsupported codec")
	ErrClassMismatch = errors.New("seqfile: not a LongWritable/BytesWritable file")
	ErrTooLarge      = errors.New("seqfile: record too large")
	ErrClosed        = errors.New("seqfile: writer closed")
)

// WriterOptions describe the file a Writer produces.
type WriterOptions struct {
	// KeyClass and ValueClass are the Java class names written in the
	// header, e.g. LongWritable and BytesWritable. Both are required.
	KeyClass, ValueClass string
	// Compression is None, Record or Block (codec DefaultCodec).
	Compression Compression
	// BlockSize is the uncompressed bytes of keys plus values at which a
	// Block writer closes a block; 0 means DefaultBlockSize. At most
	// MaxRecordSize.
	BlockSize int
	// Metadata is written to the header sorted by name.
	Metadata map[string]string
	// Sync is the file's sync marker; all zero means a random one.
	Sync [16]byte
}

// Writer writes one SequenceFile. It is not safe for concurrent use. The
// first write error is sticky: every later call returns it.
type Writer struct {
	bw      *bufio.Writer
	opts    WriterOptions
	pos     int64 // bytes handed to bw: the file size so far
	lastSyn int64 // position just after the last sync escape (0 at start)
	err     error
	closed  bool

	scratch [32]byte
	kv      [12]byte // AppendEvent's key and value prefix

	// Block state.
	nrec                   int
	keyLens, keys, valLens []byte
	vals                   []byte
	zbuf                   bytes.Buffer
	zw                     *zlib.Writer
	blockHdr               []byte
}

// NewWriter writes the header to w and returns a Writer for the records.
// Output is buffered; Close flushes it (it does not close w).
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	if opts.KeyClass == "" || opts.ValueClass == "" {
		return nil, errors.New("seqfile: key and value class are required")
	}
	switch opts.Compression {
	case None, Record, Block:
	default:
		return nil, fmt.Errorf("seqfile: unknown compression %d", int(opts.Compression))
	}
	if opts.BlockSize == 0 {
		opts.BlockSize = DefaultBlockSize
	}
	if opts.BlockSize < 0 || opts.BlockSize > MaxRecordSize {
		return nil, fmt.Errorf("seqfile: block size %d out of range 1..%d", opts.BlockSize, MaxRecordSize)
	}
	if opts.Sync == ([16]byte{}) {
		if _, err := rand.Read(opts.Sync[:]); err != nil {
			return nil, fmt.Errorf("seqfile: sync marker: %w", err)
		}
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, 64<<10), opts: opts}
	if opts.Compression != None {
		wr.zw = zlib.NewWriter(&wr.zbuf)
	}
	wr.write(wr.header())
	if wr.err != nil {
		return nil, wr.err
	}
	return wr, nil
}

func (w *Writer) header() []byte {
	o := w.opts
	h := []byte{'S', 'E', 'Q', Version}
	h = appendText(h, o.KeyClass)
	h = appendText(h, o.ValueClass)
	h = append(h, boolByte(o.Compression != None), boolByte(o.Compression == Block))
	if o.Compression != None {
		h = appendText(h, DefaultCodec)
	}
	names := make([]string, 0, len(o.Metadata))
	for k := range o.Metadata {
		names = append(names, k)
	}
	sort.Strings(names)
	h = binary.BigEndian.AppendUint32(h, uint32(len(names)))
	for _, k := range names {
		h = appendText(h, k)
		h = appendText(h, o.Metadata[k])
	}
	return append(h, o.Sync[:]...)
}

func appendText(b []byte, s string) []byte {
	b = appendVLong(b, int64(len(s)))
	return append(b, s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// Written returns the bytes of the file so far: what has been handed to
// the underlying writer plus what Close will still flush from the buffer,
// not counting records held for an unfinished block.
func (w *Writer) Written() int64 { return w.pos }

// Boundary reports whether a reader that knows the header may start
// reading records at the file's current end (Written): always for
// uncompressed and record-compressed files, and between blocks (no records
// held) for block-compressed ones. What follows may be a sync escape.
// Recording these positions lets a reader read part of a file
// (EventsInPlaceAt) without scanning for a sync marker.
func (w *Writer) Boundary() (int64, bool) {
	return w.pos, w.opts.Compression != Block || w.nrec == 0
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.pos += int64(n)
	if err != nil {
		w.err = fmt.Errorf("seqfile: write: %w", err)
	}
}

func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// writeSync writes a sync escape unless one ends exactly here.
func (w *Writer) writeSync() {
	if w.lastSyn == w.pos {
		return
	}
	b := binary.BigEndian.AppendUint32(w.scratch[:0], uint32(0xffffffff))
	b = append(b, w.opts.Sync[:]...)
	w.write(b)
	w.lastSyn = w.pos
}

// Append adds one record of raw serialized key and value bytes (for
// example an 8-byte LongWritable and a length-prefixed BytesWritable).
func (w *Writer) Append(key, value []byte) error {
	return w.append(key, nil, value)
}

// AppendEvent adds one Sluice event: a LongWritable key holding offset
// and a BytesWritable value holding event. It does not allocate once the
// writer's buffers have grown to the block (or record) size.
func (w *Writer) AppendEvent(offset int64, event []byte) error {
	if len(event) > MaxRecordSize {
		return fmt.Errorf("%w: event of %d bytes", ErrTooLarge, len(event))
	}
	binary.BigEndian.PutUint64(w.kv[:8], uint64(offset))
	binary.BigEndian.PutUint32(w.kv[8:], uint32(len(event)))
	return w.append(w.kv[:8], w.kv[8:], event)
}

// append adds a record whose value is valPrefix followed by val.
func (w *Writer) append(key, valPrefix, val []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	vlen := len(valPrefix) + len(val)
	if len(key)+vlen > MaxRecordSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(key)+vlen, MaxRecordSize)
	}
	switch w.opts.Compression {
	case None:
		if w.pos >= w.lastSyn+SyncInterval {
			w.writeSync()
		}
		b := binary.BigEndian.AppendUint32(w.scratch[:0], uint32(len(key)+vlen))
		b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
		w.write(b)
		w.write(key)
		w.write(valPrefix)
		w.write(val)
	case Record:
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
		_, _ = w.zw.Write(valPrefix) // writes to a bytes.Buffer cannot fail
		_, _ = w.zw.Write(val)
		_ = w.zw.Close()
		if len(key)+w.zbuf.Len() > MaxRecordSize {
			return fmt.Errorf("%w: %d bytes compressed, limit %d", ErrTooLarge, len(key)+w.zbuf.Len(), MaxRecordSize)
		}
		if w.pos >= w.lastSyn+SyncInterval {
			w.writeSync()
		}
		b := binary.BigEndian.AppendUint32(w.scratch[:0], uint32(len(key)+w.zbuf.Len()))
		b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
		w.write(b)
		w.write(key)
		w.write(w.zbuf.Bytes())
	case Block:
		w.keyLens = appendVLong(w.keyLens, int64(len(key)))
		w.keys = append(w.keys, key...)
		w.valLens = appendVLong(w.valLens, int64(vlen))
		w.vals = append(w.vals, valPrefix...)
		w.vals = append(w.vals, val...)
		w.nrec++
		if len(w.keys)+len(w.vals) >= w.opts.BlockSize {
			w.flushBlock()
		}
	}
	return w.err
}

// flushBlock writes the buffered records as one block.
func (w *Writer) flushBlock() {
	if w.nrec == 0 {
		return
	}
	w.writeSync()
	w.blockHdr = appendVLong(w.blockHdr[:0], int64(w.nrec))
	w.write(w.blockHdr)
	for _, sec := range [][]byte{w.keyLens, w.keys, w.valLens, w.vals} {
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
		_, _ = w.zw.Write(sec)
		_ = w.zw.Close()
		w.blockHdr = appendVLong(w.blockHdr[:0], int64(w.zbuf.Len()))
		w.write(w.blockHdr)
		w.write(w.zbuf.Bytes())
	}
	w.nrec = 0
	w.keyLens, w.keys, w.valLens, w.vals = w.keyLens[:0], w.keys[:0], w.valLens[:0], w.vals[:0]
}

// Close writes the last block, if any, and flushes the buffered output.
// It does not close the underlying writer. After Close, Append fails.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err == nil && w.opts.Compression == Block {
		w.flushBlock()
	}
	w.closed = true
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("seqfile: write: %w", err)
		}
	}
	return w.err
}
