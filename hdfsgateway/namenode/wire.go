package namenode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
)

// The connection preamble (see the package doc).
const (
	preambleMagic = "hrpc"
	preambleLen   = 7
	// ipcVersion is Hadoop's current IPC version (Server.CURRENT_VERSION).
	ipcVersion = 9
	// authNone is AuthProtocol.NONE: SIMPLE authentication, the user named
	// in the connection context.
	authNone = 0
	// authSASL is AuthProtocol.SASL (-33 as a signed byte).
	authSASL = 0xDF
)

// Special call ids (RpcConstants).
const (
	callIDInvalid    = -1 // answers that belong to no call (fatal setup errors)
	callIDContext    = -3 // the IpcConnectionContextProto
	callIDPing       = -4 // the client's keep-alive; never answered
	callIDSASL       = -33
	minRegularCallID = 0
)

// preamble is the connection header a client sends first.
type preamble struct {
	version      byte
	serviceClass byte
	auth         byte
}

// parsePreamble checks the 7 bytes a connection starts with.
func parsePreamble(b []byte) (preamble, error) {
	if len(b) != preambleLen || string(b[:4]) != preambleMagic {
		return preamble{}, fmt.Errorf("%w: connection does not start with %q (got %q)", ErrProtocol, preambleMagic, b)
	}
	return preamble{version: b[4], serviceClass: b[5], auth: b[6]}, nil
}

// frameStep is the first step of a frame buffer's growth.
const frameStep = 64 << 10

// readFrame reads one frame (a 4-byte big-endian length and that many
// bytes) into buf, growing it as needed, and returns the frame's bytes.
// A length above limit or below 1 is ErrProtocol.
func readFrame(r io.Reader, limit int, buf []byte) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	l := binary.BigEndian.Uint32(n[:])
	if l == 0 || int64(l) > int64(limit) {
		return nil, fmt.Errorf("%w: frame of %d bytes (limit %d)", ErrProtocol, l, limit)
	}
	// The buffer grows with the bytes that arrive, a step at a time: a
	// length alone reserves no memory, so a client that announces a large
	// frame and sends nothing costs the server nothing.
	buf = buf[:0]
	for len(buf) < int(l) {
		if cap(buf) == len(buf) {
			buf = slices.Grow(buf, min(int(l)-len(buf), max(len(buf), frameStep)))
		}
		k, err := r.Read(buf[len(buf):min(cap(buf), int(l))])
		buf = buf[:len(buf)+k]
		if err != nil && len(buf) < int(l) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%w: frame cut after %d of %d bytes: %w", ErrProtocol, len(buf), l, err)
		}
	}
	return buf, nil
}

// request is one decoded frame: its RPC header and, for a regular call,
// the method header and the request message's bytes (not yet decoded:
// the method says which type they are).
type request struct {
	rpc *common.RpcRequestHeaderProto
	// context is the connection context (callIDContext only).
	context *common.IpcConnectionContextProto
	// method is nil for the special call ids.
	method *common.RequestHeaderProto
	// param is the varint-delimited request message.
	param []byte
}

// callID is the request's call id.
func (r *request) callID() int32 { return r.rpc.GetCallId() }

// parseRequest decodes a frame. Every length inside is bounded by the
// frame itself; param aliases frame.
func parseRequest(frame []byte) (*request, error) {
	rd := bytes.NewReader(frame)
	opts := protodelim.UnmarshalOptions{MaxSize: int64(len(frame))}
	req := &request{rpc: &common.RpcRequestHeaderProto{}}
	if err := opts.UnmarshalFrom(rd, req.rpc); err != nil {
		return nil, fmt.Errorf("%w: RPC request header: %w", ErrProtocol, err)
	}
	if k := req.rpc.GetRpcKind(); k != common.RpcKindProto_RPC_PROTOCOL_BUFFER {
		return nil, fmt.Errorf("%w: RPC kind %v (only protocol buffers are served)", ErrProtocol, k)
	}
	if op := req.rpc.GetRpcOp(); op != common.RpcRequestHeaderProto_RPC_FINAL_PACKET {
		return nil, fmt.Errorf("%w: RPC operation %v", ErrProtocol, op)
	}
	switch id := req.callID(); {
	case id == callIDContext:
		req.context = &common.IpcConnectionContextProto{}
		if err := opts.UnmarshalFrom(rd, req.context); err != nil {
			return nil, fmt.Errorf("%w: connection context: %w", ErrProtocol, err)
		}
	case id == callIDPing:
	case id >= minRegularCallID:
		req.method = &common.RequestHeaderProto{}
		if err := opts.UnmarshalFrom(rd, req.method); err != nil {
			return nil, fmt.Errorf("%w: request header of call %d: %w", ErrProtocol, id, err)
		}
		// The request message stays delimited: its type depends on the
		// method (decodeParam).
		req.param = frame[len(frame)-rd.Len():]
		return req, nil
	default:
		return nil, fmt.Errorf("%w: call id %d", ErrProtocol, id)
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("%w: %d stray bytes after call %d", ErrProtocol, rd.Len(), req.callID())
	}
	return req, nil
}

// decodeParam decodes a call's delimited request message into m; it must
// fill the rest of the frame exactly.
func decodeParam(param []byte, m proto.Message) error {
	rd := bytes.NewReader(param)
	if err := (protodelim.UnmarshalOptions{MaxSize: int64(len(param))}).UnmarshalFrom(rd, m); err != nil {
		return fmt.Errorf("%w: request message: %w", ErrProtocol, err)
	}
	if rd.Len() != 0 {
		return fmt.Errorf("%w: %d stray bytes after the request message", ErrProtocol, rd.Len())
	}
	return nil
}

// writeResponse writes one response frame to buf: the length, the
// delimited header, and the delimited body when there is one (success).
func writeResponse(buf *bytes.Buffer, hdr *common.RpcResponseHeaderProto, body proto.Message) error {
	start := buf.Len()
	buf.Write([]byte{0, 0, 0, 0})
	if _, err := protodelim.MarshalTo(buf, hdr); err != nil {
		return fmt.Errorf("namenode: encode the response header: %w", err)
	}
	if body != nil {
		if _, err := protodelim.MarshalTo(buf, body); err != nil {
			return fmt.Errorf("namenode: encode %T: %w", body, err)
		}
	}
	binary.BigEndian.PutUint32(buf.Bytes()[start:], uint32(buf.Len()-start-4))
	return nil
}

// wireCallID is a call id as the response header carries it: the
// request's signed id in an unsigned field, bit for bit.
func wireCallID(id int32) uint32 { return uint32(id) }
