package protocol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

const (
	// FrameHeaderSize is the fixed part of a frame: type, flags, length.
	FrameHeaderSize = 8
	// MaxFrameSize is the largest accepted frame length field (the bytes
	// after the 8-byte header).
	MaxFrameSize = 16 << 20

	hdrLenSize = 4
	prefixSize = FrameHeaderSize + hdrLenSize

	// maxKeptHeaderBuf bounds the msgpack scratch buffer a Decoder keeps
	// between frames; an occasional bigger header gets a temporary one.
	maxKeptHeaderBuf = 64 << 10
	// payloadChunk is the largest payload allocated before its bytes arrive.
	payloadChunk = 1 << 20
)

// DecodeError is the error of Decoder.ReadMessage for a frame that could
// not be decoded. Err wraps one of ErrMalformedFrame, ErrFrameTooLarge
// (Fatal: the stream can no longer be trusted, close the connection),
// ErrUnknownType or ErrMalformedMessage (not fatal: the frame was consumed
// and the next ReadMessage reads the next frame).
type DecodeError struct {
	Type      Type  // the frame's type, 0 when the header itself was short
	RequestID int64 // recovered from the msgpack header, -1 when unknown
	Fatal     bool
	Err       error
}

func (e *DecodeError) Error() string {
	s := "sluice: decode " + e.Type.String()
	if e.RequestID != -1 {
		s += " (request " + strconv.FormatInt(e.RequestID, 10) + ")"
	}
	return s + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// IsFatal reports whether err, returned by Decoder.ReadMessage, means the
// connection must be closed: every error is, except a non-fatal
// *DecodeError (unknown type, malformed message). io.EOF is fatal too: the
// peer is gone.
func IsFatal(err error) bool {
	if err == nil {
		return false
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Fatal
	}
	return !errors.Is(err, ErrUnknownType) && !errors.Is(err, ErrMalformedMessage)
}

// Encoder writes frames to an io.Writer. Header bytes go into a reused
// buffer; payload bytes (AppendBlock.Data, SegmentRead.Data) are handed to
// the writer as they are, header and payload in one net.Buffers write
// (one writev on a *net.TCPConn). An Encoder is not safe for concurrent
// use: callers serialize WriteMessage calls.
type Encoder struct {
	w    io.Writer
	buf  bytes.Buffer // frame prefix + msgpack header
	enc  *msgpack.Encoder
	vec  [][]byte // backing store of bufs, cleared after each write
	bufs net.Buffers
}

// NewEncoder returns an Encoder writing to w. Wrap w in a bufio.Writer to
// batch small frames (and Flush it); a net.Conn gets writev directly.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: w}
	e.enc = msgpack.NewEncoder(&e.buf)
	e.enc.UseCompactInts(true)
	return e
}

// WriteMessage writes m as one frame. It returns an error wrapping
// ErrFrameTooLarge, without writing anything, if the frame would exceed
// MaxFrameSize; any other error comes from the writer, after which the
// stream is broken (a frame may be half written).
func (e *Encoder) WriteMessage(m Message) error {
	var payload []byte
	var payloads [][]byte
	switch p := m.(type) {
	case *AppendBlock:
		payload = p.Data
	case *SegmentRead:
		payloads = p.Data
	}

	e.buf.Reset()
	var prefix [prefixSize]byte
	e.buf.Write(prefix[:])
	if err := e.enc.Encode(m); err != nil {
		return fmt.Errorf("sluice: encode %s: %w", m.Type(), err)
	}
	hdr := e.buf.Bytes()
	hdrLen := len(hdr) - prefixSize
	total := uint64(hdrLenSize + hdrLen + len(payload))
	for _, p := range payloads {
		total += uint64(len(p))
	}
	if total > MaxFrameSize {
		return fmt.Errorf("%w: %s frame of %d bytes, limit %d", ErrFrameTooLarge, m.Type(), total, MaxFrameSize)
	}
	binary.BigEndian.PutUint16(hdr[0:], uint16(m.Type()))
	binary.BigEndian.PutUint16(hdr[2:], 0)
	binary.BigEndian.PutUint32(hdr[4:], uint32(total))
	binary.BigEndian.PutUint32(hdr[8:], uint32(hdrLen))

	if len(payload) == 0 && len(payloads) == 0 {
		_, err := e.w.Write(hdr)
		return err
	}
	e.vec = append(e.vec[:0], hdr)
	if len(payload) > 0 {
		e.vec = append(e.vec, payload)
	}
	for _, p := range payloads {
		if len(p) > 0 {
			e.vec = append(e.vec, p)
		}
	}
	e.bufs = e.vec
	_, err := e.bufs.WriteTo(e.w)
	clear(e.vec) // do not keep callers' payloads alive
	e.bufs = nil
	return err
}

