package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
)

// The wire benchmarks use the method of node/container's benchmarks (same
// event and block sizes, same window, the disk limit measured in turns
// with the appends in the same directory) over the whole path: segclient,
// TCP on 127.0.0.1, the server, the node's containers.
const (
	benchEventSize   = 1024
	benchBlockEvents = 64 // 64 KiB blocks, as a batching client sends under load
	benchWindow      = 64 // blocks in flight per writer: 4 MiB, the client library's default in-flight window (client.DefaultMaxInflight)
	benchRound       = 32 << 20
	// benchLatencyWALFile: small log files, so that the latency runs roll
	// (into preallocated files, at 10 MB/s) several times.
	benchLatencyWALFile = 8 << 20
)

// benchNode is a node served on 127.0.0.1, its files under dir.
type benchNode struct {
	dir  string
	node *node.Node
	addr string
}

// startBench opens a node of 4 containers in dir (from diskprobetest.Dir)
// with WAL files of walFileSize (0: the default) and serves it; cleanup
// closes the server, then the node, and fails b if either close fails or
// Serve does not return.
func startBench(b *testing.B, dir string, walFileSize int64) *benchNode {
	b.Helper()
	n, addr, _ := serveBenchNode(b, node.Config{Dir: dir, Containers: containers, WALPreallocate: true, WALFileSize: walFileSize})
	return &benchNode{dir: dir, node: n, addr: addr}
}

// serveBenchNode opens a node with cfg (its logger discarded) and serves it
// on loopback with the default server options. stop closes the server,
// then the node, once, failing b if either close fails or Serve does not
// return cleanly; cleanup calls it too.
func serveBenchNode(b *testing.B, cfg node.Config) (n *node.Node, addr string, stop func()) {
	b.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	cfg.Logger = log
	n, err := node.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		n.Close()
		b.Fatal(err)
	}
	srv := server.New(n, server.Options{Logger: log})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := srv.Close(); err != nil {
				b.Errorf("server close: %v", err)
			}
			if err := <-served; err != nil {
				b.Errorf("Serve returned %v after Close", err)
			}
			if err := n.Close(); err != nil {
				b.Errorf("node close: %v", err)
			}
		})
	}
	b.Cleanup(stop)
	return n, l.Addr().String(), stop
}

// writer dials its own connection, creates segment and sets up writer id
// on it. The connection is closed at cleanup (before the server: cleanups
// run last-in first-out).
func (bn *benchNode) writer(b *testing.B, id, segment string) *segclient.Conn {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := segclient.Dial(ctx, bn.addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if err := c.CreateSegment(ctx, segment); err != nil {
		b.Fatal(err)
	}
	if _, err := c.SetupAppend(ctx, id, segment); err != nil {
		b.Fatal(err)
	}
	return c
}

// records sums the log counters of the node's containers.
func (bn *benchNode) records() (records, syncs int64) {
	for _, c := range bn.node.Containers() {
		st := c.LogStats()
		records += int64(st.Records)
		syncs += int64(st.Syncs)
	}
	return records, syncs
}

// spreadSegments returns n segment names, the i-th in container i%containers.
func spreadSegments(n int) []string {
	out := make([]string, n)
	next := int64(0)
	for i := range out {
		for protocol.ContainerOf(seg(next), containers) != i%containers {
			next++
		}
		out[i] = seg(next)
		next++
	}
	return out
}

// BenchmarkWireAppendThroughput: durable appends of 1 KiB events, batched
// in 64 KiB blocks with 16 blocks (1 MiB) in flight per writer, by 1 and 8
// writers, each on its own connection and its own segment, the segments
// spread over the node's 4 containers. Reports MB/s of event bytes,
// the disk's fsync'd sequential bandwidth (1 MiB writes each followed by
// fsync) measured in turns with the appends (rounds of 32 MiB) in the same
// directory, and the first as a percentage of the second.
func BenchmarkWireAppendThroughput(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			bn := startBench(b, diskprobetest.Dir(b), 0)
			event := bytes.Repeat([]byte("e"), benchEventSize)
			var blk []byte
			for i := 0; i < benchBlockEvents; i++ {
				blk = protocol.AppendEvent(blk, event)
			}
			ws := make([]*wireWriter, writers)
			for w, s := range spreadSegments(writers) {
				id := fmt.Sprintf("w%d", w)
				ws[w] = &wireWriter{conn: bn.writer(b, id, s), id: id, last: -1}
			}
			blocks := (b.N + benchBlockEvents - 1) / benchBlockEvents
			b.SetBytes(benchEventSize)
			benchtest.ThroughputInTurns(b, bn.dir, blocks, len(blk), benchBlockEvents*benchEventSize, benchRound, func(n int) error {
				return appendWire(ws, blk, n)
			})
			records, syncs := bn.records()
			b.ReportMetric(float64(records)/float64(max(syncs, 1)), "records/fsync")
		})
	}
}

