package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/protocol"
)

// A writer that reconnects learns what the segment holds and may resend
// blocks it is unsure of: they are acknowledged and stored once.
func TestResendAfterReconnectIsIdempotent(t *testing.T) {
	e := start(t, nil)
	ctx := ctxT(t)
	s := seg(1)
	c1 := e.dial()
	if err := c1.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	var want []string
	var futures []*segclient.AppendFuture
	for i := 1; i <= 5; i++ {
		ev := fmt.Sprintf("event %d", i)
		want = append(want, ev)
		f, err := c1.AppendAsync(ctx, "w", int64(i), 1, block(ev), protocol.NoExpectedOffset)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	var length int64
	for _, f := range futures {
		ack := must(f.Wait(ctx))(t)
		length = ack.CurrentOffset
	}
	c1.Close()

	c2 := e.dial()
	last, err := c2.SetupAppend(ctx, "w", s)
	if err != nil || last != 5 {
		t.Fatalf("setup after reconnect: %d, %v; want 5", last, err)
	}
	for i := 4; i <= 5; i++ {
		ack, err := c2.Append(ctx, "w", int64(i), 1, block(fmt.Sprintf("event %d", i)), protocol.NoExpectedOffset)
		if err != nil {
			t.Fatalf("resend of event %d: %v", i, err)
		}
		if ack.CurrentOffset != length || ack.EventNumber != int64(i) || ack.PreviousEventNumber != 5 {
			t.Fatalf("resend of event %d: ack %+v, want offset %d, previous 5", i, ack, length)
		}
	}
	ack, err := c2.Append(ctx, "w", 6, 1, block("event 6"), protocol.NoExpectedOffset)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "event 6")
	if got := events(t, readAll(t, c2, s, 0, ack.CurrentOffset)); !slices.Equal(got, want) {
		t.Fatalf("segment holds %q, want %q", got, want)
	}
	if info := must(c2.GetSegmentInfo(ctx, s))(t); info.Length != ack.CurrentOffset {
		t.Fatalf("length %d, want %d", info.Length, ack.CurrentOffset)
	}
}

// A read at the tail waits for the next append, from another connection.
func TestTailReadWaitsForAppend(t *testing.T) {
	e := start(t, nil)
	ctx := ctxT(t)
	s := seg(1)
	w := e.dial()
	if err := w.CreateSegment(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SetupAppend(ctx, "w", s); err != nil {
		t.Fatal(err)
	}
	first := must(w.Append(ctx, "w", 1, 1, block("first"), protocol.NoExpectedOffset))(t)

	// Nothing at the tail yet, without waiting.
	if r := must(w.ReadSegment(ctx, s, first.CurrentOffset, 100, 0))(t); len(r.Data) != 0 || !r.AtTail {
		t.Fatalf("read at the tail without waiting: %s", describe(r))
	}

	// Park a read; a request sent after it is answered first, which shows
	// that the read is waiting (the raw connection sends both at once).
	r := e.raw()
	r.send(&protocol.ReadSegment{RequestID: 1, Segment: s, Offset: first.CurrentOffset, MaxBytes: 1 << 20,
		WaitMillis: int32(testTimeout / time.Millisecond)})
	r.send(&protocol.GetSegmentInfo{RequestID: 2, Segment: s})
	if m, ok := r.recv().(*protocol.SegmentInfo); !ok || m.RequestID != 2 || m.Length != first.CurrentOffset {
		t.Fatalf("want the info first, got %s", describe(m))
	}

	second := block("second")
	if _, err := w.Append(ctx, "w", 2, 1, second, protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	m := r.recv()
	sr, ok := m.(*protocol.SegmentRead)
	if !ok || sr.RequestID != 1 || sr.Offset != first.CurrentOffset || len(sr.Data) != 1 || !bytes.Equal(sr.Data[0], second) || !sr.AtTail {
		t.Fatalf("parked read returned %s, want the second block", describe(m))
	}
}

// holdFS holds the fsyncs of the write-ahead logs while armed.
type holdFS struct {
	*vfstest.ErrorFS
	armed   atomic.Bool
	held    chan struct{} // one send per fsync held
	release chan struct{} // closed to let them go
}

func newHoldFS() *holdFS {
	h := &holdFS{ErrorFS: vfstest.New(vfs.Default), held: make(chan struct{}, 16), release: make(chan struct{})}
	h.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpSync && strings.HasSuffix(path, ".wal") && h.armed.Load() {
			select {
			case h.held <- struct{}{}:
			default:
			}
			<-h.release
		}
		return nil
	})
	return h
}

