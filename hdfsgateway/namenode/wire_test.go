package namenode

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
)

// frameOf returns the frame body of the delimited messages.
func frameOf(t testing.TB, ms ...proto.Message) []byte {
	var b bytes.Buffer
	for _, m := range ms {
		if _, err := protodelim.MarshalTo(&b, m); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func callFrame(t testing.TB, id int32, method string, req proto.Message) []byte {
	return frameOf(t, &common.RpcRequestHeaderProto{
		RpcKind: common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), RpcOp: common.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId: proto.Int32(id), ClientId: make([]byte, 16),
	}, &common.RequestHeaderProto{MethodName: proto.String(method), DeclaringClassProtocolName: proto.String(clientProtocol), ClientProtocolVersion: proto.Uint64(1)}, req)
}

func TestParseRequest(t *testing.T) {
	req, err := parseRequest(callFrame(t, 7, "getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s")}))
	if err != nil {
		t.Fatal(err)
	}
	var fi hpb.GetFileInfoRequestProto
	if req.callID() != 7 || req.method.GetMethodName() != "getFileInfo" || decodeParam(req.param, &fi) != nil || fi.GetSrc() != "/s" {
		t.Fatalf("parsed %v %v %q", req.rpc, req.method, fi.GetSrc())
	}
	good := callFrame(t, 7, "getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s")})
	for _, bad := range [][]byte{
		nil, {0}, {0xff}, good[:3], append(append([]byte{}, good...), 1),
		frameOf(t, &common.RpcRequestHeaderProto{CallId: proto.Int32(-2), ClientId: []byte{}}),
	} {
		req, err := parseRequest(bad)
		if err == nil {
			err = decodeParam(req.param, &fi)
		}
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("parseRequest(%x) = %v, want ErrProtocol", bad, err)
		}
	}
}

func TestReadFrameBounds(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want error
	}{
		{[]byte{0, 0, 0, 2, 'a', 'b'}, nil},
		{[]byte{0, 0, 0, 0}, ErrProtocol},
		{[]byte{0, 0, 0, 11}, ErrProtocol},     // over the limit of 10
		{[]byte{0, 0, 0, 3, 'a'}, ErrProtocol}, // cut
		{[]byte{0, 0}, io.ErrUnexpectedEOF},    // cut length
		{nil, io.EOF},                          // clean end
	} {
		_, err := readFrame(bytes.NewReader(c.in), 10, nil)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("readFrame(%x) = %v, want %v", c.in, err, c.want)
		}
	}
}

// TestAnnouncedLengthReservesNothing: a frame's length alone reserves no
// memory; the buffer grows with the bytes that arrive. (A client that
// announces 16 MiB and sends 11 bytes once cost 16 MiB per connection.)
func TestAnnouncedLengthReservesNothing(t *testing.T) {
	in := append([]byte{0x00, 0xff, 0xff, 0xff}, "only a few bytes"...) // 16 MiB announced
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		if _, err := readFrame(bytes.NewReader(in), 16<<20, nil); !errors.Is(err, ErrProtocol) {
			t.Fatalf("a cut frame: %v, want ErrProtocol", err)
		}
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
		t.Fatalf("20 cut frames of 16 bytes announcing 16 MiB each allocated %d bytes", grown)
	}
	// A whole large frame still reads, byte for byte.
	big := make([]byte, 3<<20+5)
	for i := range big {
		big[i] = byte(i * 7)
	}
	framed := binary.BigEndian.AppendUint32(nil, uint32(len(big)))
	got, err := readFrame(bytes.NewReader(append(framed, big...)), 16<<20, nil)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("a 3 MiB frame: %d bytes, %v", len(got), err)
	}
}

