package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestTxnsBackToBackRideThroughAutoScale: a writer that always holds a
// transaction open (it begins the next before committing the previous,
// as examples/pipeline does) writes far above a BY_RATE stream's target
// in transactions only. The stream splits (each scale waited for the
// transactions open when it was decided, and new ones waited for it); a
// reader reads every committed transaction's events exactly once in
// per-key order, and no aborted transaction's event.
func TestTxnsBackToBackRideThroughAutoScale(t *testing.T) {
	d := autoScaleDeployment(t, "txns")
	ctx := testCtx(t)
	c := newClient(t, d)
	r, err := c.NewReader(ctx, "s", "txns")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	read := readUntilEnd(ctx, r)

	w, err := c.NewWriter(ctx, "s", "txns")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	type result struct {
		counts   map[string]int // committed events per key
		refusals int            // begins refused because a scale was pending
		err      error
	}
	var rounds atomic.Int64
	stop := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		res := result{counts: map[string]int{}}
		fail := func(err error) { res.err = err; done <- res }
		cur, err := w.BeginTxn(ctx)
		if err != nil {
			fail(err)
			return
		}
		for i := 0; ; i++ {
			// 16 events, one per key; every 4th transaction is aborted,
			// its events marked so that none may be read.
			abort := i%4 == 3
			for k := 0; k < 16; k++ {
				key := fmt.Sprintf("k%d", k)
				data := fmt.Sprintf("%s:%d", key, res.counts[key])
				if abort {
					data = "aborted:" + data
				} else {
					res.counts[key]++
				}
				if err := cur.Write(ctx, key, []byte(data)); err != nil {
					fail(fmt.Errorf("write to transaction %s: %w", cur.ID(), err))
					return
				}
			}
			finish := cur.Commit
			if abort {
				finish = cur.Abort
			}
			select {
			case <-stop:
				if err := finish(ctx); err != nil {
					fail(err)
					return
				}
				done <- res
				return
			default:
			}
			// The next before the end of this one; refused while a scale
			// is pending: end this one first, then wait for the next.
			next, err := w.BeginTxn(ctx, client.WithoutScaleWait())
			switch {
			case errors.Is(err, ctlclient.ErrScalePending):
				if !strings.Contains(err.Error(), "new transactions wait until it has") {
					fail(fmt.Errorf("refusal does not say why: %w", err))
					return
				}
				res.refusals++
				if err := finish(ctx); err != nil {
					fail(err)
					return
				}
				if next, err = w.BeginTxn(ctx); err != nil {
					fail(fmt.Errorf("begin after a pending scale: %w", err))
					return
				}
			case err != nil:
				fail(err)
				return
			default:
				if err := finish(ctx); err != nil {
					fail(err)
					return
				}
			}
			cur = next
			rounds.Add(1)
		}
	}()

	segments := func() int { return segmentCount(t, ctx, d, "txns") }
	pollFor(t, "the stream written in transactions to split", func() bool { return segments() >= 2 })
	at := rounds.Load()
	pollFor(t, "transactions to go on after the split", func() bool { return rounds.Load() >= at+20 })
	close(stop)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	d.SealWhenIdle(ctx, "s", "txns")
	got := wantEndOfStream(t, read)

	for _, ev := range got {
		if strings.HasPrefix(ev, "aborted:") {
			t.Fatalf("read %q of an aborted transaction", ev)
		}
	}
	checkKeySeqs(t, got, res.counts, "committed")
	t.Logf("%d transactions, %d begins refused for a pending scale, %d segments at the end", rounds.Load(), res.refusals, segments())
	if res.refusals == 0 {
		t.Errorf("no begin was refused for a pending scale, yet the stream scaled with a transaction always open")
	}
	epochs, err := d.Controller.Epochs(ctx, "s", "txns")
	if err != nil {
		t.Fatal(err)
	}
	splits := 0
	for _, e := range epochs[1:] {
		if e.Trigger != api.TriggerAuto || !strings.Contains(e.Reason, "after waiting") {
			t.Errorf("epoch %d: trigger %q reason %q; want an automatic scale that waited for transactions", e.Epoch, e.Trigger, e.Reason)
		}
		if strings.Contains(e.Reason, "hot") {
			splits++
		}
	}
	if splits == 0 {
		t.Errorf("history %+v: no split", epochs)
	}
}

// TestBeginTxnWaitsForPendingScale: while an automatic scale waits for an
// open transaction, BeginTxn waits (retrying the refusal), returns the
// refusal at once with WithoutScaleWait, and returns ctx's error wrapped
// with the refusal when ctx ends first; once the open transaction
// commits, the scale runs and the waiting BeginTxn returns a transaction
// of the new epoch.
func TestBeginTxnWaitsForPendingScale(t *testing.T) {
	d := autoScaleDeployment(t, "wait")
	ctx := testCtx(t)
	var retries atomic.Int64
	c, err := client.New(ctx, d.URL, client.WithRetryNotify(func(int, error) { retries.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := c.NewWriter(ctx, "s", "wait")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	held, err := w.BeginTxn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Write(ctx, "k", []byte("held")); err != nil {
		t.Fatal(err)
	}
	// Make the stream hot outside the transaction, until the scale is
	// pending.
	for i := 0; ; i++ {
		l, err := d.Controller.ScalingEvents(ctx, "s", "wait")
		if err != nil {
			t.Fatal(err)
		}
		if p := l.Pending; p != nil {
			if len(p.SealedSegments) != 1 || len(p.NewRanges) != 2 || !strings.Contains(p.Reason, "hot") {
				t.Fatalf("pending scale %+v", p)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the scale never became pending")
		}
		if err := w.Flush(ctx); err != nil { // bounded: the write rate, not a wait
			t.Fatal(err)
		}
		for k := 0; k < 20; k++ {
			if _, err := w.Write(ctx, "k", []byte("plain")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = w.BeginTxn(ctx, client.WithoutScaleWait())
	if !errors.Is(err, ctlclient.ErrScalePending) || !errors.Is(err, ctlclient.ErrConflict) {
		t.Fatalf("BeginTxn without waiting: %v; want ErrScalePending", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = w.BeginTxn(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ctlclient.ErrScalePending) {
		t.Fatalf("BeginTxn whose ctx ends while the scale is pending: %v; want both the deadline and ErrScalePending", err)
	}

	type begun struct {
		txn *client.Txn
		err error
	}
	waiting := make(chan begun, 1)
	before := retries.Load()
	go func() {
		txn, err := w.BeginTxn(ctx)
		waiting <- begun{txn, err}
	}()
	pollFor(t, "BeginTxn to retry the refusal", func() bool { return retries.Load() >= before+2 })
	select {
	case b := <-waiting:
		t.Fatalf("BeginTxn returned (%v) while the scale waited for an open transaction", b.err)
	default:
	}
	if err := held.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b := <-waiting
	if b.err != nil {
		t.Fatalf("BeginTxn after the commit: %v", b.err)
	}
	defer b.txn.Abort(ctx)
	info, err := d.Controller.GetTxn(ctx, "s", "wait", b.txn.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Epoch != 1 || len(info.Segments) != 2 {
		t.Fatalf("the transaction begun after the scale: %+v; want epoch 1 with 2 segments", info)
	}
	l, err := d.Controller.ScalingEvents(ctx, "s", "wait")
	if err != nil || l.Pending != nil || len(l.GivenUp) != 0 || len(l.Epochs) != 2 || !strings.Contains(l.Epochs[1].Reason, "after waiting") {
		t.Fatalf("scaling events after the scale: %+v, %v", l, err)
	}
}
