package server_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/protocol"
)

// partialFrame is the start of an AppendBlock frame that announces the
// largest frame the protocol allows and carries only sent bytes of its
// payload: what a peer that wants to pin the node's memory sends.
func partialFrame(t testing.TB, sent int) []byte {
	t.Helper()
	hdr, err := msgpack.Marshal(&protocol.AppendBlock{RequestID: 1, WriterID: "w", LastEventNumber: 1, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var p [12]byte
	binary.BigEndian.PutUint16(p[0:], uint16(protocol.TypeAppendBlock))
	binary.BigEndian.PutUint32(p[4:], protocol.MaxFrameSize)
	binary.BigEndian.PutUint32(p[8:], uint32(len(hdr)))
	b.Write(p[:])
	b.Write(hdr)
	b.Write(make([]byte, sent))
	return b.Bytes()
}

// attack opens n connections to addr from the local address from (nil:
// any) and writes the start of a maximal frame on each, sent payload
// bytes: a little over half of the frame, where a buffer that grows by
// doubling has already reached the whole frame's size. It returns once
// every write has completed or has been held back for writeWait (the
// node does not read it: back-pressure), and the connections, which
// cleanup closes.
func attack(t testing.TB, addr string, from net.Addr, n, sent int, writeWait time.Duration) []net.Conn {
	t.Helper()
	buf := partialFrame(t, sent)
	d := net.Dialer{LocalAddr: from, Timeout: testTimeout}
	conns := make([]net.Conn, n)
	for i := range conns {
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = nc
		t.Cleanup(func() { nc.Close() })
	}
	var wg sync.WaitGroup
	for _, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc.SetWriteDeadline(time.Now().Add(writeWait))
			nc.Write(buf) // a timeout is the node holding back: expected
		}()
	}
	wg.Wait()
	return conns
}

// rssBytes returns this process's resident set (VmRSS).
func rssBytes(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// BenchmarkPartialFrameAttack: 40 connections from one peer each send the
// first 8 MiB + 1 byte of a 16 MiB AppendBlock frame to a node with the
// default options, and hold them. Reports how much the process's resident
// set and live heap grew (MiB), measured once every write has completed
// or has been held back for 3 s. Run it with -benchtime 1x.
func BenchmarkPartialFrameAttack(b *testing.B) {
	const conns = 40
	const sent = protocol.MaxFrameSize/2 + 1
	for range b.N {
		b.StopTimer()
		e := startBenchServer(b)
		runtime.GC()
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		rss0 := rssBytes(b)
		b.StartTimer()
		held := attack(b, e.addr, nil, conns, sent, 3*time.Second)
		b.StopTimer()
		rss1 := rssBytes(b)
		runtime.GC()
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(rss1-rss0)/(1<<20), "rss-MiB-added")
		b.ReportMetric((float64(ms1.HeapInuse)-float64(ms0.HeapInuse))/(1<<20), "heap-MiB-added")
		for _, nc := range held {
			nc.Close()
		}
		e.stop()
	}
}

// benchServer is a node with the default server options, for benchmarks
// that need no disk limits.
type benchServer struct {
	addr string
	stop func()
}

func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	_, addr, stop := serveBenchNode(b, node.Config{Dir: b.TempDir(), Containers: containers})
	return &benchServer{addr: addr, stop: stop}
}
