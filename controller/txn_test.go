package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// txnSetup makes scope sc, stream st with 2 segments, and an open
// transaction with one event written to each of its segments.
func txnSetup(t *testing.T, e *env, s *Service) (api.TxnInfo, []api.SegmentRange) {
	t.Helper()
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 2))
	must(t, err)
	parents, err := s.CurrentSegments(ctx, "sc", "st")
	must(t, err)
	c := e.conn()
	write(t, c, parents[0].Segment, "before-0")
	tx, err := s.CreateTxn(ctx, "sc", "st", 10*time.Second)
	must(t, err)
	if tx.Status != api.TxnOpen || len(tx.Segments) != 2 || tx.Epoch != 0 || tx.LeaseMillis != 10000 {
		t.Fatalf("created %+v", tx)
	}
	for i, seg := range tx.Segments {
		equal(t, "transaction segment's parent", protocol.ParentSegment(seg), parents[i].Segment)
		write(t, c, seg, "txn-"+string(rune('0'+i)), "txn-"+string(rune('0'+i))+"b")
	}
	equal(t, "parent 0 before commit", read(t, c, parents[0].Segment), []string{"before-0"})
	equal(t, "parent 1 before commit", read(t, c, parents[1].Segment), []string{})
	return tx, parents
}

func committed(t *testing.T, e *env, parents []api.SegmentRange, tx api.TxnInfo) {
	t.Helper()
	c := e.conn()
	equal(t, "parent 0 after commit", read(t, c, parents[0].Segment), []string{"before-0", "txn-0", "txn-0b"})
	equal(t, "parent 1 after commit", read(t, c, parents[1].Segment), []string{"txn-1", "txn-1b"})
	for _, seg := range tx.Segments {
		equal(t, "transaction segment after commit", segState(t, c, seg), "missing")
	}
}

func TestTxnCommit(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	tx, parents := txnSetup(t, e, s)
	tx2, err := s.PingTxn(ctx, "sc", "st", tx.ID, 20*time.Second)
	must(t, err)
	equal(t, "expiry after ping", tx2.ExpiryTime, e.clock.now().UnixMilli()+20000)
	must(t, s.CommitTxn(ctx, "sc", "st", tx.ID))
	committed(t, e, parents, tx)
	must(t, s.CommitTxn(ctx, "sc", "st", tx.ID)) // again: success, nothing more
	committed(t, e, parents, tx)
	got, err := s.GetTxn(ctx, "sc", "st", tx.ID)
	must(t, err)
	equal(t, "status", got.Status, api.TxnCommitted)
	wantErr(t, "abort a committed transaction", s.AbortTxn(ctx, "sc", "st", tx.ID), ErrConflict)
	_, err = s.PingTxn(ctx, "sc", "st", tx.ID, time.Second)
	wantErr(t, "ping a committed transaction", err, ErrConflict)
	if r := record(t, e.store, "sc", "st"); len(r.Txns) != 0 {
		t.Fatalf("stream still lists %v", r.Txns)
	}
}

func TestTxnAbort(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	tx, parents := txnSetup(t, e, s)
	must(t, s.AbortTxn(ctx, "sc", "st", tx.ID))
	must(t, s.AbortTxn(ctx, "sc", "st", tx.ID))
	c := e.conn()
	equal(t, "parent 0 after abort", read(t, c, parents[0].Segment), []string{"before-0"})
	equal(t, "parent 1 after abort", read(t, c, parents[1].Segment), []string{})
	for _, seg := range tx.Segments {
		equal(t, "transaction segment after abort", segState(t, c, seg), "missing")
	}
	wantErr(t, "commit an aborted transaction", s.CommitTxn(ctx, "sc", "st", tx.ID), ErrConflict)
	got, err := s.GetTxn(ctx, "sc", "st", tx.ID)
	must(t, err)
	equal(t, "status", got.Status, api.TxnAborted)
}

