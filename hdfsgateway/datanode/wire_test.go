package datanode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// This file holds a second, independent reader of the protocol, written
// from Hadoop's Sender, PacketReceiver and BlockReaderRemote, for the
// tests the Java client cannot drive (garbage, clients that vanish).

// op returns the bytes of a request: version, op, delimited message.
func op(code byte, m proto.Message) []byte {
	b := []byte{0, Version, code}
	body, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("a test builds a bad message: %v", err))
	}
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

func baseHeader(b blocks.Block) *hpb.BaseHeaderProto {
	return &hpb.BaseHeaderProto{
		Block: &hpb.ExtendedBlockProto{
			PoolId: proto.String(blocks.PoolID), BlockId: proto.Uint64(uint64(b.ID())),
			GenerationStamp: proto.Uint64(blocks.GenerationStamp), NumBytes: proto.Uint64(uint64(b.Len)),
		},
		Token: &common.TokenProto{
			Identifier: blocks.EncodeToken(b), Password: []byte{},
			Kind: proto.String(blocks.TokenKind), Service: proto.String(""),
		},
	}
}

func readOp(b blocks.Block, off, n int64) []byte {
	return op(OpReadBlock, &hpb.OpReadBlockProto{
		Header: &hpb.ClientOperationHeaderProto{BaseHeader: baseHeader(b), ClientName: proto.String("go-test")},
		Offset: proto.Uint64(uint64(off)), Len: proto.Uint64(uint64(n)), SendChecksums: proto.Bool(true),
	})
}

