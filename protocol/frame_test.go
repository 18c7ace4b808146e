package protocol_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
)

const seg = "scope/stream/3.#epoch.1"

// sampleMessages has one message of every type with every field set.
func sampleMessages() []protocol.Message {
	block := protocol.AppendEvent(protocol.AppendEvent(nil, []byte("hello")), []byte("world"))
	return []protocol.Message{
		&protocol.Hello{RequestID: 1, HighVersion: 3, LowVersion: 1},
		&protocol.ErrorReply{RequestID: 2, Code: protocol.CodeNoSuchSegment, Segment: seg, WriterID: "w", Message: "sluice: no such segment"},
		&protocol.CreateSegment{RequestID: 3, Segment: seg},
		&protocol.SegmentCreated{RequestID: 4, Segment: seg},
		&protocol.GetSegmentInfo{RequestID: 5, Segment: seg},
		&protocol.SegmentInfo{RequestID: 6, Segment: seg, StartOffset: 10, Length: 1 << 40, Sealed: true, LastModifiedUnixNano: 1700000000123456789,
			TieredOffset: 4096, UntieredBytes: 100, OldestUntieredUnixNano: 1700000000000000000, Tier2Error: "tier 2 down"},
		&protocol.GetTierStats{RequestID: 61},
		&protocol.TierStats{RequestID: 62, Containers: []protocol.ContainerTier{{Container: 3, TieredBytes: 1 << 33, Chunks: 7, Untiered: 12,
			LagNanos: 5e9, Errors: 2, LastError: "x", Stalled: true}}},
		&protocol.SetupAppend{RequestID: 7, WriterID: "writer-1", Segment: seg},
		&protocol.AppendSetup{RequestID: 8, WriterID: "writer-1", Segment: seg, LastEventNumber: protocol.NoEventNumber},
		&protocol.AppendBlock{RequestID: 9, WriterID: "writer-1", LastEventNumber: 41, EventCount: 2, ExpectedOffset: protocol.NoExpectedOffset, Data: block},
		&protocol.AppendBlock{RequestID: 10, WriterID: "w", LastEventNumber: 0, EventCount: 1, ExpectedOffset: 0, Data: nil},
		&protocol.AppendBlock{RequestID: 11, WriterID: "w", LastEventNumber: 0, EventCount: 1, ExpectedOffset: 77, Data: []byte{0xff}},
		&protocol.DataAppended{RequestID: 12, WriterID: "writer-1", EventNumber: 41, PreviousEventNumber: 39, CurrentOffset: 1234},
		&protocol.ReadSegment{RequestID: 13, Segment: seg, Offset: 99, MaxBytes: 1 << 20, WaitMillis: 500, AtEvent: true},
		&protocol.CheckBoundary{RequestID: 63, Segment: seg, Offset: 120},
		&protocol.BoundaryChecked{RequestID: 64, Segment: seg, Offset: 120},
		&protocol.GetWriterState{RequestID: 65, Segment: seg, WriterID: "writer-1/0.0"},
		&protocol.WriterState{RequestID: 66, Segment: seg, WriterID: "writer-1/0.0", LastEventNumber: 41, Sealed: true},
		&protocol.SegmentRead{RequestID: 14, Segment: seg, Offset: 99, AtTail: true, EndOfSegment: true, Data: [][]byte{[]byte("ab"), nil, []byte("c"), []byte("defg")}},
		&protocol.SegmentRead{RequestID: 15, Segment: seg, Offset: 0},
		&protocol.SegmentRead{RequestID: 16, Segment: seg, Offset: 5, Data: [][]byte{{7}}},
		&protocol.SealSegment{RequestID: 17, Segment: seg},
		&protocol.SegmentSealed{RequestID: 18, Segment: seg, Length: 5000},
		&protocol.TruncateSegment{RequestID: 19, Segment: seg, Offset: 300},
		&protocol.SegmentTruncated{RequestID: 20, Segment: seg, StartOffset: 300},
		&protocol.DeleteSegment{RequestID: 21, Segment: seg},
		&protocol.SegmentDeleted{RequestID: 22, Segment: seg},
		&protocol.MergeSegments{RequestID: 23, Target: seg, Source: seg + "#transaction.0f8fad5b-d9cb-469f-a165-70867728950e"},
		&protocol.SegmentsMerged{RequestID: 24, Target: seg, Source: "src", TargetLength: 8000},
		&protocol.GetAttributes{RequestID: 25, Segment: seg, Keys: []string{"a", "0f8fad5b-d9cb-469f-a165-70867728950e"}},
		&protocol.Attributes{RequestID: 26, Segment: seg, Values: map[string]int64{"a": -5, "b": 1 << 62}},
		&protocol.UpdateAttributes{RequestID: 27, Segment: seg, Updates: []protocol.AttributeUpdate{
			{Key: "a", Kind: protocol.Replace, Value: 1},
			{Key: "b", Kind: protocol.ReplaceIfEquals, Value: 2, Expected: protocol.NoValue},
			{Key: "c", Kind: protocol.ReplaceIfGreater, Value: 3},
			{Key: "d", Kind: protocol.Remove},
		}},
		&protocol.AttributesUpdated{RequestID: 28, Segment: seg},
		&protocol.GetSegmentRates{RequestID: 65, Segments: []string{seg, "a/b/0.#epoch.0"}},
		&protocol.SegmentRates{RequestID: 66, WindowMillis: []int64{120000, 300000, 600000, 1200000}, Rates: []protocol.SegmentRate{
			{Segment: seg, AgeMillis: 5000, Events: []float64{1.5, 2, 3, 4}, Bytes: []float64{100, 200, 300, 400.25}},
			{Segment: "a/b/0.#epoch.0", Missing: true}}},
	}
}

