package namenode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
)

// rawClient speaks Hadoop IPC byte by byte, to send what real clients
// never do.
type rawClient struct {
	t  testing.TB
	c  net.Conn
	r  *bufio.Reader
	id int32
}

// ioTimeout bounds every read of a test client: a server that fails to
// answer or to close fails the test rather than hanging it.
const ioTimeout = 30 * time.Second

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(ioTimeout))
	return &rawClient{t: t, c: c, r: bufio.NewReader(c)}
}

// handshake sends the preamble and the connection context.
func (rc *rawClient) handshake() {
	rc.t.Helper()
	rc.write([]byte{'h', 'r', 'p', 'c', ipcVersion, 0, authNone})
	rc.frame(rc.rpcHeader(callIDContext), &common.IpcConnectionContextProto{
		UserInfo: &common.UserInformationProto{EffectiveUser: proto.String("tester")},
		Protocol: proto.String(clientProtocol),
	})
}

func (rc *rawClient) rpcHeader(id int32) *common.RpcRequestHeaderProto {
	return &common.RpcRequestHeaderProto{
		RpcKind:  common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:    common.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:   proto.Int32(id),
		ClientId: []byte("0123456789abcdef"),
	}
}

func (rc *rawClient) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

// frame sends the messages, each delimited, in one frame.
func (rc *rawClient) frame(ms ...proto.Message) {
	rc.t.Helper()
	var b bytes.Buffer
	for _, m := range ms {
		if _, err := protodelim.MarshalTo(&b, m); err != nil {
			rc.t.Fatal(err)
		}
	}
	rc.write(binary.BigEndian.AppendUint32(nil, uint32(b.Len())))
	rc.write(b.Bytes())
}

// call sends one call of method and returns the response header and the
// response message's bytes (delimited).
func (rc *rawClient) call(method string, req proto.Message) (*common.RpcResponseHeaderProto, []byte) {
	rc.t.Helper()
	rc.id++
	rc.frame(rc.rpcHeader(rc.id), &common.RequestHeaderProto{
		MethodName:                 proto.String(method),
		DeclaringClassProtocolName: proto.String(clientProtocol),
		ClientProtocolVersion:      proto.Uint64(1),
	}, req)
	hdr, body, err := rc.read()
	if err != nil {
		rc.t.Fatalf("%s: %v", method, err)
	}
	if int32(hdr.GetCallId()) != rc.id {
		rc.t.Fatalf("%s: answer to call %d, want %d", method, int32(hdr.GetCallId()), rc.id)
	}
	return hdr, body
}

// read reads one response frame.
func (rc *rawClient) read() (*common.RpcResponseHeaderProto, []byte, error) {
	frame, err := readFrame(rc.r, 64<<20, nil)
	if err != nil {
		return nil, nil, err
	}
	rd := bytes.NewReader(frame)
	hdr := &common.RpcResponseHeaderProto{}
	if err := protodelim.UnmarshalFrom(rd, hdr); err != nil {
		return nil, nil, err
	}
	return hdr, frame[len(frame)-rd.Len():], nil
}

// closed checks that the server closed the connection, after at most one
// answer, which it returns (nil if none).
func (rc *rawClient) closed() *common.RpcResponseHeaderProto {
	rc.t.Helper()
	hdr, _, err := rc.read()
	if err == nil {
		_, _, err = rc.read()
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
		rc.t.Fatalf("connection not closed by the server: %v", err)
	}
	return hdr
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
