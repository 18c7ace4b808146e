package datanode

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	hpb "github.com/sluice-streams/sluice/hdfsgateway/internal/hadooppb/hdfs"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// testBlockSize: blocks of 2.5 of the fixture's 64 KiB packets (HDFS's
// own size), so that blocks have several packets and files several
// blocks. TestHadoopClientReadsDefaultPackets covers DefaultPacketSize.
const testBlockSize = 160 << 10

// fixture is a view over real tier-2 files and their bytes, by path.
type fixture struct {
	v     *view.View
	files map[string][]byte
	paths []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, st)
}

// newFixtureOn writes the fixture's files to st.
func newFixtureOn(t *testing.T, st tier2.Storage) *fixture {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	fx := &fixture{files: map[string][]byte{}}
	for _, f := range []struct {
		seg, off int64
		size     int
	}{
		{0, 0, 400_000},           // three blocks, the last partial
		{0, 9, 1000},              // one block, a partial last chunk
		{1, 0, 3 * 512},           // whole chunks only
		{1, 7, 2 * testBlockSize}, // exactly two blocks
		{2, 0, 64<<10 + 1},        // one byte past a packet
	} {
		data := make([]byte, f.size)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		p := tier2.ChunkPath("s", "a", f.seg, f.off)
		tier2test.Put(t, st, p, data)
		fx.files[p] = data
		fx.paths = append(fx.paths, p)
	}
	fx.v = view.New(st, viewtest.NewCatalog(map[string][]string{"s": {"a"}}), view.Options{})
	return fx
}

// start serves fx with test limits; connDone, if not nil, is called as
// each connection ends.
func (fx *fixture) start(t *testing.T, connDone func()) (*Server, string) {
	t.Helper()
	log := logrus.New()
	log.SetLevel(logrus.DebugLevel)
	log.SetOutput(testWriter{t})
	// HDFS's 64 KiB packets: a block of the fixture is several packets.
	s := New(fx.v, Config{BlockSize: testBlockSize, PacketSize: 64 << 10, IdleTimeout: 10 * time.Minute, Logger: log})
	s.connDone = connDone
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve = %v, want ErrClosed", err)
		}
	})
	return s, l.Addr().String()
}

// testWriter logs to t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// readCase is one range of one block.
type readCase struct {
	b        blocks.Block
	off, len int64
	nocrc    bool
}

// cases returns many ranges of every block of every file: the whole
// block, its first and last bytes, unaligned ranges, ranges across
// packets and chunk boundaries, the last partial chunk.
func (fx *fixture) cases() []readCase {
	var out []readCase
	for _, p := range fx.paths {
		for _, b := range blocks.Of(p, int64(len(fx.files[p])), testBlockSize) {
			add := func(off, n int64, nocrc bool) {
				if off < 0 || n <= 0 || off+n > b.Len {
					return
				}
				out = append(out, readCase{b, off, n, nocrc})
			}
			add(0, b.Len, false)
			add(0, b.Len, true)
			add(0, 1, false)
			add(1, 1, false)
			add(511, 2, false)
			add(512, 512, false)
			add(b.Len-1, 1, false)
			add(b.Len-5, 5, false)
			add(b.Len-b.Len%512, b.Len%512, false)
			add(12345, 54321, false)
			add(64<<10-3, 10, false)
			add(100, 70_000, true)
			add(b.Len/2, b.Len-b.Len/2, false)
		}
	}
	return out
}

func (fx *fixture) want(c readCase) []byte {
	return fx.files[c.b.Path][c.b.Offset+c.off : c.b.Offset+c.off+c.len]
}

// javaLines runs the harness's BlockRead (Hadoop's BlockReaderRemote and
// Sender) against addr with the request lines, and returns its answers.
func javaLines(t *testing.T, addr string, lines []string) []string {
	t.Helper()
	r := hadooptest.Harness(t)
	cmd := r.Class("org.sluice.hadooptest.BlockRead", addr, blocks.PoolID, fmt.Sprint(blocks.GenerationStamp))
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	defer kill.Stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("BlockRead: %v\nstderr:\n%s", err, stderr.String())
	}
	out := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(out) != len(lines) {
		t.Fatalf("BlockRead answered %d lines to %d requests:\n%s\nstderr:\n%s", len(out), len(lines), stdout.String(), stderr.String())
	}
	return out
}

func blockArgs(b blocks.Block) string {
	return fmt.Sprintf("%d %d %x", b.ID(), b.Len, blocks.EncodeToken(b))
}