func (h *holdFS) letGo() {
	if h.armed.CompareAndSwap(true, false) {
		close(h.release)
	}
}

// A second SetupAppend for a writer whose first is in flight on the same
// connection is refused with SetupInProgress; the first completes.
func TestSecondSetupWhileFirstInFlight(t *testing.T) {
	fs := newHoldFS()
	e := start(t, fs)
	t.Cleanup(fs.letGo) // runs before the server's cleanup
	ctx := ctxT(t)
	segs := segsInOneContainer(2)
	c := e.dial()
	for _, s := range segs {
		if err := c.CreateSegment(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetupAppend(ctx, "other", segs[0]); err != nil {
		t.Fatal(err)
	}

	// Hold the fsync of an append in the container.
	fs.armed.Store(true)
	held, err := c.AppendAsync(ctx, "other", 1, 1, block("held"), protocol.NoExpectedOffset)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-fs.held:
	case <-ctx.Done():
		t.Fatal("the append's fsync never started")
	}

	// The first setup waits for that fsync; the second arrives meanwhile.
	r := e.raw()
	r.send(&protocol.SetupAppend{RequestID: 1, WriterID: "W", Segment: segs[1]})
	r.send(&protocol.SetupAppend{RequestID: 2, WriterID: "W", Segment: segs[1]})
	er := r.recvError(2, protocol.CodeSetupInProgress)
	if er.WriterID != "W" || !strings.Contains(er.Message, "in progress") {
		t.Fatalf("SetupInProgress reply: %+v", er)
	}
	if err := protocol.ErrorFromReply(er); !errors.Is(err, protocol.ErrSetupInProgress) {
		t.Fatalf("error %v does not match ErrSetupInProgress", err)
	}
	select {
	case <-held.Done():
		t.Fatal("the append was acknowledged while its fsync is held")
	default:
	}

	fs.letGo()
	m := r.recv()
	as, ok := m.(*protocol.AppendSetup)
	if !ok || as.RequestID != 1 || as.WriterID != "W" || as.Segment != segs[1] || as.LastEventNumber != protocol.NoEventNumber {
		t.Fatalf("first setup: got %s, want AppendSetup", describe(m))
	}
	if _, err := held.Wait(ctx); err != nil {
		t.Fatalf("held append: %v", err)
	}
	// The writer is set up: its appends work on that connection.
	r.send(&protocol.AppendBlock{RequestID: 3, WriterID: "W", LastEventNumber: 1, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: block("W's event")})
	if m := r.recv(); m.(*protocol.DataAppended).RequestID != 3 {
		t.Fatalf("append after setup: %s", describe(m))
	}
}

// Close returns with connections open and a read parked, and leaves no
// goroutine behind.
func TestCloseWithParkedReadLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx := ctxT(t)
	func() {
		e := startNoCleanup(t, nil)
		defer e.stop()
		s := seg(1)
		c1, err := segclient.Dial(ctx, e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c1.Close()
		c2, err := segclient.Dial(ctx, e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		if err := c1.CreateSegment(ctx, s); err != nil {
			t.Fatal(err)
		}
		r := e.raw()
		defer r.nc.Close()
		r.send(&protocol.ReadSegment{RequestID: 1, Segment: s, Offset: 0, MaxBytes: 100, WaitMillis: int32(testTimeout / time.Millisecond)})
		r.send(&protocol.GetSegmentInfo{RequestID: 2, Segment: s})
		if m, ok := r.recv().(*protocol.SegmentInfo); !ok {
			t.Fatalf("want the info first, got %s", describe(m))
		}
		parked := make(chan error, 1)
		go func() {
			_, err := c2.ReadSegment(ctx, s, 0, 100, testTimeout)
			parked <- err
		}()

		done := make(chan error, 1)
		go func() { done <- e.srv.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("close: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("Close did not return")
		}
		// The clients see their connections closed.
		if err := <-parked; !errors.Is(err, segclient.ErrConnectionClosed) {
			t.Fatalf("parked read: %v, want ErrConnectionClosed", err)
		}
		if _, err := r.dec.ReadMessage(); err == nil {
			t.Fatal("raw connection still open after Close")
		}
		if err := c1.CreateSegment(ctx, seg(2)); !errors.Is(err, segclient.ErrConnectionClosed) {
			t.Fatalf("call after Close: %v, want ErrConnectionClosed", err)
		}
	}()

	// Goroutines end shortly after the calls above return (a closed
	// client's reader, the runtime's own); poll, without a fixed sleep.
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}