func TestTxnLeaseExpiry(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	tx, parents := txnSetup(t, e, s)
	_, err := s.PingTxn(ctx, "sc", "st", tx.ID, DefaultMaxTxnLease+time.Second)
	wantErr(t, "ping above the max lease", err, ErrInvalid)

	e.clock.advance(9 * time.Second)
	must(t, s.sweepExpiredTxns(ctx))
	got, err := s.GetTxn(ctx, "sc", "st", tx.ID)
	must(t, err)
	equal(t, "status before expiry", got.Status, api.TxnOpen)

	e.clock.advance(time.Second)
	_, err = s.PingTxn(ctx, "sc", "st", tx.ID, time.Second)
	wantErr(t, "ping after expiry", err, ErrConflict)
	wantErr(t, "commit after expiry", s.CommitTxn(ctx, "sc", "st", tx.ID), ErrConflict)
	must(t, s.sweepExpiredTxns(ctx))
	got, err = s.GetTxn(ctx, "sc", "st", tx.ID)
	must(t, err)
	equal(t, "status after expiry", got.Status, api.TxnAborted)
	c := e.conn()
	equal(t, "parent 1 after expiry", read(t, c, parents[1].Segment), []string{})
	for _, seg := range tx.Segments {
		equal(t, "transaction segment after expiry", segState(t, c, seg), "missing")
	}
}

// TestTxnSweeperGoroutine lets the Service's own sweeper abort an expired
// transaction; the test waits on a watch of the transaction's record.
func TestTxnSweeperGoroutine(t *testing.T) {
	e := newEnv(t)
	setup := e.service(nil)
	tx, _ := txnSetup(t, e, setup)
	ctx := ctxT(t)
	events, err := e.store.Watch(ctx, txnKey("sc", "st", tx.ID))
	must(t, err)
	e.clock.advance(time.Minute)
	segs := NewNodeSegments(StaticLocator(e.addr))
	defer segs.Close()
	s := New(e.store, segs, Options{Clock: e.clock.now, Logger: quietLog(), TxnSweepInterval: time.Millisecond})
	defer s.Close()
	for {
		got, err := s.GetTxn(ctx, "sc", "st", tx.ID)
		must(t, err)
		if got.Status == api.TxnAborted {
			break
		}
		select {
		case <-events:
		case <-ctx.Done():
			t.Fatalf("the sweeper did not abort the transaction: %+v", got)
		}
	}
	must(t, s.Close())
}

// TestTxnCommitCrashAtEveryStep stops a commit before each step; a new
// Service resumes it and every event appears in its parent exactly once.
func TestTxnCommitCrashAtEveryStep(t *testing.T) {
	for _, step := range []string{stepIntent, "sealTxnSegments", "mergeTxnSegments", "markCommitted"} {
		t.Run(step, func(t *testing.T) {
			e := newEnv(t)
			s1 := e.service(crashAt(kindCommit, step))
			tx, parents := txnSetup(t, e, s1)
			err := s1.CommitTxn(ctxT(t), "sc", "st", tx.ID)
			wantErr(t, "commit stopped before "+step, err, ErrStepFailed)
			s1.Close()
			s2 := e.service(nil)
			must(t, s2.Resume(ctxT(t)))
			if step == stepIntent {
				got, err := s2.GetTxn(ctxT(t), "sc", "st", tx.ID)
				must(t, err)
				equal(t, "status after a commit stopped before its intent", got.Status, api.TxnOpen)
				must(t, s2.CommitTxn(ctxT(t), "sc", "st", tx.ID))
			}
			committed(t, e, parents, tx)
			must(t, s2.Resume(ctxT(t))) // and again: nothing merges twice
			committed(t, e, parents, tx)
			got, err := s2.GetTxn(ctxT(t), "sc", "st", tx.ID)
			must(t, err)
			equal(t, "status", got.Status, api.TxnCommitted)
			if r := record(t, e.store, "sc", "st"); len(r.Txns) != 0 {
				t.Fatalf("stream still lists %v", r.Txns)
			}
		})
	}
}

// failingMerges is a SegmentStore whose MergeSegments fails after n
// successful merges: a crash in the middle of the merge step.
type failingMerges struct {
	SegmentStore
	mu sync.Mutex
	n  int
}