// TestEveryMethodIsServedOrRefused: every method of ClientNamenodeProtocol
// is served, refused as a write (AccessControlException), or one of the
// few reads the head does not serve; the writes include every namespace
// change Hadoop's shell makes.
func TestEveryMethodIsServedOrRefused(t *testing.T) {
	f := newFixture(t)
	s := New(f.v, Config{})
	defer s.Close()
	refused := map[string]bool{}
	ms := service.Methods()
	for i := range ms.Len() {
		name := string(ms.Get(i).Name())
		if _, ok := served[name]; ok {
			continue
		}
		_, ce := s.call(context.Background(), "tester", &request{method: &common.RequestHeaderProto{
			MethodName: proto.String(name), DeclaringClassProtocolName: proto.String(clientProtocol)}})
		switch {
		case unservedReads[name]:
			if ce == nil || ce.class != excNoSuchMethod {
				t.Errorf("%s: %v, want %s", name, ce, excNoSuchMethod)
			}
		case ce == nil || ce.class != excAccessControl:
			t.Errorf("%s: %v, want %s", name, ce, excAccessControl)
		default:
			refused[name] = true
		}
	}
	for name := range served {
		if ms.ByName(protoreflect.Name(name)) == nil {
			t.Errorf("served method %s is not in the service", name)
		}
	}
	for name := range unservedReads {
		if ms.ByName(protoreflect.Name(name)) == nil {
			t.Errorf("unserved read %s is not in the service", name)
		}
	}
	for _, w := range []string{"create", "append", "mkdirs", "delete", "rename", "rename2", "setPermission", "setOwner",
		"setReplication", "setTimes", "concat", "truncate", "createSymlink", "addBlock", "complete", "setXAttr", "setAcl",
		"setQuota", "createSnapshot", "setStoragePolicy", "setSafeMode", "recoverLease"} {
		if !refused[w] {
			t.Errorf("%s is not refused", w)
		}
	}
}

func TestToCallError(t *testing.T) {
	for _, c := range []struct {
		err   error
		class string
	}{
		{errNotExist, excNotFound},
		{errors.Join(errors.New("x"), errPermission), excIO},
		{context.Canceled, excRetriable},
	} {
		if got := toCallError(c.err).class; got != c.class {
			t.Errorf("toCallError(%v) = %s, want %s", c.err, got, c.class)
		}
	}
}

// FuzzParseRequest: any frame parses or fails with ErrProtocol, never
// panics, and a parsed call's message decodes or fails likewise.
func FuzzParseRequest(f *testing.F) {
	f.Add(callFrame(f, 1, "getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s")}))
	f.Add(callFrame(f, 2, "getListing", &hpb.GetListingRequestProto{Src: proto.String("/"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}))
	f.Add(frameOf(f, &common.RpcRequestHeaderProto{RpcKind: common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(-3), ClientId: []byte{}},
		&common.IpcConnectionContextProto{Protocol: proto.String(clientProtocol)}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, err := parseRequest(frame)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		if req.method != nil {
			var m hpb.GetListingRequestProto
			if err := decodeParam(req.param, &m); err != nil && !errors.Is(err, ErrProtocol) {
				t.Fatalf("decodeParam: %v", err)
			}
		}
	})
}

// FuzzConn feeds any bytes after a valid preamble and context to a
// connection of a real server: it answers, or closes, and never hangs or
// panics.
func FuzzConn(f *testing.F) {
	pre := append([]byte("hrpc\x09\x00\x00"), lengthed(frameOf(f, &common.RpcRequestHeaderProto{
		RpcKind: common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(callIDContext), ClientId: make([]byte, 16)},
		&common.IpcConnectionContextProto{Protocol: proto.String(clientProtocol)}))...)
	f.Add(lengthed(callFrame(f, 1, "getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s/a")})))
	f.Add(lengthed(callFrame(f, 1, "getListing", &hpb.GetListingRequestProto{Src: proto.String("/"), StartAfter: []byte{}, NeedLocation: proto.Bool(true)})))
	f.Add(lengthed(callFrame(f, 1, "mkdirs", &hpb.MkdirsRequestProto{Src: proto.String("/x"), Masked: &hpb.FsPermissionProto{Perm: proto.Uint32(0)}, CreateParent: proto.Bool(true)})))
	f.Add([]byte{0, 0, 0, 5, 1, 2, 3})
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		s := New(fx.v, Config{DataAddr: func() string { return dataAddr }, MaxFrame: 1 << 16})
		client, server := net.Pipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			s.serveConn(t.Context(), server)
			server.Close() // as connserve does when a handler returns
		}()
		go func() {
			client.Write(pre)
			client.Write(in)
			client.Close()
		}()
		io.Copy(io.Discard, client)
		<-served
		s.Close()
	})
}

func lengthed(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}
