package client_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/node/diskprobe"
	"github.com/sluice-streams/sluice/node/diskprobe/diskprobetest"
)

// BenchmarkEndToEndTail10MBps: one Writer submits 1 KiB events to a
// one-segment stream of an in-process deployment (real node, TCP on
// 127.0.0.1) on a fixed schedule of 10 MB/s; a Reader at the tail reads
// them. An event's latency runs from its Write to its ReadNext: the
// whole path of a tail read (the ack's durability, the node's long poll
// and wake-up, the reply, the client's reader, ReadNext). Reports
// p50/p99/p99.9 and the disk's single 4 KiB write+fsync p99, measured just
// before (SLUICE_BENCH_DIR chooses the probe's directory; the node's is
// the test's TempDir).
//
//	go test -run '^$' -bench EndToEndTail10MBps -benchtime 20000x ./client/
func BenchmarkEndToEndTail10MBps(b *testing.B) {
	const eventSize = 1024
	interval := time.Duration(float64(time.Second) / (10e6 / eventSize))
	disk, err := diskprobe.SyncLatency(diskprobetest.Dir(b), 4096, 1000)
	if err != nil {
		b.Fatal(err)
	}
	d := clienttest.Start(b)
	d.CreateStream("bench", "e2e", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(ctx, d.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	w, err := c.NewWriter(ctx, "bench", "e2e")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(context.Background())
	r, err := c.NewReader(ctx, "bench", "e2e")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()

	// arrived[seq] is closed when the reader returns event seq.
	var mu sync.Mutex
	arrived := map[uint64]chan struct{}{}
	readErr := make(chan error, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				if ctx.Err() == nil {
					readErr <- err
				}
				return
			}
			seq := binary.BigEndian.Uint64(ev.Data)
			mu.Lock()
			ch := arrived[seq]
			delete(arrived, seq)
			mu.Unlock()
			if ch == nil {
				readErr <- fmt.Errorf("event %d read twice or never written", seq)
				return
			}
			close(ch)
		}
	}()
	defer func() { cancel(); <-readerDone }()

	event := make([]byte, eventSize)
	var seq uint64
	submit := func(int) (func() error, error) {
		seq++
		ch := make(chan struct{})
		mu.Lock()
		arrived[seq] = ch
		mu.Unlock()
		binary.BigEndian.PutUint64(event, seq)
		ack, err := w.Write(ctx, "", event)
		if err != nil {
			return nil, err
		}
		return func() error {
			select {
			case <-ch:
				return ack.Wait(ctx)
			case err := <-readErr:
				return err
			}
		}, nil
	}
	b.SetBytes(eventSize)
	benchtest.PacedLatency(b, disk, 20000, interval, nil, submit)
}
