package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// These tests hold the library to its contract: every call that blocks
// returns once its ctx is done (or, for Close without a ctx, once its
// goroutines have stopped), also when the node stops answering
// (clienttest.Proxy frozen: connections stay open, nothing comes back) or
// nothing listens at the controller's address.

// hangGuard is how long a call that must return once its ctx is done may
// take before the test calls it a hang. It is no timing assertion: the
// calls' own contexts are a fraction of it.
const hangGuard = time.Minute

// returns runs f and fails the test if f has not returned within
// hangGuard.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not return within %v of its context's end: it hangs", what, hangGuard)
	}
}

// shortCtx is a context that ends soon: the calls given it are expected
// to give up.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// deadAddr returns a loopback address where nothing listens (a port
// reserved for the test, outside the ephemeral range).
func deadAddr(t *testing.T) string { return porttest.Addr(t) }

// TestWriterBoundedWhenNodeFreezes: once the node stops answering, Flush
// and Close return when their ctx ends, the events not acknowledged fail,
// and the Client closes.
func TestWriterBoundedWhenNodeFreezes(t *testing.T) {
	d := clienttest.Start(t, clienttest.ThroughProxy())
	d.CreateStream("s", "x", 1)
	c, err := client.New(context.Background(), d.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.Write(ctx, "k", []byte("before"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	d.Proxy.Freeze()
	b, err := w.Write(ctx, "k", []byte("after"))
	if err != nil {
		t.Fatal(err)
	}
	returns(t, "Flush", func() {
		if err := w.Flush(shortCtx(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Flush with the node frozen: %v, want context.DeadlineExceeded", err)
		}
	})
	returns(t, "Close", func() {
		if err := w.Close(shortCtx(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close with the node frozen: %v, want context.DeadlineExceeded", err)
		}
	})
	if err := b.Err(); !errors.Is(err, client.ErrClosed) {
		t.Errorf("event unacknowledged at Close: %v, want ErrClosed", err)
	}
	returns(t, "Client.Close", func() { c.Close() })
}

// TestReaderBoundedWhenNodeFreezes: with the node frozen, NewReader
// (FromTail asks the node), ReadNext and Close return when their ctx
// ends; so do a group reader's ReadNext and Close.
func TestReaderBoundedWhenNodeFreezes(t *testing.T) {
	d := clienttest.Start(t, clienttest.ThroughProxy())
	d.CreateStream("s", "x", 2)
	c := newClient(t, d)
	ctx := testCtx(t)
	r, err := c.NewReader(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewReaderGroup(ctx, "s", "g", "x"); err != nil {
		t.Fatal(err)
	}
	gr, err := c.JoinReaderGroup(ctx, "s", "g", "r1")
	if err != nil {
		t.Fatal(err)
	}
	d.Proxy.Freeze()

	returns(t, "NewReader FromTail", func() {
		if _, err := c.NewReader(shortCtx(t), "s", "x", client.FromTail()); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("NewReader FromTail with the node frozen: %v, want context.DeadlineExceeded", err)
		}
	})
	returns(t, "ReadNext", func() {
		if _, err := r.ReadNext(shortCtx(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ReadNext with the node frozen: %v, want context.DeadlineExceeded", err)
		}
	})
	returns(t, "Reader.Close", func() { r.Close() })
	returns(t, "GroupReader.ReadNext", func() {
		if _, err := gr.ReadNext(shortCtx(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("GroupReader.ReadNext with the node frozen: %v, want context.DeadlineExceeded", err)
		}
	})
	returns(t, "GroupReader.Close", func() {
		// The controller answers: the reader leaves the group.
		if err := gr.Close(ctx); err != nil {
			t.Errorf("GroupReader.Close: %v", err)
		}
	})
}

// TestNewWriterRetriesUnreachableController: NewWriter retries while
// nothing listens at the controller's address, telling the retry hook
// each time, and returns when its ctx ends with both the ctx's error and
// the last failure.
func TestNewWriterRetriesUnreachableController(t *testing.T) {
	// The hook ends the caller's ctx at the third retry: no timing.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var attempts []int
	var last error
	c, err := client.New(context.Background(), "http://"+deadAddr(t), client.WithRetryNotify(func(attempt int, err error) {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, attempt)
		last = err
		if attempt == 3 {
			cancel()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var werr error
	returns(t, "NewWriter", func() {
		_, werr = c.NewWriter(ctx, "s", "x", client.WithBackoff(time.Millisecond, 20*time.Millisecond))
	})
	if !errors.Is(werr, context.Canceled) || !errors.Is(werr, ctlclient.ErrUnreachable) {
		t.Fatalf("NewWriter: %v, want context.Canceled and ctlclient.ErrUnreachable", werr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 3 || !errors.Is(last, ctlclient.ErrUnreachable) {
		t.Fatalf("retry hook called with attempts %v, last error %v; want 1, 2, 3, for ErrUnreachable", attempts, last)
	}

	// A missing stream is no reason to retry.
	d := clienttest.Start(t)
	c2 := newClient(t, d)
	if _, err := c2.NewWriter(testCtx(t), "s", "missing"); !errors.Is(err, ctlclient.ErrNotFound) {
		t.Fatalf("NewWriter of a missing stream: %v, want ctlclient.ErrNotFound", err)
	}
}

// giveUpController cancels the caller's ctx in CurrentSegments (the
// caller gives up while BeginTxn runs) once cancel is set, and records whether AbortTxn was
// called with a context that was still live.
type giveUpController struct {
	*ctlclient.Client
	cancel    context.CancelFunc
	mu        sync.Mutex
	liveAbort bool
}

func (g *giveUpController) CurrentSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error) {
	if g.cancel == nil { // NewWriter: no giving up yet
		return g.Client.CurrentSegments(ctx, scope, stream)
	}
	g.cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}

func (g *giveUpController) AbortTxn(ctx context.Context, scope, stream, id string) error {
	g.mu.Lock()
	g.liveAbort = g.liveAbort || ctx.Err() == nil
	g.mu.Unlock()
	return g.Client.AbortTxn(ctx, scope, stream, id)
}

// TestBeginTxnStaysWithinCtx: when the caller's ctx ends while BeginTxn
// runs, BeginTxn makes no call that outlives it (it used to abort the
// transaction for up to 10 s more on a context of its own).
func TestBeginTxnStaysWithinCtx(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	gc := &giveUpController{Client: d.Controller}
	c, err := client.New(context.Background(), "", client.WithController(gc))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := c.NewWriter(testCtx(t), "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(testCtx(t))
	ctx, cancel := context.WithCancel(context.Background())
	gc.cancel = cancel
	if _, err := w.BeginTxn(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("BeginTxn: %v, want context.Canceled", err)
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.liveAbort {
		t.Fatal("BeginTxn called AbortTxn with a context that outlives the caller's")
	}
}

// blockedSuccessors is a controller whose Successors tells entered, then
// blocks until the caller's ctx ends.
type blockedSuccessors struct {
	*ctlclient.Client
	entered chan struct{}
}

func (b *blockedSuccessors) Successors(ctx context.Context, segment string) ([]api.Successor, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestNoRetryNotifiedAfterClose: a writer closed while it asks the
// controller for a sealed segment's successors stops without telling the
// retry hook that it retries (it used to report the cancellation Close
// caused as a failure it would retry).
func TestNoRetryNotifiedAfterClose(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	ctl := &blockedSuccessors{Client: d.Controller, entered: make(chan struct{}, 1)}
	var mu sync.Mutex
	var notified []error
	c, err := client.New(context.Background(), "", client.WithController(ctl), client.WithRetryNotify(func(_ int, err error) {
		mu.Lock()
		defer mu.Unlock()
		notified = append(notified, err)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	// Sealed on the node behind the controller's back: the writer's
	// next append finds it sealed and asks for successors.
	if _, err := d.Dial().SealSegment(ctx, protocol.SegmentName("s", "x", 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(ctx, "k", []byte("e")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctl.entered:
	case <-ctx.Done():
		t.Fatal("the writer never asked for successors")
	}
	closeCtx, cancel := context.WithCancel(ctx)
	cancel() // Close only stops
	w.Close(closeCtx)
	mu.Lock()
	defer mu.Unlock()
	if len(notified) > 0 {
		t.Fatalf("retry hook called %d times around Close: %v", len(notified), notified)
	}
}
