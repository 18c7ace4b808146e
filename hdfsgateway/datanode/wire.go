package datanode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
)

// Version is the data transfer protocol version this server speaks
// (Hadoop's DataTransferProtocol.DATA_TRANSFER_VERSION).
const Version = 28

// Op codes (Hadoop's datatransfer.Op).
const (
	OpWriteBlock             byte = 80
	OpReadBlock              byte = 81
	OpReadMetadata           byte = 82
	OpReplaceBlock           byte = 83
	OpCopyBlock              byte = 84
	OpBlockChecksum          byte = 85
	OpTransferBlock          byte = 86
	OpRequestShortCircuitFDs byte = 87
	OpReleaseShortCircuitFDs byte = 88
	OpRequestShortCircuitShm byte = 89
	OpBlockGroupChecksum     byte = 90
	OpCustom                 byte = 127
)

// Bounds of what a client may send.
const (
	// MaxRequestSize bounds an op's delimited message: a block, a token
	// and a client name need far less.
	MaxRequestSize = 64 << 10
	// maxStatusSize bounds a ClientReadStatusProto (two bytes in
	// practice).
	maxStatusSize = 64
)

// request is one decoded op. body is the op's message: an
// *hpb.OpReadBlockProto for OpReadBlock, an *hpb.OpBlockChecksumProto
// for OpBlockChecksum, the op's own message type for the refused ops.
type request struct {
	op   byte
	body proto.Message
}

// bodyOf returns an empty message of op's request type, or nil if op is
// not one this server can parse (READ_METADATA has had no message since
// Hadoop 2, and is unknown to current clients).
func bodyOf(op byte) proto.Message {
	switch op {
	case OpReadBlock:
		return &hpb.OpReadBlockProto{}
	case OpBlockChecksum:
		return &hpb.OpBlockChecksumProto{}
	case OpWriteBlock:
		return &hpb.OpWriteBlockProto{}
	case OpReplaceBlock:
		return &hpb.OpReplaceBlockProto{}
	case OpCopyBlock:
		return &hpb.OpCopyBlockProto{}
	case OpTransferBlock:
		return &hpb.OpTransferBlockProto{}
	case OpRequestShortCircuitFDs:
		return &hpb.OpRequestShortCircuitAccessProto{}
	case OpReleaseShortCircuitFDs:
		return &hpb.ReleaseShortCircuitAccessRequestProto{}
	case OpRequestShortCircuitShm:
		return &hpb.ShortCircuitShmRequestProto{}
	case OpBlockGroupChecksum:
		return &hpb.OpBlockGroupChecksumProto{}
	case OpCustom:
		return &hpb.OpCustomProto{}
	}
	return nil
}

// readRequest decodes one op from r: the version, the op code and the
// op's varint-delimited message (at most MaxRequestSize bytes). io.EOF
// means the client closed the connection between ops.
func readRequest(r *bufio.Reader) (request, error) {
	var hdr [3]byte
	if _, err := io.ReadFull(r, hdr[:1]); err != nil {
		return request{}, err // io.EOF: a clean close between ops
	}
	if _, err := io.ReadFull(r, hdr[1:]); err != nil {
		return request{}, fmt.Errorf("%w: op header: %w", ErrMalformed, unexpected(err))
	}
	if v := binary.BigEndian.Uint16(hdr[:2]); v != Version {
		return request{op: hdr[2]}, fmt.Errorf("%w: Version Mismatch (Expected: %d, Received: %d )", ErrVersion, Version, v)
	}
	req := request{op: hdr[2], body: bodyOf(hdr[2])}
	if req.body == nil {
		return req, fmt.Errorf("%w: %d", ErrUnknownOp, req.op)
	}
	opts := protodelim.UnmarshalOptions{MaxSize: MaxRequestSize}
	if err := opts.UnmarshalFrom(r, req.body); err != nil {
		var big *protodelim.SizeTooLargeError
		if errors.As(err, &big) {
			return req, fmt.Errorf("%w: op %d: a %d-byte message (at most %d)", ErrTooLarge, req.op, big.Size, MaxRequestSize)
		}
		return req, fmt.Errorf("%w: op %d: %w", ErrMalformed, req.op, unexpected(err))
	}
	return req, nil
}

// readStatus reads the ClientReadStatusProto a client sends after a
// whole block range.
func readStatus(r *bufio.Reader) (*hpb.ClientReadStatusProto, error) {
	var st hpb.ClientReadStatusProto
	opts := protodelim.UnmarshalOptions{MaxSize: maxStatusSize}
	if err := opts.UnmarshalFrom(r, &st); err != nil {
		return nil, fmt.Errorf("%w: client read status: %w", ErrMalformed, unexpected(err))
	}
	return &st, nil
}

// unexpected turns a bare io.EOF inside a message into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// packetPrefix is the size of a packet's PLEN and HLEN.
const packetPrefix = 4 + 2

// appendPacketHead appends the start of one packet (see the package doc)
// to dst: PLEN and HLEN for sumLen checksum bytes and dataLen data bytes,
// then the header. The checksums and the data follow it on the wire.
func appendPacketHead(dst []byte, offsetInBlock, seqno int64, last bool, sumLen, dataLen int) ([]byte, error) {
	hdr, err := proto.Marshal(&hpb.PacketHeaderProto{
		OffsetInBlock:     proto.Int64(offsetInBlock),
		Seqno:             proto.Int64(seqno),
		LastPacketInBlock: proto.Bool(last),
		DataLen:           proto.Int32(int32(dataLen)),
		SyncBlock:         proto.Bool(false),
	})
	if err != nil {
		return nil, fmt.Errorf("datanode: packet header: %w", err)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+sumLen+dataLen))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(hdr)))
	return append(dst, hdr...), nil
}

// appendResponse appends a varint-delimited BlockOpResponseProto.
func appendResponse(dst []byte, m *hpb.BlockOpResponseProto) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("datanode: response: %w", err)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...), nil
}