// exchange is one request line to BlockRead and a check of its answer.
type exchange struct {
	line string
	want string   // the exact answer, or
	errs []string // an "err" answer holding each of these
}

// TestHadoopClientReadsBlocks reads many ranges of every block with
// Hadoop's own block reader (checksums verified by Hadoop), over one
// kept-alive connection; asks for block and file checksums (MD5CRC and
// COMPOSITE_CRC) with Hadoop's Sender and combines them as DFSClient
// does; and checks how Hadoop's client sees refusals.
func TestHadoopClientReadsBlocks(t *testing.T) {
	runHadoopClient(t, newFixture(t))
}

// TestHadoopClientReadsBlocksOfHDFSTier2 runs the same reads and checksums
// with tier 2 on a real HDFS (a MiniDFSCluster), read through tier2/hdfs.
func TestHadoopClientReadsBlocksOfHDFSTier2(t *testing.T) {
	nn := hadooptest.StartHDFS(t)
	st, err := backend.Open("hdfs://" + nn + "/sluice")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := st.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	runHadoopClient(t, newFixtureOn(t, st))
}

func runHadoopClient(t *testing.T, fx *fixture) {
	_, addr := fx.start(t, nil)

	var ex []exchange
	cases := fx.cases()
	for _, c := range cases {
		l := fmt.Sprintf("read %s %d %d", blockArgs(c.b), c.off, c.len)
		if c.nocrc {
			l += " nocrc"
		}
		ex = append(ex, exchange{line: l, want: fmt.Sprintf("ok %d %x", c.len, sha256.Sum256(fx.want(c)))})
	}
	ex = append(ex, exchange{line: "sockets", want: "ok 1"}) // every read on one kept-alive connection
	for _, p := range fx.paths {
		data := fx.files[p]
		bs := blocks.Of(p, int64(len(data)), testBlockSize)
		file, cfile := fmt.Sprintf("file %d", len(bs)), fmt.Sprintf("cfile %d", len(bs))
		for _, b := range bs {
			sum, crcs, err := blocks.BlockMD5(bytes.NewReader(data), b)
			if err != nil {
				t.Fatal(err)
			}
			blk := data[b.Offset : b.Offset+b.Len]
			ex = append(ex,
				exchange{line: "sum " + blockArgs(b), want: fmt.Sprintf("ok 512 %d CHECKSUM_CRC32C %x", crcs, sum)},
				exchange{line: "csum " + blockArgs(b), want: fmt.Sprintf("ok %d %08x", crcs, crc32c(blk))},
			)
			const stripe = 3 * 512
			want := fmt.Sprintf("ok %d ", crcs)
			for s := 0; s < len(blk); s += stripe {
				want += fmt.Sprintf("%08x", crc32c(blk[s:min(s+stripe, len(blk))]))
			}
			ex = append(ex, exchange{line: fmt.Sprintf("csum %s %d", blockArgs(b), stripe), want: want})
			file += " " + blockArgs(b)
			cfile += " " + blockArgs(b)
		}
		c, err := blocks.Checksum(bytes.NewReader(data), p, int64(len(data)), testBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex,
			exchange{line: file, want: fmt.Sprintf("ok %s %x", c.Algorithm(), c.Bytes())},
			exchange{line: cfile, want: fmt.Sprintf("ok COMPOSITE-CRC32C %08x", crc32c(data))},
		)
	}
	bad := blocks.Of(fx.paths[0], int64(len(fx.files[fx.paths[0]])), testBlockSize)[0]
	gone := blocks.Block{Path: "s/a/segment=0/" + tier2.ChunkName(12345), Index: 0, Len: 10}
	ex = append(ex,
		exchange{line: fmt.Sprintf("read %d %d %x 0 10", bad.ID()+1, bad.Len, blocks.EncodeToken(bad)), errs: []string{"status=ERROR", "does not match its token"}},
		exchange{line: "read " + blockArgs(gone) + " 0 10", errs: []string{"status=ERROR", "file does not exist"}},
		exchange{line: fmt.Sprintf("read %s %d 10", blockArgs(bad), bad.Len-5), errs: []string{"status=ERROR", "don't match block"}},
		exchange{line: "sum " + blockArgs(gone), errs: []string{"ERROR", "file does not exist"}},
		exchange{line: "write " + blockArgs(bad), errs: []string{"InvalidBlockTokenException", "access token error", ReadOnlyMessage, "WRITE_BLOCK"}},
		exchange{line: "copy " + blockArgs(bad), errs: []string{"InvalidBlockTokenException", "access token error", ReadOnlyMessage, "COPY_BLOCK"}},
	)

	lines := make([]string, len(ex))
	for i, e := range ex {
		lines[i] = e.line
	}
	out := javaLines(t, addr, lines)
	for i, e := range ex {
		ok := out[i] == e.want
		if e.errs != nil {
			ok = strings.HasPrefix(out[i], "err ")
			for _, w := range e.errs {
				ok = ok && strings.Contains(out[i], w)
			}
		}
		if !ok {
			t.Errorf("%.120s: got %q, want %q%q", e.line, out[i], e.want, e.errs)
		}
	}
}