// normalize turns m into the form the Decoder returns: SegmentRead data as
// one slice, empty payloads nil.
func normalize(m protocol.Message) protocol.Message {
	switch p := m.(type) {
	case *protocol.SegmentRead:
		c := *p
		c.Data = nil
		if b := bytes.Join(p.Data, nil); len(b) > 0 {
			c.Data = [][]byte{b}
		}
		return &c
	case *protocol.AppendBlock:
		c := *p
		if len(c.Data) == 0 {
			c.Data = nil
		}
		return &c
	}
	return m
}

func encode(t testing.TB, msgs ...protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := protocol.NewEncoder(&buf)
	for _, m := range msgs {
		if err := enc.WriteMessage(m); err != nil {
			t.Fatalf("WriteMessage(%T): %v", m, err)
		}
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	msgs := sampleMessages()
	seen := map[protocol.Type]bool{}
	for _, m := range msgs {
		seen[m.Type()] = true
	}
	for typ := protocol.Type(0); typ < 64; typ++ {
		if !strings.HasPrefix(typ.String(), "Type(") && !seen[typ] {
			t.Errorf("type %v has no round-trip sample", typ)
		}
	}

	// One message per stream, and all of them on one stream.
	for _, m := range msgs {
		b := encode(t, m)
		if got := protocol.Type(binary.BigEndian.Uint16(b)); got != m.Type() {
			t.Errorf("%T: frame type %v, want %v", m, got, m.Type())
		}
		if flags := binary.BigEndian.Uint16(b[2:]); flags != 0 {
			t.Errorf("%T: flags %d", m, flags)
		}
		if l := binary.BigEndian.Uint32(b[4:]); int(l) != len(b)-8 {
			t.Errorf("%T: length %d, frame is %d bytes", m, l, len(b))
		}
		got, err := protocol.NewDecoder(bytes.NewReader(b)).ReadMessage()
		if err != nil {
			t.Fatalf("%T: ReadMessage: %v", m, err)
		}
		if want := normalize(m); !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
		}
	}
	dec := protocol.NewDecoder(bytes.NewReader(encode(t, msgs...)))
	for i, m := range msgs {
		got, err := dec.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := normalize(m); !reflect.DeepEqual(got, want) {
			t.Errorf("message %d:\n got %#v\nwant %#v", i, got, want)
		}
	}
	if _, err := dec.ReadMessage(); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

func TestRequestReplyInterfaces(t *testing.T) {
	for _, m := range sampleMessages() {
		_, isReq := m.(protocol.Request)
		_, isRep := m.(protocol.Reply)
		name := m.Type().String()
		wantReq := m.Type() == protocol.TypeHello || (m.Type() >= 10 && m.Type()%2 == 0)
		wantRep := m.Type() == protocol.TypeHello || m.Type() == protocol.TypeErrorReply || (m.Type() >= 10 && m.Type()%2 == 1)
		if isReq != wantReq || isRep != wantRep {
			t.Errorf("%s: request %v reply %v, want %v %v", name, isReq, isRep, wantReq, wantRep)
		}
	}
}

// The decoded payload must not alias the decoder's buffers: decoding the
// next frame must leave it unchanged.
func TestDecodedPayloadIsOwned(t *testing.T) {
	a := &protocol.AppendBlock{RequestID: 1, WriterID: "w", EventCount: 1, ExpectedOffset: -1, Data: protocol.AppendEvent(nil, []byte("first"))}
	b := &protocol.AppendBlock{RequestID: 2, WriterID: "w", EventCount: 1, ExpectedOffset: -1, Data: protocol.AppendEvent(nil, []byte("XXXXX"))}
	dec := protocol.NewDecoder(bytes.NewReader(encode(t, a, b)))
	m1, err := dec.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	if got := m1.(*protocol.AppendBlock).Data; !bytes.Equal(got, a.Data) {
		t.Fatalf("first payload changed to %q", got)
	}
}

// frame builds a raw frame with arbitrary fields.
func frame(typ, flags uint16, length, hdrLen uint32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint32(b, length)
	b = binary.BigEndian.AppendUint32(b, hdrLen)
	return append(b, rest...)
}

func TestTruncatedFrames(t *testing.T) {
	valid := encode(t, &protocol.AppendBlock{RequestID: 9, WriterID: "w", LastEventNumber: 3, EventCount: 1, ExpectedOffset: -1, Data: protocol.AppendEvent(nil, []byte("payload"))})
	for n := 0; n < len(valid); n++ {
		_, err := protocol.NewDecoder(bytes.NewReader(valid[:n])).ReadMessage()
		if n == 0 {
			if err != io.EOF {
				t.Errorf("empty stream: %v, want io.EOF", err)
			}
			continue
		}
		if !errors.Is(err, protocol.ErrMalformedFrame) || !errors.Is(err, io.ErrUnexpectedEOF) || !protocol.IsFatal(err) {
			t.Errorf("prefix %d/%d: %v, want fatal ErrMalformedFrame wrapping io.ErrUnexpectedEOF", n, len(valid), err)
		}
	}
}

func TestBadFrames(t *testing.T) {
	hdr := []byte{0x81, 0xa2, 'i', 'd', 0x05} // {"id": 5}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"flags", frame(uint16(protocol.TypeHello), 1, uint32(4+len(hdr)), uint32(len(hdr)), hdr), protocol.ErrMalformedFrame},
		{"length 0", frame(uint16(protocol.TypeHello), 0, 0, 0, nil), protocol.ErrMalformedFrame},
		{"length 3", frame(uint16(protocol.TypeHello), 0, 3, 0, nil), protocol.ErrMalformedFrame},
		{"hdrLen too big", frame(uint16(protocol.TypeHello), 0, uint32(4+len(hdr)), uint32(len(hdr)+1), hdr), protocol.ErrMalformedFrame},
		{"hdrLen huge", frame(uint16(protocol.TypeHello), 0, 4, 0xffffffff, nil), protocol.ErrMalformedFrame},
		{"too large", frame(uint16(protocol.TypeAppendBlock), 0, protocol.MaxFrameSize+1, 0, nil), protocol.ErrFrameTooLarge},
		{"max uint32", frame(uint16(protocol.TypeAppendBlock), 0, 0xffffffff, 0, nil), protocol.ErrFrameTooLarge},
	}
	for _, tt := range tests {
		dec := protocol.NewDecoder(bytes.NewReader(append(tt.in, encode(t, &protocol.Hello{RequestID: 1, HighVersion: 1, LowVersion: 1})...)))
		m, err := dec.ReadMessage()
		if m != nil || !errors.Is(err, tt.want) || !protocol.IsFatal(err) {
			t.Errorf("%s: (%v, %v), want fatal %v", tt.name, m, err, tt.want)
		}
		// Fatal errors are sticky: the valid frame behind is never read.
		if _, err2 := dec.ReadMessage(); err2 != err {
			t.Errorf("%s: after fatal error got %v", tt.name, err2)
		}
	}
}