// Budget bounds the memory Decoders hold for frames. A Decoder given one
// (SetBudget) acquires, once a frame's 12-byte prefix has been read and
// checked and before it reads the rest, every byte it will allocate for
// the frame: the payload of an AppendBlock or SegmentRead, and a msgpack
// header too big for its scratch buffer. The frame's reservation is thus
// taken whole or not at all, so Decoders that share a Budget never wait
// for each other while holding part of a frame; a Budget of at least
// MaxFrameSize always lets one frame through.
//
// The header's bytes are released once the header is decoded, and every
// byte of a frame that fails to decode is released before ReadMessage
// returns. The payload's bytes go to the caller with the message
// (PayloadSize says how many): the caller releases them when it is done
// with the payload.
type Budget interface {
	// Acquire blocks until n bytes are granted (n <= MaxFrameSize). An
	// error (the caller gave up waiting) ends the stream: ReadMessage
	// returns it, wrapped in a fatal *DecodeError, and holds nothing.
	Acquire(n int) error
	// Release gives back n bytes acquired before.
	Release(n int)
}

// PayloadSize returns the payload bytes of a message the Decoder
// returned: what a caller that gave the Decoder a Budget releases once it
// is done with the payload. Zero for messages without payload.
func PayloadSize(m Message) int {
	switch p := m.(type) {
	case *AppendBlock:
		return len(p.Data)
	case *SegmentRead:
		n := 0
		for _, d := range p.Data {
			n += len(d)
		}
		return n
	}
	return 0
}

// Decoder reads frames from an io.Reader through its own bufio.Reader. It
// is not safe for concurrent use. After a fatal error (see IsFatal) every
// further ReadMessage returns the same error.
type Decoder struct {
	r      *bufio.Reader
	hbuf   []byte
	hr     bytes.Reader
	dec    *msgpack.Decoder
	budget Budget // nil: none
	err    error  // sticky fatal error
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	d := &Decoder{r: bufio.NewReaderSize(r, 64<<10)}
	d.dec = msgpack.NewDecoder(&d.hr)
	return d
}

// SetBudget makes the Decoder acquire from b the bytes it allocates for
// each frame before reading them (see Budget). Call it before the first
// ReadMessage.
func (d *Decoder) SetBudget(b Budget) { d.budget = b }

// ReadMessage reads and decodes the next frame. It returns io.EOF if the
// stream ends cleanly between frames; otherwise errors are *DecodeError
// (classify with IsFatal and errors.Is) or the reader's own error. A
// truncated frame is a fatal ErrMalformedFrame wrapping io.ErrUnexpectedEOF.
//
// The payload of AppendBlock and SegmentRead is a fresh allocation that the
// caller owns. Nothing is allocated for it before the header has been
// checked against MaxFrameSize (and, with a Budget, acquired from it), and
// beyond 1 MiB it grows only as bytes arrive.
func (d *Decoder) ReadMessage() (Message, error) {
	if d.err != nil {
		return nil, d.err
	}
	m, err := d.readMessage()
	if err != nil && IsFatal(err) && !errors.Is(err, io.EOF) {
		d.err = err
	}
	return m, err
}

