package namenode

import (
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	common "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/common"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2"
	tierfs "github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// closedConns serves a fixture with a hook that reports each connection's
// end on the returned channel.
func closedConns(t *testing.T, cfg Config) (string, <-chan error, *fixture) {
	t.Helper()
	f := newFixture(t)
	l := newListener(t)
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	cfg.DataAddr = func() string { return dataAddr }
	s := New(f.v, cfg)
	ch := make(chan error, 16)
	s.connClosed = func(err error) { ch <- err }
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String(), ch, f
}

// goClient is the colinmarc/hdfs client (a second, independent client
// implementation) on addr.
func goClient(t *testing.T, addr string) *hdfs.Client {
	t.Helper()
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{addr}, User: "gopher"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBadClientsAreClosedAndOthersServed sends garbage, cut frames, huge
// lengths, SASL and a wrong version: each connection gets at most one
// FATAL answer and is closed; a real client beside them is served
// throughout.
func TestBadClientsAreClosedAndOthersServed(t *testing.T) {
	addr, ended, _ := closedConns(t, Config{MaxFrame: 1 << 10})
	good := goClient(t, addr)
	stat := func() {
		t.Helper()
		if _, err := good.Stat("/s/a"); err != nil {
			t.Fatalf("the good client: %v", err)
		}
	}
	stat()
	for _, c := range []struct {
		name  string
		send  func(rc *rawClient)
		fatal string // in the FATAL answer, "" if none
	}{
		{"http", func(rc *rawClient) { rc.write([]byte("GET / HTTP/1.1\r\n\r\n")) }, ""},
		{"version", func(rc *rawClient) { rc.write([]byte{'h', 'r', 'p', 'c', 8, 0, 0}) }, "IPC version 9"},
		{"sasl", func(rc *rawClient) { rc.write([]byte{'h', 'r', 'p', 'c', 9, 0, authSASL}) }, "SASL"},
		{"auth", func(rc *rawClient) { rc.write([]byte{'h', 'r', 'p', 'c', 9, 0, 7}) }, "authentication protocol"},
		{"preamble cut", func(rc *rawClient) { rc.write([]byte("hrp")); rc.c.(interface{ CloseWrite() error }).CloseWrite() }, ""},
		{"huge frame", func(rc *rawClient) { rc.handshake(); rc.write([]byte{0x7f, 0xff, 0xff, 0xff}) }, "limit"},
		{"zero frame", func(rc *rawClient) { rc.handshake(); rc.write([]byte{0, 0, 0, 0}) }, "frame of 0 bytes"},
		{"frame cut", func(rc *rawClient) {
			rc.handshake()
			rc.write([]byte{0, 0, 0, 100, 1, 2, 3})
			rc.c.(interface{ CloseWrite() error }).CloseWrite()
		}, ""},
		{"garbage frame", func(rc *rawClient) { rc.handshake(); rc.write([]byte{0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}) }, "RPC request header"},
		{"call before context", func(rc *rawClient) {
			rc.write([]byte{'h', 'r', 'p', 'c', 9, 0, 0})
			rc.frame(rc.rpcHeader(0), &common.RequestHeaderProto{MethodName: proto.String("getFileInfo"),
				DeclaringClassProtocolName: proto.String(clientProtocol), ClientProtocolVersion: proto.Uint64(1)})
		}, "before the connection context"},
		{"writable rpc", func(rc *rawClient) {
			rc.handshake()
			h := rc.rpcHeader(1)
			h.RpcKind = common.RpcKindProto_RPC_WRITABLE.Enum()
			rc.frame(h)
		}, "RPC kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			c.send(rc)
			hdr := rc.closed()
			switch {
			case c.fatal == "" && hdr != nil:
				t.Errorf("unexpected answer %v", hdr)
			case c.fatal != "" && hdr == nil:
				t.Errorf("no FATAL answer")
			case c.fatal != "" && (hdr.GetStatus() != common.RpcResponseHeaderProto_FATAL || !strings.Contains(hdr.GetErrorMsg(), c.fatal)):
				t.Errorf("answer %v, want FATAL with %q", hdr, c.fatal)
			}
			if err := <-ended; err == nil {
				t.Error("the server saw no error")
			} else {
				t.Logf("server: %v", err)
			}
			stat()
		})
	}
}

// TestCallErrorsKeepTheConnection: unknown methods and protocols, a
// malformed request message and a refused write each answer ERROR to
// their call; the next call on the connection is served.
func TestCallErrorsKeepTheConnection(t *testing.T) {
	addr, _, _ := closedConns(t, Config{})
	rc := dialRaw(t, addr)
	rc.handshake()
	ok := func() {
		t.Helper()
		hdr, body := rc.call("getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s/a")})
		if hdr.GetStatus() != common.RpcResponseHeaderProto_SUCCESS || len(body) < 10 {
			t.Fatalf("getFileInfo: %v %x", hdr, body)
		}
		if string(hdr.GetClientId()) != "0123456789abcdef" || hdr.GetServerIpcVersionNum() != ipcVersion {
			t.Fatalf("header %v does not echo the client id or give the version", hdr)
		}
	}
	ok()
	for _, c := range []struct {
		method string
		req    proto.Message
		class  string
	}{
		{"noSuchThing", &hpb.GetFileInfoRequestProto{Src: proto.String("/")}, excNoSuchMethod},
		{"getDatanodeReport", &hpb.GetDatanodeReportRequestProto{Type: hpb.DatanodeReportTypeProto_ALL.Enum()}, excNoSuchMethod},
		{"getFileInfo", &hpb.GetPreferredBlockSizeResponseProto{Bsize: proto.Uint64(1)}, excServer}, // field 1 of the wrong wire type
		{"getFileInfo", &hpb.GetFileInfoResponseProto{}, excServer},                                 // required src missing
		{"mkdirs", &hpb.MkdirsRequestProto{Src: proto.String("/s/x"), Masked: &hpb.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, excAccessControl},
		{"getBlockLocations", &hpb.GetBlockLocationsRequestProto{Src: proto.String("/nope"), Offset: proto.Uint64(0), Length: proto.Uint64(1)}, excNotFound},
		{"getListing", &hpb.GetListingRequestProto{Src: proto.String("/nope"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}, excNotFound},
	} {
		hdr, _ := rc.call(c.method, c.req)
		if hdr.GetStatus() != common.RpcResponseHeaderProto_ERROR || hdr.GetExceptionClassName() != c.class {
			t.Errorf("%s: %v, want ERROR %s", c.method, hdr, c.class)
		}
		ok()
	}
	// A ping is not answered; the call after it is.
	rc.frame(rc.rpcHeader(callIDPing))
	ok()
	// Another protocol on this connection.
	rc.id++
	rc.frame(rc.rpcHeader(rc.id), &common.RequestHeaderProto{MethodName: proto.String("getServiceStatus"),
		DeclaringClassProtocolName: proto.String("org.apache.hadoop.ha.HAServiceProtocol"), ClientProtocolVersion: proto.Uint64(1)},
		&hpb.GetFileInfoRequestProto{Src: proto.String("/")})
	if hdr, _, err := rc.read(); err != nil || hdr.GetExceptionClassName() != excNoSuchProto {
		t.Errorf("other protocol: %v %v", hdr, err)
	}
	ok()
}

// TestMaxConns: a connection beyond the limit is closed at once; once one
// ends, a new one is served.
func TestMaxConns(t *testing.T) {
	addr, ended, _ := closedConns(t, Config{MaxConns: 1})
	first := dialRaw(t, addr)
	first.handshake()
	first.call("getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/")})
	second := dialRaw(t, addr)
	second.closed()
	first.c.Close()
	<-ended
	third := dialRaw(t, addr)
	third.handshake()
	if hdr, _ := third.call("getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/")}); hdr.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
		t.Fatal(hdr)
	}
}