// wireWriter is one benchmark writer: its connection, its writer id and
// the number of the last event it sent.
type wireWriter struct {
	conn *segclient.Conn
	id   string
	last int64
}

// appendWire appends n blocks of benchBlockEvents events spread over the
// writers, one goroutine each keeping benchWindow blocks in flight, and
// returns the first error of a submission or an acknowledgement.
func appendWire(ws []*wireWriter, blk []byte, n int) error {
	errs := make(chan error, len(ws))
	for i, w := range ws {
		count := n / len(ws)
		if i < n%len(ws) {
			count++
		}
		go func() { errs <- w.append(blk, count) }()
	}
	var first error
	for range ws {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (w *wireWriter) append(blk []byte, count int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inflight := make(chan *segclient.AppendFuture, benchWindow)
	done := make(chan error, 1)
	go func() {
		var first error
		for f := range inflight {
			if _, err := f.Wait(ctx); err != nil && first == nil {
				first = fmt.Errorf("writer %s: ack: %w", w.id, err)
			}
		}
		done <- first
	}()
	var err error
	for i := 0; i < count && err == nil; i++ {
		w.last += benchBlockEvents
		var f *segclient.AppendFuture
		f, err = w.conn.AppendAsync(ctx, w.id, w.last, benchBlockEvents, blk, protocol.NoExpectedOffset)
		if err != nil {
			err = fmt.Errorf("writer %s: append: %w", w.id, err)
			break
		}
		inflight <- f
	}
	close(inflight)
	if ackErr := <-done; err == nil {
		err = ackErr
	}
	return err
}

// BenchmarkWireAppendLatency10MBps: one writer on one connection submits
// 1 KiB events, each as its own block, on a fixed schedule of 10 MB/s,
// pipelined; the latency of an event runs from its submission to its
// acknowledgement, read by a goroutine that waits the futures in order.
// Reports p50/p99/p99.9, the disk's single 4 KiB write+fsync p99 measured
// just before in the same directory, and the ratio of the two p99s.
func BenchmarkWireAppendLatency10MBps(b *testing.B) {
	const rate = 10e6 / benchEventSize // events per second
	interval := time.Duration(float64(time.Second) / rate)
	// The disk's reference is measured before the node opens: once open,
	// its logs prepare their next files in the background.
	dir := diskprobetest.Dir(b)
	disk, err := diskprobe.SyncLatency(dir, 4096, 1000)
	if err != nil {
		b.Fatal(err)
	}
	bn := startBench(b, dir, benchLatencyWALFile)
	const id = "w"
	c := bn.writer(b, id, seg(0))
	blk := protocol.AppendEvent(nil, bytes.Repeat([]byte("e"), benchEventSize))
	ctx := context.Background()
	eventNumber := int64(0)
	submit := func(int) (func() error, error) {
		eventNumber++
		f, err := c.AppendAsync(ctx, id, eventNumber, 1, blk, protocol.NoExpectedOffset)
		if err != nil {
			return nil, fmt.Errorf("append %d: %w", eventNumber, err)
		}
		return func() error { _, err := f.Wait(ctx); return err }, nil
	}
	// Warm up at the same rate until the log has rolled into a
	// preallocated file: a log in its steady state writes into those, a
	// new one does not yet. 2.5 files: the first two grow (see
	// node/container's benchLatencyWarmup). rolls and growing-rolls count
	// the timed part's.
	warmup := benchLatencyWALFile * 5 / 2 / benchEventSize
	ct, err := bn.node.ContainerFor(seg(0))
	if err != nil {
		b.Fatal(err)
	}
	warm := ct.LogStats()
	b.SetBytes(benchEventSize)
	benchtest.PacedLatency(b, disk, warmup, interval, func() error {
		if warm = ct.LogStats(); warm.SpareRolls == 0 {
			return fmt.Errorf("the log has not rolled into a preallocated file yet (%d rolls)", warm.Rolls)
		}
		return nil
	}, submit)
	st := ct.LogStats()
	b.ReportMetric(float64(st.Rolls-warm.Rolls), "rolls")
	b.ReportMetric(float64((st.Rolls-warm.Rolls)-(st.SpareRolls-warm.SpareRolls)), "growing-rolls")
	// How many events a sync covered: the group commit's batching, which
	// the generator's bursts and the transport shape.
	b.ReportMetric(float64(b.N)/float64(max(st.Syncs-warm.Syncs, 1)), "events/sync")
}
