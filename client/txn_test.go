package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// txnSegments returns the transaction's segments, as the controller
// lists them.
func txnSegments(t *testing.T, ctl *ctlclient.Client, scope, stream, id string) []string {
	t.Helper()
	info, err := ctl.GetTxn(context.Background(), scope, stream, id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Segments
}

// readByKey reads segments whole and returns their events "kind:key:i"
// grouped by key, in segment order.
func readByKey(t *testing.T, d *clienttest.Deployment, segments []string) map[string][]string {
	t.Helper()
	conn := d.Dial()
	out := map[string][]string{}
	for _, seg := range segments {
		for _, ev := range d.ReadAll(conn, seg) {
			parts := strings.Split(string(ev), ":")
			if len(parts) != 3 {
				t.Fatalf("segment %s: bad event %q", seg, ev)
			}
			out[parts[1]] = append(out[parts[1]], string(ev))
		}
	}
	return out
}

func wantMissing(t *testing.T, d *clienttest.Deployment, segments []string) {
	t.Helper()
	conn := d.Dial()
	for _, seg := range segments {
		if _, err := conn.GetSegmentInfo(context.Background(), seg); !errors.Is(err, protocol.ErrNoSuchSegment) {
			t.Errorf("transaction segment %s: got %v, want it gone (ErrNoSuchSegment)", seg, err)
		}
	}
}

func events(kind, key string, from, to int) []string {
	var evs []string
	for i := from; i < to; i++ {
		evs = append(evs, fmt.Sprintf("%s:%s:%d", kind, key, i))
	}
	return evs
}

func TestTxnCommit(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 3)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	writeOut := func(from, to int) {
		t.Helper()
		for _, k := range keys {
			for _, ev := range events("out", k, from, to) {
				if _, err := w.Write(ctx, k, []byte(ev)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}

	writeOut(0, 3)
	txn, err := w.BeginTxn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, ev := range events("txn", k, 0, 20) {
			if err := txn.Write(ctx, k, []byte(ev)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := txn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	writeOut(3, 5) // outside the transaction while it is open

	parents := segmentNames(t, d, "s", "x")
	tsegs := txnSegments(t, d.Controller, "s", "x", txn.ID())
	before := readByKey(t, d, parents)
	for _, k := range keys {
		if want := events("out", k, 0, 5); !reflect.DeepEqual(before[k], want) {
			t.Fatalf("key %s before commit: parents hold %q, want only %q", k, before[k], want)
		}
	}
	inTxn := readByKey(t, d, tsegs)
	for _, k := range keys {
		if want := events("txn", k, 0, 20); !reflect.DeepEqual(inTxn[k], want) {
			t.Fatalf("key %s: transaction segments hold %q, want %q", k, inTxn[k], want)
		}
	}

	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := txn.Status(ctx); err != nil || st != api.TxnCommitted {
		t.Fatalf("status after commit: %q, %v", st, err)
	}
	select {
	case <-txn.Done():
	default:
		t.Fatal("Done not closed after Commit")
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatalf("second Commit: %v", err)
	}
	if err := txn.Write(ctx, "a", []byte("late")); !errors.Is(err, client.ErrTxnNotOpen) {
		t.Fatalf("Write after Commit: %v, want ErrTxnNotOpen", err)
	}
	writeOut(5, 7)

	after := readByKey(t, d, parents)
	for _, k := range keys {
		want := append(append(events("out", k, 0, 5), events("txn", k, 0, 20)...), events("out", k, 5, 7)...)
		if !reflect.DeepEqual(after[k], want) {
			t.Errorf("key %s after commit:\n got %q\nwant %q", k, after[k], want)
		}
	}
	wantMissing(t, d, tsegs)
}

func TestTxnAbort(t *testing.T) {
	d, txn, ctx := startTxn(t, 2)
	tsegs := txnSegments(t, d.Controller, "s", "x", txn.ID())
	for i := range 100 {
		if err := txn.Write(ctx, fmt.Sprint(i%7), []byte(fmt.Sprintf("txn:%d:%d", i%7, i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := txn.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := txn.Status(ctx); err != nil || st != api.TxnAborted {
		t.Fatalf("status after abort: %q, %v", st, err)
	}
	if got := readByKey(t, d, segmentNames(t, d, "s", "x")); len(got) != 0 {
		t.Fatalf("aborted events readable: %q", got)
	}
	wantMissing(t, d, tsegs)
	if err := txn.Write(ctx, "a", []byte("late")); !errors.Is(err, client.ErrTxnNotOpen) {
		t.Fatalf("Write after Abort: %v, want ErrTxnNotOpen", err)
	}
	if err := txn.Commit(ctx); !errors.Is(err, client.ErrTxnNotOpen) {
		t.Fatalf("Commit after Abort: %v, want ErrTxnNotOpen", err)
	}
	if err := txn.Abort(ctx); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	<-txn.Done()
}

func TestTxnEventTooLarge(t *testing.T) {
	d, txn, ctx := startTxn(t, 1)
	if err := txn.Write(ctx, "k", make([]byte, protocol.MaxEventSize+1)); !errors.Is(err, protocol.ErrEventTooLarge) {
		t.Fatalf("Write of a too large event: %v, want ErrEventTooLarge", err)
	}
	if err := txn.Write(ctx, "k", []byte("txn:k:0")); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readByKey(t, d, segmentNames(t, d, "s", "x")); !reflect.DeepEqual(got["k"], []string{"txn:k:0"}) {
		t.Fatalf("after commit: %q", got)
	}
}

// sweepingController runs a second controller, over the deployment's node,
// whose transaction sweeper runs every few milliseconds (clienttest's has
// none), and returns a REST client of it. Its scopes must not be the
// deployment controller's: both name segments on the same node.
func sweepingController(t *testing.T, d *clienttest.Deployment) *ctlclient.Client {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "sweeping.db"))
	if err != nil {
		t.Fatal(err)
	}
	segs := controller.NewNodeSegments(controller.StaticLocator(d.NodeAddr))
	svc := controller.New(st, segs, controller.Options{Logger: clienttest.Quiet(), TxnSweepInterval: 5 * time.Millisecond})
	hs := httptest.NewServer(rest.NewHandler(svc, clienttest.Quiet(),
		rest.WithLocator(controller.StaticNode{Addr: d.NodeAddr, Containers: clienttest.Containers})))
	t.Cleanup(func() {
		hs.Close()
		svc.Close()
		segs.Close()
		st.Close()
	})
	ctl := ctlclient.NewClient(hs.URL)
	ctx := context.Background()
	if err := ctl.CreateScope(ctx, "swept"); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: "swept", StreamName: "x",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 2}}); err != nil {
		t.Fatal(err)
	}
	return ctl
}

// sweptWriter starts a deployment under sweepingController and returns a
// writer of swept/x, closed at the end of the test.
func sweptWriter(t *testing.T) (*clienttest.Deployment, *ctlclient.Client, context.Context, *client.Writer) {
	t.Helper()
	d := clienttest.Start(t)
	ctl := sweepingController(t, d)
	ctx := testCtx(t)
	c, err := client.New(ctx, "", client.WithController(ctl))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w, err := c.NewWriter(ctx, "swept", "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(ctx) })
	return d, ctl, ctx, w
}

// TestTxnLeaseExpiry: a transaction that is not pinged is aborted by the
// controller's sweeper once its lease runs out; Commit then fails with
// ErrTxnExpired and nothing of it is ever readable.
func TestTxnLeaseExpiry(t *testing.T) {
	d, ctl, ctx, w := sweptWriter(t)
	txn, err := w.BeginTxn(ctx, client.WithLease(50*time.Millisecond), client.WithPingInterval(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	tsegs := txnSegments(t, ctl, "swept", "x", txn.ID())
	for i := range 20 {
		if err := txn.Write(ctx, fmt.Sprint(i), []byte(fmt.Sprintf("txn:%d:0", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the sweeper to abort the transaction", func() bool {
		st, err := txn.Status(ctx)
		return err == nil && st == api.TxnAborted
	})
	err = txn.Commit(ctx)
	if !errors.Is(err, client.ErrTxnExpired) || !errors.Is(err, client.ErrTxnAborted) {
		t.Fatalf("Commit of an expired transaction: %v, want ErrTxnExpired and ErrTxnAborted", err)
	}
	t.Logf("Commit: %v", err)
	if err := txn.Write(ctx, "a", []byte("late")); !errors.Is(err, client.ErrTxnExpired) {
		t.Fatalf("Write after expiry: %v, want ErrTxnExpired", err)
	}
	<-txn.Done()
	parents, err := ctl.CurrentSegments(ctx, "swept", "x")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parents {
		names = append(names, p.Segment)
	}
	if got := readByKey(t, d, names); len(got) != 0 {
		t.Fatalf("events of an expired transaction readable: %q", got)
	}
	wantMissing(t, d, tsegs)
	if err := txn.Abort(ctx); err != nil {
		t.Fatalf("Abort of an expired transaction: %v", err)
	}
}

// TestTxnPingerKeepsLease: with the background pinger a transaction lives
// past its lease, under a sweeper that aborts it as soon as a lease runs
// out, and commits.
func TestTxnPingerKeepsLease(t *testing.T) {
	_, ctl, ctx, w := sweptWriter(t)
	const lease = 300 * time.Millisecond
	txn, err := w.BeginTxn(ctx, client.WithLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	first, err := ctl.GetTxn(ctx, "swept", "x", txn.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Write(ctx, "k", []byte("txn:k:0")); err != nil {
		t.Fatal(err)
	}
	// A ping accepted after the first lease's end proves the pings kept
	// the transaction alive: PingTxn refuses an expired one.
	waitFor(t, "a ping after the first lease's end", func() bool {
		info, err := ctl.GetTxn(ctx, "swept", "x", txn.ID())
		return err == nil && info.ExpiryTime > first.ExpiryTime+lease.Milliseconds()
	})
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTxnPingRefused: the background pinger's first ping comes after the
// lease ended; the controller refuses it, and the Txn is lost: Done is
// closed, and Write and Commit fail with ErrTxnExpired.
func TestTxnPingRefused(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	txn, err := w.BeginTxn(ctx, client.WithLease(10*time.Millisecond), client.WithPingInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-txn.Done():
	case <-ctx.Done():
		t.Fatal("the refused ping did not end the transaction")
	}
	if err := txn.Err(); !errors.Is(err, client.ErrTxnExpired) {
		t.Fatalf("Err: %v, want ErrTxnExpired", err)
	}
	if err := txn.Write(ctx, "k", []byte("x")); !errors.Is(err, client.ErrTxnExpired) {
		t.Fatalf("Write: %v, want ErrTxnExpired", err)
	}
	if err := txn.Commit(ctx); !errors.Is(err, client.ErrTxnExpired) {
		t.Fatalf("Commit: %v, want ErrTxnExpired", err)
	}
	if err := txn.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := txn.Status(ctx); err != nil || st != api.TxnAborted {
		t.Fatalf("status after abort: %q, %v", st, err)
	}
}

// TestTxnReconnect: the node stops and starts again while a transaction
// is being written; after Commit every event is in the stream exactly
// once, in order per key.
func TestTxnReconnect(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 2)
	c := newClient(t, d)
	ctx := testCtx(t)
	var disconnected atomic.Int64
	w, err := c.NewWriter(ctx, "s", "x", client.WithBackoff(time.Millisecond, 50*time.Millisecond),
		client.WithStateFunc(func(sc client.StateChange) {
			if sc.State == client.StateDisconnected && strings.Contains(sc.Segment, "#transaction") {
				disconnected.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	txn, err := w.BeginTxn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	write := func(n int) {
		t.Helper()
		for i := range n {
			k := fmt.Sprint("k", i%10)
			if err := txn.Write(ctx, k, []byte(fmt.Sprintf("%s:%d", k, counts[k]))); err != nil {
				t.Fatal(err)
			}
			counts[k]++
		}
	}
	write(3000)
	d.StopNode()
	write(2000)
	waitFor(t, "the transaction's writer to see the node go", func() bool { return disconnected.Load() > 0 })
	d.StartNode()
	write(3000)
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, segmentNames(t, d, "s", "x"), counts)
}

// TestTxnScaleWaits: a manual scale is refused (409) while a transaction is
// open, and succeeds once it is committed.
func TestTxnScaleWaits(t *testing.T) {
	d, txn, ctx := startTxn(t, 2)
	if err := txn.Write(ctx, "k", []byte("txn:k:0")); err != nil {
		t.Fatal(err)
	}
	req := api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}}
	_, err := d.Controller.Scale(ctx, "s", "x", req)
	var ce *ctlclient.Error
	if !errors.Is(err, ctlclient.ErrConflict) || !errors.As(err, &ce) || ce.StatusCode != 409 {
		t.Fatalf("scale with an open transaction: %v, want 409 CONFLICT", err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Controller.Scale(ctx, "s", "x", req); err != nil {
		t.Fatalf("scale after commit: %v", err)
	}
}

// startTxn starts a deployment with stream s/x of segments segments, a
// client and a writer (closed at the end of the test), and begins a
// transaction.
func startTxn(t *testing.T, segments int) (*clienttest.Deployment, *client.Txn, context.Context) {
	t.Helper()
	d := clienttest.Start(t)
	d.CreateStream("s", "x", segments)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(ctx) })
	txn, err := w.BeginTxn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d, txn, ctx
}