// TestHadoopClientReadsDefaultPackets reads a block of several packets of
// DefaultPacketSize with Hadoop's own block reader: whole, across packet
// boundaries, without checksums.
func TestHadoopClientReadsDefaultPackets(t *testing.T) {
	const blockSize = 1 << 20
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 3*DefaultPacketSize+1000)
	for i := range data {
		data[i] = byte(rnd.Uint32())
	}
	p := tier2.ChunkPath("s", "a", 0, 0)
	w, err := st.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := New(view.New(st, viewtest.NewCatalog(map[string][]string{"s": {"a"}}), view.Options{}), Config{BlockSize: blockSize})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()

	b := blocks.Of(p, int64(len(data)), blockSize)[0]
	const pk = DefaultPacketSize
	cases := []struct {
		off, n int64
		nocrc  bool
	}{
		{0, b.Len, false},
		{0, b.Len, true},
		{pk - 3, 10, false},
		{100, 2 * pk, false},
		{2*pk + 1, b.Len - 2*pk - 1, false},
	}
	var lines, want []string
	for _, c := range cases {
		l := fmt.Sprintf("read %s %d %d", blockArgs(b), c.off, c.n)
		if c.nocrc {
			l += " nocrc"
		}
		lines = append(lines, l)
		want = append(want, fmt.Sprintf("ok %d %x", c.n, sha256.Sum256(data[c.off:c.off+c.n])))
	}
	out := javaLines(t, l.Addr().String(), lines)
	for i := range lines {
		if out[i] != want[i] {
			t.Errorf("%s: got %q, want %q", lines[i], out[i], want[i])
		}
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// TestHostileClientsCloseOnlyTheirConnection sends garbage, oversized,
// truncated and mutating requests and vanishes mid-read, each on its own
// connection, while a good client keeps reading on another.
func TestHostileClientsCloseOnlyTheirConnection(t *testing.T) {
	fx := newFixture(t)
	ended := make(chan struct{}, 64)
	s, addr := fx.start(t, func() { ended <- struct{}{} })
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	big := blocks.Of(fx.paths[0], int64(len(fx.files[fx.paths[0]])), testBlockSize)[1]
	good, gr := dial()
	check := func() {
		t.Helper()
		got, err := goRead(good, gr, big, 100, 70_000)
		if err != nil {
			t.Fatalf("good client: %v", err)
		}
		if want := fx.files[big.Path][big.Offset+100 : big.Offset+70_100]; !bytes.Equal(got, want) {
			t.Fatal("good client: wrong bytes")
		}
	}
	check()

	forged := big
	forged.Index = 0
	badToken := readOp(big, 0, 10)
	badToken = bytes.Replace(badToken, blocks.EncodeToken(big), blocks.EncodeToken(forged), 1)
	huge := append([]byte{0, Version, OpReadBlock}, binary.AppendUvarint(nil, MaxRequestSize+1)...)
	write := op(OpWriteBlock, &hpb.OpWriteBlockProto{
		Header: &hpb.ClientOperationHeaderProto{BaseHeader: baseHeader(big), ClientName: proto.String("w")},
		Stage:  hpb.OpWriteBlockProto_PIPELINE_SETUP_CREATE.Enum(), PipelineSize: proto.Uint32(1),
		MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0), LatestGenerationStamp: proto.Uint64(1),
		RequestedChecksum: &hpb.ChecksumProto{Type: hpb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)},
	})
	// A write's packets follow its header: the server must not be
	// confused by them, only refuse and close.
	write = append(write, bytes.Repeat([]byte{0xAB}, 100_000)...)
	for _, c := range []struct {
		name   string
		in     []byte
		status hpb.Status
		msg    string
	}{
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), hpb.Status_ERROR, "Version Mismatch"},
		{"unknown op", []byte{0, Version, 99, 1, 2, 3}, hpb.Status_ERROR, "unknown op"},
		{"huge message", huge, hpb.Status_ERROR, "too large"},
		{"bad token", badToken, hpb.Status_ERROR, "bad block"},
		{"past the block", readOp(big, big.Len-1, 2), hpb.Status_ERROR, "don't match block"},
		{"write", write, hpb.Status_ERROR_ACCESS_TOKEN, ReadOnlyMessage},
		{"transfer", op(OpTransferBlock, &hpb.OpTransferBlockProto{
			Header: &hpb.ClientOperationHeaderProto{BaseHeader: baseHeader(big), ClientName: proto.String("t")},
		}), hpb.Status_ERROR_ACCESS_TOKEN, ReadOnlyMessage},
		{"copy", op(OpCopyBlock, &hpb.OpCopyBlockProto{Header: baseHeader(big)}), hpb.Status_ERROR_ACCESS_TOKEN, ReadOnlyMessage},
		{"short-circuit", op(OpRequestShortCircuitFDs, &hpb.OpRequestShortCircuitAccessProto{
			Header: baseHeader(big), MaxVersion: proto.Uint32(1),
		}), hpb.Status_ERROR_UNSUPPORTED, "not supported"},
		{"tiny stripes", op(OpBlockChecksum, &hpb.OpBlockChecksumProto{
			Header: baseHeader(big),
			BlockChecksumOptions: &hpb.BlockChecksumOptionsProto{
				BlockChecksumType: hpb.BlockChecksumTypeProto_COMPOSITE_CRC.Enum(), StripeLength: proto.Uint64(1),
			},
		}), hpb.Status_ERROR, "stripe length"},
	} {
		cn, r := dial()
		if _, err := cn.Write(c.in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp, err := readResponse(r)
		if err != nil {
			t.Fatalf("%s: no response: %v", c.name, err)
		}
		if resp.GetStatus() != c.status || !strings.Contains(resp.GetMessage(), c.msg) {
			t.Errorf("%s: %s %q, want %s saying %q", c.name, resp.GetStatus(), resp.GetMessage(), c.status, c.msg)
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Errorf("%s: after the response: %v, want EOF", c.name, err)
		}
		cn.Close()
		<-ended
	}

	// A truncated request: closed without an answer.
	cn, r := dial()
	in := readOp(big, 0, 10)
	cn.Write(in[:len(in)-3])
	cn.(*net.TCPConn).CloseWrite()
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("truncated request: %v, want EOF", err)
	}
	<-ended

	// Clients that vanish: mid-packet, and right after the response.
	for _, keep := range []int{100, 0} {
		cn, r := dial()
		cn.Write(readOp(big, 0, big.Len))
		if _, err := readResponse(r); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, make([]byte, keep)); err != nil {
			t.Fatal(err)
		}
		cn.Close()
		<-ended
	}

	check()
	if n := s.Conns(); n != 1 {
		t.Fatalf("%d connections open, want the good client's alone", n)
	}
}