// TestGoClient reads the tree with colinmarc/hdfs and checks that its
// writes fail with a permission error.
func TestGoClient(t *testing.T) {
	addr, _, f := closedConns(t, Config{})
	c := goClient(t, addr)
	ctx := t.Context()
	for _, e := range walk(t, f.v, "") {
		fi, err := c.Stat("/" + e.Path)
		if err != nil {
			t.Fatalf("Stat(%q): %v", e.Path, err)
		}
		if fi.IsDir() != e.IsDir || fi.Size() != e.Size || fi.Mode() != e.Mode() || fi.ModTime().UnixMilli() != e.ModTime.UnixMilli() {
			t.Errorf("Stat(%q) = dir %v size %d mode %v mod %v; view %+v", e.Path, fi.IsDir(), fi.Size(), fi.Mode(), fi.ModTime(), e)
		}
		fs := fi.Sys().(*hdfs.FileStatus)
		if fs.GetFileId() != e.ID || fs.GetOwner() != "sluice" || fs.GetGroup() != "supergroup" {
			t.Errorf("Stat(%q): %v", e.Path, fs)
		}
		if !e.IsDir {
			continue
		}
		want, err := f.v.List(ctx, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ReadDir("/" + e.Path)
		if err != nil {
			t.Fatalf("ReadDir(%q): %v", e.Path, err)
		}
		if len(got) != len(want) {
			t.Fatalf("ReadDir(%q): %d entries, want %d", e.Path, len(got), len(want))
		}
		for i := range got {
			if got[i].Name() != want[i].Name || got[i].Size() != want[i].Size {
				t.Errorf("ReadDir(%q)[%d] = %s %d, want %+v", e.Path, i, got[i].Name(), got[i].Size(), want[i])
			}
		}
		cs, err := c.GetContentSummary("/" + e.Path)
		if err != nil {
			t.Fatal(err)
		}
		var files, dirs, size int64
		for _, d := range walk(t, f.v, e.Path) {
			if d.IsDir {
				dirs++
			} else {
				files++
				size += d.Size
			}
		}
		if int64(cs.FileCount()) != files || int64(cs.DirectoryCount()) != dirs || cs.Size() != size {
			t.Errorf("GetContentSummary(%q) = %d files %d dirs %d bytes, want %d %d %d", e.Path, cs.FileCount(), cs.DirectoryCount(), cs.Size(), files, dirs, size)
		}
	}
	if _, err := c.Stat("/s/gone"); !errors.Is(err, errNotExist) {
		t.Errorf("Stat of a deleted stream: %v", err)
	}
	if _, err := c.ReadDir("/nope"); !errors.Is(err, errNotExist) {
		t.Errorf("ReadDir of a missing directory: %v", err)
	}

	before := f.files(t)
	small := "/" + tier2.ChunkPath("s", "a", 0, 0)
	for name, err := range map[string]error{
		"Mkdir":     c.Mkdir("/s/x", 0o755),
		"MkdirAll":  c.MkdirAll("/s/a/segment=7/x", 0o755),
		"Remove":    c.Remove(small),
		"RemoveAll": c.RemoveAll("/s"),
		"Rename":    c.Rename(small, "/s/b/x"),
		"Chmod":     c.Chmod(small, 0o777),
		"Chown":     c.Chown(small, "a", "b"),
		"Create":    createErr(c, "/s/b/new"),
		"Append":    appendErr(c, small),
	} {
		if !errors.Is(err, errPermission) {
			t.Errorf("%s: %v, want a permission error", name, err)
		}
	}
	if after := f.files(t); len(after) != len(before) {
		t.Errorf("tier 2 changed: %q -> %q", sortedKeys(before), sortedKeys(after))
	}
}

func createErr(c *hdfs.Client, p string) error {
	w, err := c.Create(p)
	if err == nil {
		w.Close()
	}
	return err
}

func appendErr(c *hdfs.Client, p string) error {
	w, err := c.Append(p)
	if err == nil {
		w.Close()
	}
	return err
}

// Concurrent clients on separate connections are served independently.
func TestConcurrentClients(t *testing.T) {
	addr, _, _ := closedConns(t, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{addr}, User: "gopher"})
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for range 20 {
				if _, err := c.ReadDir("/s/a/segment=0"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestUnavailableIsRetriable: with the controller down, calls that need
// it answer RetriableException (and the connection stays).
func TestUnavailableIsRetriable(t *testing.T) {
	st, err := tierfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serve(t, view.New(st, viewtest.Down(errors.New("connection refused")), view.Options{CatalogTTL: -1}), Config{DataAddr: func() string { return dataAddr }})
	rc := dialRaw(t, addr)
	rc.handshake()
	for _, c := range []struct {
		method string
		req    proto.Message
	}{
		{"getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/s")}},
		{"getListing", &hpb.GetListingRequestProto{Src: proto.String("/"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}},
		{"getContentSummary", &hpb.GetContentSummaryRequestProto{Path: proto.String("/")}},
	} {
		hdr, _ := rc.call(c.method, c.req)
		if hdr.GetStatus() != common.RpcResponseHeaderProto_ERROR || hdr.GetExceptionClassName() != excRetriable {
			t.Errorf("%s: %v, want ERROR %s", c.method, hdr, excRetriable)
		}
	}
	// The root itself needs no controller.
	if hdr, _ := rc.call("getFileInfo", &hpb.GetFileInfoRequestProto{Src: proto.String("/")}); hdr.GetStatus() != common.RpcResponseHeaderProto_SUCCESS {
		t.Errorf("getFileInfo /: %v", hdr)
	}
}

// TestPipelinedCalls sends many calls on one connection before reading
// any answer: each is answered once, by call id, whatever the order.
func TestPipelinedCalls(t *testing.T) {
	addr, _, f := closedConns(t, Config{MaxCallsPerConn: 4})
	rc := dialRaw(t, addr)
	rc.handshake()
	es := walk(t, f.v, "")
	const n = 64
	for i := range n {
		e := es[i%len(es)]
		rc.frame(rc.rpcHeader(int32(i)), &common.RequestHeaderProto{MethodName: proto.String("getFileInfo"),
			DeclaringClassProtocolName: proto.String(clientProtocol), ClientProtocolVersion: proto.Uint64(1)},
			&hpb.GetFileInfoRequestProto{Src: proto.String("/" + e.Path)})
	}
	seen := map[int32]bool{}
	for range n {
		hdr, body, err := rc.read()
		if err != nil {
			t.Fatal(err)
		}
		id := int32(hdr.GetCallId())
		if seen[id] || id < 0 || id >= n {
			t.Fatalf("answer to call %d (seen %v)", id, seen[id])
		}
		seen[id] = true
		var resp hpb.GetFileInfoResponseProto
		if err := decodeParam(body, &resp); err != nil {
			t.Fatal(err)
		}
		if e := es[int(id)%len(es)]; resp.GetFs().GetFileId() != e.ID {
			t.Errorf("call %d: file id %d, want %d (%s)", id, resp.GetFs().GetFileId(), e.ID, e.Path)
		}
	}
}

// flakyListener fails its first Accepts as a listener out of
// descriptors does.
type flakyListener struct {
	net.Listener
	fails int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsAreRetried: Serve outlives transient accept errors.
func TestAcceptErrorsAreRetried(t *testing.T) {
	f := newFixture(t)
	l := &flakyListener{Listener: newListener(t), fails: 3}
	s := New(f.v, Config{DataAddr: func() string { return dataAddr }, Logger: testLogger(t)})
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	c := goClient(t, l.Addr().String())
	if _, err := c.Stat("/s"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve: %v", err)
	}
}