func readResponse(r *bufio.Reader) (*hpb.BlockOpResponseProto, error) {
	var m hpb.BlockOpResponseProto
	if err := (protodelim.UnmarshalOptions{MaxSize: 1 << 20}).UnmarshalFrom(r, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// goRead reads [off, off+n) of block b over c as a client does,
// checking every packet and CRC, and sends the read status.
func goRead(c net.Conn, r *bufio.Reader, b blocks.Block, off, n int64) ([]byte, error) {
	if _, err := c.Write(readOp(b, off, n)); err != nil {
		return nil, err
	}
	resp, err := readResponse(r)
	if err != nil {
		return nil, err
	}
	if resp.GetStatus() != hpb.Status_SUCCESS {
		return nil, fmt.Errorf("status %s: %s", resp.GetStatus(), resp.GetMessage())
	}
	ci := resp.GetReadOpChecksumInfo()
	if ci.GetChecksum().GetType() != hpb.ChecksumTypeProto_CHECKSUM_CRC32C || ci.GetChecksum().GetBytesPerChecksum() != 512 {
		return nil, fmt.Errorf("checksum %v", ci.GetChecksum())
	}
	start := int64(ci.GetChunkOffset())
	if start > off || start <= off-512 || start%512 != 0 {
		return nil, fmt.Errorf("chunk offset %d for offset %d", start, off)
	}
	var data []byte
	for seq := int64(0); ; seq++ {
		var pre [6]byte
		if _, err := io.ReadFull(r, pre[:]); err != nil {
			return nil, err
		}
		plen, hlen := binary.BigEndian.Uint32(pre[:4]), binary.BigEndian.Uint16(pre[4:])
		if plen < 4 || plen > 16<<20 {
			return nil, fmt.Errorf("payload length %d", plen)
		}
		buf := make([]byte, int(hlen)+int(plen)-4)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		var h hpb.PacketHeaderProto
		if err := proto.Unmarshal(buf[:hlen], &h); err != nil {
			return nil, err
		}
		if h.GetSeqno() != seq || h.GetOffsetInBlock() != start+int64(len(data)) {
			return nil, fmt.Errorf("packet %d: header %v after %d bytes", seq, &h, len(data))
		}
		payload := buf[hlen:]
		dlen := int(h.GetDataLen())
		if h.GetLastPacketInBlock() {
			if dlen != 0 || len(payload) != 0 {
				return nil, fmt.Errorf("last packet has %d bytes", len(payload))
			}
			break
		}
		nsums := (dlen + 511) / 512
		if dlen <= 0 || len(payload) != 4*nsums+dlen {
			return nil, fmt.Errorf("packet %d: %d payload bytes for %d data bytes", seq, len(payload), dlen)
		}
		sums, d := payload[:4*nsums], payload[4*nsums:]
		for i := 0; i < nsums; i++ {
			chunk := d[i*512 : min((i+1)*512, dlen)]
			if crc32.Checksum(chunk, crc32.MakeTable(crc32.Castagnoli)) != binary.BigEndian.Uint32(sums[4*i:]) {
				return nil, fmt.Errorf("packet %d: chunk %d: bad CRC", seq, i)
			}
		}
		data = append(data, d...)
	}
	if int64(len(data)) < off-start+n {
		return nil, fmt.Errorf("got %d bytes from %d, want %d from %d", len(data), start, n, off)
	}
	var st bytes.Buffer
	if _, err := protodelim.MarshalTo(&st, &hpb.ClientReadStatusProto{Status: hpb.Status_CHECKSUM_OK.Enum()}); err != nil {
		return nil, err
	}
	if _, err := c.Write(st.Bytes()); err != nil {
		return nil, err
	}
	return data[off-start : off-start+n], nil
}

func TestReadRange(t *testing.T) {
	b := blocks.Block{Path: "p", Len: 2000}
	for _, c := range []struct {
		off, n     uint64
		start, end int64
		bad        bool
	}{
		{0, 2000, 0, 2000, false},
		{0, 1, 0, 512, false},
		{511, 2, 0, 1024, false},
		{512, 512, 512, 1024, false},
		{1999, 1, 1536, 2000, false},
		{2000, 0, 1536, 2000, false},
		{100, 1 << 63, 0, 2000, false}, // negative in Java: to the end
		{0, 2001, 0, 0, true},
		{2001, 0, 0, 0, true},
		{1 << 63, 1, 0, 0, true},
		{1000, 1<<64 - 1000 + 5, 512, 2000, false},
		{1000, 1001, 0, 0, true},
	} {
		start, end, err := readRange(b, c.off, c.n)
		if c.bad {
			if !errors.Is(err, ErrBadBlock) {
				t.Errorf("readRange(%d, %d) = %d, %d, %v; want ErrBadBlock", c.off, c.n, start, end, err)
			}
			continue
		}
		if err != nil || start != c.start || end != c.end {
			t.Errorf("readRange(%d, %d) = %d, %d, %v; want %d, %d", c.off, c.n, start, end, err, c.start, c.end)
		}
	}
}

func TestReadRequestBounds(t *testing.T) {
	ok := readOp(blocks.Block{Path: "p", Len: 10}, 0, 10)
	huge := append([]byte{0, Version, OpReadBlock}, binary.AppendUvarint(nil, 1<<40)...)
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"ok", ok, nil},
		{"empty", nil, io.EOF},
		{"one byte", []byte{0}, ErrMalformed},
		{"version", []byte{0, 27, OpReadBlock}, ErrVersion},
		{"unknown op", []byte{0, Version, 99}, ErrUnknownOp},
		{"read metadata", []byte{0, Version, OpReadMetadata}, ErrUnknownOp},
		{"huge", huge, ErrTooLarge},
		{"truncated", ok[:len(ok)-1], ErrMalformed},
		{"missing fields", append([]byte{0, Version, OpReadBlock}, 0), ErrMalformed},
	} {
		_, err := readRequest(bufio.NewReader(bytes.NewReader(c.in)))
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func FuzzReadRequest(f *testing.F) {
	b := blocks.Block{Path: "s/a/segment=0/x.seq", Len: 100}
	f.Add(readOp(b, 0, 10))
	f.Add(op(OpBlockChecksum, &hpb.OpBlockChecksumProto{Header: baseHeader(b)}))
	f.Add(append(readOp(b, 0, 10), readOp(b, 5, 5)...))
	f.Add([]byte{0, Version, OpWriteBlock, 0})
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		for {
			req, err := readRequest(r)
			if err != nil {
				return
			}
			if req.body == nil || proto.Size(req.body) > MaxRequestSize {
				t.Fatalf("accepted op %d with body %v", req.op, req.body)
			}
			if req.op == OpReadBlock {
				m := req.body.(*hpb.OpReadBlockProto)
				readRange(blocks.Block{Len: 1000}, m.GetOffset(), m.GetLen())
			}
		}
	})
}

// BenchmarkReadBlock reads a whole 16 MiB block over loopback with the
// Go reader (every CRC checked on both sides).
func BenchmarkReadBlock(b *testing.B) {
	const size = 16 << 20
	st, err := fs.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p := tier2.ChunkPath("s", "a", 0, 0)
	w, err := st.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte("0123456789abcdef"), size/16))
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	s := New(view.New(st, viewtest.NewCatalog(map[string][]string{"s": {"a"}}), view.Options{}), Config{BlockSize: size})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 1<<20)
	blk := blocks.Of(p, size, size)[0]
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		if _, err := goRead(c, r, blk, 0, size); err != nil {
			b.Fatal(err)
		}
	}
}