// TestLimits: packets of a configured size (rounded down to whole
// chunks), and a connection over MaxConns closed at once while the
// others carry on.
func TestLimits(t *testing.T) {
	fx := newFixture(t)
	ended := make(chan struct{}, 8)
	s := New(fx.v, Config{BlockSize: testBlockSize, PacketSize: 1000, MaxConns: 2})
	s.connDone = func() { ended <- struct{}{} }
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()
	if s.cfg.PacketSize != 512 {
		t.Fatalf("PacketSize 1000 became %d, want 512", s.cfg.PacketSize)
	}
	b := blocks.Of(fx.paths[0], int64(len(fx.files[fx.paths[0]])), testBlockSize)[2]
	read := func(c net.Conn, r *bufio.Reader) error {
		got, err := goRead(c, r, b, 700, 5000)
		if err == nil && !bytes.Equal(got, fx.files[b.Path][b.Offset+700:b.Offset+5700]) {
			err = errors.New("wrong bytes")
		}
		return err
	}
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns, readers = append(conns, c), append(readers, bufio.NewReader(c))
	}
	for i := range 2 {
		if err := read(conns[i], readers[i]); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	// The third was accepted after the first two (in order) and closed.
	if err := read(conns[2], readers[2]); err == nil {
		t.Fatal("a third connection was served with MaxConns 2")
	}
	conns[0].Close()
	<-ended
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := read(c, bufio.NewReader(c)); err != nil {
		t.Fatalf("after one closed: %v", err)
	}
	if err := read(conns[1], readers[1]); err != nil {
		t.Fatalf("connection 1 after the third: %v", err)
	}
}