func (d *Decoder) readMessage() (Message, error) {
	var prefix [prefixSize]byte
	if _, err := io.ReadFull(d.r, prefix[:FrameHeaderSize]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, d.fatalIO(0, err)
	}
	t := Type(binary.BigEndian.Uint16(prefix[0:]))
	flags := binary.BigEndian.Uint16(prefix[2:])
	length := binary.BigEndian.Uint32(prefix[4:])
	switch {
	case flags != 0:
		return nil, fatal(t, fmt.Errorf("%w: flags %#04x, want 0", ErrMalformedFrame, flags))
	case length < hdrLenSize:
		return nil, fatal(t, fmt.Errorf("%w: length %d < %d", ErrMalformedFrame, length, hdrLenSize))
	case length > MaxFrameSize:
		return nil, fatal(t, fmt.Errorf("%w: length %d, limit %d", ErrFrameTooLarge, length, MaxFrameSize))
	}
	if _, err := io.ReadFull(d.r, prefix[FrameHeaderSize:]); err != nil {
		return nil, d.fatalIO(t, err)
	}
	hdrLen := binary.BigEndian.Uint32(prefix[FrameHeaderSize:])
	if hdrLen > length-hdrLenSize {
		return nil, fatal(t, fmt.Errorf("%w: header length %d > body %d", ErrMalformedFrame, hdrLen, length-hdrLenSize))
	}
	payloadLen := int(length - hdrLenSize - hdrLen)
	m := newMessage(t)

	// What this frame will allocate, acquired whole before reading on.
	var hdrHeld, payloadHeld int
	if d.budget != nil {
		if hdrLen > maxKeptHeaderBuf {
			hdrHeld = int(hdrLen)
		}
		if m != nil && (t == TypeAppendBlock || t == TypeSegmentRead) {
			payloadHeld = payloadLen
		}
		if hdrHeld+payloadHeld > 0 {
			if err := d.budget.Acquire(hdrHeld + payloadHeld); err != nil {
				return nil, fatal(t, err)
			}
			// Everything not handed to the caller goes back on return.
			defer func() {
				if n := hdrHeld + payloadHeld; n > 0 {
					d.budget.Release(n)
				}
			}()
		}
	}

	hdr, err := d.readHeader(int(hdrLen))
	if err != nil {
		return nil, d.fatalIO(t, err)
	}

	if m == nil {
		if _, err := d.r.Discard(payloadLen); err != nil {
			return nil, d.fatalIO(t, err)
		}
		return nil, &DecodeError{Type: t, RequestID: d.probeRequestID(hdr), Err: ErrUnknownType}
	}

	var payload []byte
	if payloadLen > 0 {
		switch t {
		case TypeAppendBlock, TypeSegmentRead:
			var err error
			if payload, err = d.readPayload(payloadLen); err != nil {
				return nil, d.fatalIO(t, err)
			}
		default:
			if _, err := d.r.Discard(payloadLen); err != nil {
				return nil, d.fatalIO(t, err)
			}
			return nil, &DecodeError{Type: t, RequestID: d.probeRequestID(hdr),
				Err: fmt.Errorf("%w: %d payload bytes on a message without payload", ErrMalformedMessage, payloadLen)}
		}
	}

	d.hr.Reset(hdr)
	d.dec.ResetReader(&d.hr)
	if err := d.dec.Decode(m); err != nil {
		return nil, &DecodeError{Type: t, RequestID: d.probeRequestID(hdr), Err: fmt.Errorf("%w: %v", ErrMalformedMessage, err)}
	}
	if d.hr.Len() != 0 {
		return nil, &DecodeError{Type: t, RequestID: d.probeRequestID(hdr),
			Err: fmt.Errorf("%w: %d bytes after the msgpack header", ErrMalformedMessage, d.hr.Len())}
	}
	switch p := m.(type) {
	case *AppendBlock:
		p.Data = payload
	case *SegmentRead:
		if payload != nil {
			p.Data = [][]byte{payload}
		}
	}
	payloadHeld = 0 // the caller's now
	return m, nil
}

// readHeader reads n header bytes into the scratch buffer. The slice is
// valid until the next call. A header too big for the scratch buffer gets
// a temporary one that, like a payload, grows only as bytes arrive.
func (d *Decoder) readHeader(n int) ([]byte, error) {
	if n > maxKeptHeaderBuf {
		return d.readPayload(n)
	}
	if cap(d.hbuf) < n {
		d.hbuf = make([]byte, n, max(n, 512))
	}
	b := d.hbuf[:n]
	_, err := io.ReadFull(d.r, b)
	return b, err
}

// readPayload reads n payload bytes into a fresh slice. Up to
// payloadChunk it allocates n at once; beyond, the slice grows by doubling
// as bytes arrive, so a peer that announces 16 MiB and sends less makes
// the node allocate at most twice what it sent.
func (d *Decoder) readPayload(n int) ([]byte, error) {
	if n <= payloadChunk {
		b := make([]byte, n)
		_, err := io.ReadFull(d.r, b)
		return b, err
	}
	b := make([]byte, 0, payloadChunk)
	for len(b) < n {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*cap(b), n))
			copy(nb, b)
			b = nb
		}
		m, err := io.ReadFull(d.r, b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// requestIDProbe decodes only the request id of any message (every message
// stores it under "id"); other fields are skipped.
type requestIDProbe struct {
	RequestID int64 `msgpack:"id"`
}

func (d *Decoder) probeRequestID(hdr []byte) int64 {
	var p requestIDProbe
	p.RequestID = -1
	d.hr.Reset(hdr)
	d.dec.ResetReader(&d.hr)
	if err := d.dec.Decode(&p); err != nil {
		return -1
	}
	return p.RequestID
}

func fatal(t Type, err error) error {
	return &DecodeError{Type: t, RequestID: -1, Fatal: true, Err: err}
}

// fatalIO classifies a read error inside a frame: EOF means a truncated
// frame (ErrMalformedFrame wrapping io.ErrUnexpectedEOF); anything else is
// the reader's error, wrapped so that it still matches errors.Is.
func (d *Decoder) fatalIO(t Type, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fatal(t, fmt.Errorf("%w: %w", ErrMalformedFrame, io.ErrUnexpectedEOF))
	}
	return fatal(t, err)
}