// failingReader returns data, then fails the test if read again.
type failingReader struct {
	t    *testing.T
	data []byte
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		r.t.Errorf("decoder read past the frame header")
		return 0, errors.New("read past header")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestFrameTooLargeReadsAndAllocatesNothing(t *testing.T) {
	hdr := frame(uint16(protocol.TypeAppendBlock), 0, protocol.MaxFrameSize+1, 0, nil)[:8]
	_, err := protocol.NewDecoder(&failingReader{t: t, data: hdr}).ReadMessage()
	if !errors.Is(err, protocol.ErrFrameTooLarge) {
		t.Fatalf("got %v, want ErrFrameTooLarge", err)
	}
	// The only sizeable allocation is the decoder's own read buffer.
	var ms1, ms2 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	for i := 0; i < 10; i++ {
		_, _ = protocol.NewDecoder(bytes.NewReader(hdr)).ReadMessage()
	}
	runtime.ReadMemStats(&ms2)
	if d := ms2.TotalAlloc - ms1.TotalAlloc; d > 10*(128<<10) {
		t.Errorf("10 oversized frames allocated %d bytes", d)
	}
}

func TestNonFatalErrorsKeepStream(t *testing.T) {
	next := encode(t, &protocol.SealSegment{RequestID: 77, Segment: seg})
	tests := []struct {
		name  string
		in    []byte
		want  error
		typ   protocol.Type
		reqID int64
	}{
		{"unknown type with header and payload", frame(999, 0, 4+5+3, 5, []byte{0x81, 0xa2, 'i', 'd', 0x2a, 1, 2, 3}), protocol.ErrUnknownType, 999, 42},
		{"unknown type, empty body", frame(1000, 0, 4, 0, nil), protocol.ErrUnknownType, 1000, -1},
		{"garbage msgpack", frame(uint16(protocol.TypeSealSegment), 0, 4+3, 3, []byte{0xc1, 0xc1, 0xc1}), protocol.ErrMalformedMessage, protocol.TypeSealSegment, -1},
		{"empty header", frame(uint16(protocol.TypeSealSegment), 0, 4, 0, nil), protocol.ErrMalformedMessage, protocol.TypeSealSegment, -1},
		{"wrong field type, id recovered", frame(uint16(protocol.TypeSealSegment), 0, 4+8, 8, []byte{0x82, 0xa2, 'i', 'd', 0x07, 0xa1, 's', 0x05}), protocol.ErrMalformedMessage, protocol.TypeSealSegment, 7},
		{"trailing header bytes", frame(uint16(protocol.TypeSealSegment), 0, 4+6, 6, []byte{0x81, 0xa2, 'i', 'd', 0x07, 0xc0}), protocol.ErrMalformedMessage, protocol.TypeSealSegment, 7},
		{"payload on a type without one", frame(uint16(protocol.TypeSealSegment), 0, 4+5+2, 5, []byte{0x81, 0xa2, 'i', 'd', 0x08, 9, 9}), protocol.ErrMalformedMessage, protocol.TypeSealSegment, 8},
	}
	for _, tt := range tests {
		dec := protocol.NewDecoder(bytes.NewReader(append(append([]byte{}, tt.in...), next...)))
		m, err := dec.ReadMessage()
		var de *protocol.DecodeError
		if m != nil || !errors.Is(err, tt.want) || protocol.IsFatal(err) || !errors.As(err, &de) {
			t.Errorf("%s: (%v, %v), want non-fatal %v", tt.name, m, err, tt.want)
			continue
		}
		if de.Type != tt.typ || de.RequestID != tt.reqID {
			t.Errorf("%s: type %v request %d, want %v %d", tt.name, de.Type, de.RequestID, tt.typ, tt.reqID)
		}
		m, err = dec.ReadMessage()
		if err != nil {
			t.Errorf("%s: next frame: %v", tt.name, err)
		} else if s, ok := m.(*protocol.SealSegment); !ok || s.RequestID != 77 || s.Segment != seg {
			t.Errorf("%s: next frame decoded as %#v", tt.name, m)
		}
	}
}

type errWriter struct{ err error }

func (w errWriter) Write(p []byte) (int, error) { return 0, w.err }

func TestEncoderErrors(t *testing.T) {
	var buf bytes.Buffer
	enc := protocol.NewEncoder(&buf)
	big := &protocol.SegmentRead{RequestID: 1, Segment: seg, Data: [][]byte{make([]byte, protocol.MaxFrameSize/2), make([]byte, protocol.MaxFrameSize/2)}}
	if err := enc.WriteMessage(big); !errors.Is(err, protocol.ErrFrameTooLarge) {
		t.Fatalf("oversized frame: %v", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("oversized frame wrote %d bytes", buf.Len())
	}
	// The encoder is still usable.
	if err := enc.WriteMessage(&protocol.Hello{RequestID: 1, HighVersion: 1, LowVersion: 1}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := protocol.NewEncoder(errWriter{boom}).WriteMessage(sampleMessages()[8]); !errors.Is(err, boom) {
		t.Fatalf("writer error: %v", err)
	}
}

// A reader's error in the middle of a frame are fatal and keep the cause.
func TestReaderErrorMidFrame(t *testing.T) {
	boom := errors.New("boom")
	b := encode(t, &protocol.SealSegment{RequestID: 1, Segment: seg})
	_, err := protocol.NewDecoder(io.MultiReader(bytes.NewReader(b[:10]), errReader{boom})).ReadMessage()
	if !errors.Is(err, boom) || !protocol.IsFatal(err) {
		t.Fatalf("got %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestTypeString(t *testing.T) {
	if s := protocol.TypeAppendBlock.String(); s != "AppendBlock" {
		t.Errorf("got %q", s)
	}
	if s := protocol.Type(999).String(); s != "Type(999)" {
		t.Errorf("got %q", s)
	}
}

func BenchmarkEncodeAppendBlock(b *testing.B) {
	m := &protocol.AppendBlock{RequestID: 1, WriterID: "0f8fad5b-d9cb-469f-a165-70867728950e", LastEventNumber: 1000, EventCount: 64, ExpectedOffset: -1, Data: make([]byte, 64<<10)}
	enc := protocol.NewEncoder(io.Discard)
	b.SetBytes(int64(len(m.Data)))
	b.ReportAllocs()
	for b.Loop() {
		m.RequestID++
		if err := enc.WriteMessage(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAppendBlock(b *testing.B) {
	m := &protocol.AppendBlock{RequestID: 1, WriterID: "0f8fad5b-d9cb-469f-a165-70867728950e", LastEventNumber: 1000, EventCount: 64, ExpectedOffset: -1, Data: make([]byte, 64<<10)}
	frame := encode(b, m)
	var r bytes.Reader
	dec := protocol.NewDecoder(&r)
	b.SetBytes(int64(len(m.Data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frame)
		if _, err := dec.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

// Payloads above 1 MiB take the grow-as-bytes-arrive path.
func TestLargePayload(t *testing.T) {
	data := make([]byte, 5<<20+3)
	for i := range data {
		data[i] = byte(i * 7)
	}
	m := &protocol.SegmentRead{RequestID: 1, Segment: seg, Data: [][]byte{data[:1<<20], data[1<<20 : 3<<20], data[3<<20:]}}
	b := encode(t, m)
	got, err := protocol.NewDecoder(bytes.NewReader(b)).ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if d := got.(*protocol.SegmentRead).Data; len(d) != 1 || !bytes.Equal(d[0], data) {
		t.Fatal("large payload differs")
	}
	for _, cut := range []int{len(b) - 1, len(b) - (2 << 20), 100 + 1<<20} {
		_, err := protocol.NewDecoder(bytes.NewReader(b[:cut])).ReadMessage()
		if !errors.Is(err, protocol.ErrMalformedFrame) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}