func (f *failingMerges) MergeSegments(ctx context.Context, target, source string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return 0, errors.New("injected: node unreachable")
	}
	f.n--
	return f.SegmentStore.MergeSegments(ctx, target, source)
}

func TestTxnCommitCrashBetweenMerges(t *testing.T) {
	e := newEnv(t)
	setup := e.service(nil)
	tx, parents := txnSetup(t, e, setup)
	segs := NewNodeSegments(StaticLocator(e.addr))
	defer segs.Close()
	s1 := New(e.store, &failingMerges{SegmentStore: segs, n: 1}, Options{Clock: e.clock.now, Logger: quietLog(), TxnSweepInterval: -1})
	if err := s1.CommitTxn(ctxT(t), "sc", "st", tx.ID); err == nil {
		t.Fatal("commit with a failing merge succeeded")
	}
	s1.Close()
	c := e.conn()
	equal(t, "first transaction segment merged", segState(t, c, tx.Segments[0]), "missing")
	equal(t, "second transaction segment waiting", segState(t, c, tx.Segments[1]), "sealed")
	_, err := setup.CreateTxn(ctxT(t), "sc", "st", 0)
	must(t, err) // committing transactions do not block new ones
	must(t, e.service(nil).Resume(ctxT(t)))
	committed(t, e, parents, tx)
}

// TestScaleWaitsForTransactions shows the rule chosen instead of rolling
// transactions: a scale is refused while a transaction is unfinished, and a
// transaction cannot start while a scale is; so a transaction always
// commits into the epoch it was created in.
func TestScaleWaitsForTransactions(t *testing.T) {
	e := newEnv(t)
	s := e.service(crashAt(kindScale, "sealSegments"))
	ctx := ctxT(t)
	tx, parents := txnSetup(t, e, s)
	req := api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}}
	before := dump(t, e.store)
	_, err := s.Scale(ctx, "sc", "st", req)
	wantErr(t, "scale with an open transaction", err, ErrConflict)
	equal(t, "store after a refused scale", dump(t, e.store), before)

	must(t, s.CommitTxn(ctx, "sc", "st", tx.ID))
	committed(t, e, parents, tx)

	// Now the scale runs; stopped halfway, it keeps new transactions out.
	_, err = s.Scale(ctx, "sc", "st", req)
	wantErr(t, "scale stopped", err, ErrStepFailed)
	_, err = s.CreateTxn(ctx, "sc", "st", 0)
	wantErr(t, "transaction during a scale", err, ErrConflict)
	must(t, s.Resume(ctx))
	tx2, err := s.CreateTxn(ctx, "sc", "st", 0)
	must(t, err)
	equal(t, "epoch of a transaction after the scale", tx2.Epoch, int64(1))
	equal(t, "segments of a transaction after the scale", len(tx2.Segments), 3)
}

// TestSealAbortsOpenTransactions: sealing a stream aborts its open
// transactions (as Pravega's seal does) and completes a commit in flight.
func TestSealAbortsOpenTransactions(t *testing.T) {
	e := newEnv(t)
	s := e.service(crashAt(kindCommit, "mergeTxnSegments"))
	ctx := ctxT(t)
	tx, parents := txnSetup(t, e, s)
	wantErr(t, "commit stopped", s.CommitTxn(ctx, "sc", "st", tx.ID), ErrStepFailed)
	open, err := s.CreateTxn(ctx, "sc", "st", 0)
	must(t, err)
	c := e.conn()
	write(t, c, open.Segments[0], "never")
	must(t, s.SealStream(ctx, "sc", "st"))
	committed(t, e, parents, tx)
	got, err := s.GetTxn(ctx, "sc", "st", open.ID)
	must(t, err)
	equal(t, "open transaction after seal", got.Status, api.TxnAborted)
	equal(t, "its segment", segState(t, c, open.Segments[0]), "missing")
	must(t, s.DeleteStream(ctx, "sc", "st"))
	equal(t, "store after delete", dump(t, e.store), map[string]string{
		"scopes": "", "scopes/sc": dump(t, e.store)["scopes/sc"], "scopes/sc/streams": ""})
}
