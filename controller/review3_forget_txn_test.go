package controller

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol/api"
)

// failStreamCASStore fails the next compare-and-set of the stream record
// once armed (a cancelled request, a store that timed out).
type failStreamCASStore struct {
	cluster.Store
	key   string
	armed atomic.Bool
}

func (f *failStreamCASStore) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	if key == f.key && f.armed.CompareAndSwap(true, false) {
		return 0, errors.New("injected: request cancelled")
	}
	return f.Store.CompareAndSet(ctx, key, value, expected)
}

// TestReview3CommittedTxnLeftListedBlocksScalesForever: a commit whose
// request ends (cancelled, a store error) after markCommitted but before
// forgetTxn leaves the transaction COMMITTED in its record and still
// listed in the stream's Txns. Nothing but a restart's Resume forgets it:
// the client's retried CommitTxn returns nil without forgetting (runTxn
// does nothing for COMMITTED), and the sweeper only completes COMMITTING
// and ABORTING ones. Every scale of the stream is then refused for ever
// ("has 1 unfinished transactions"), and an automatic one marks the
// stream pending, refusing new transactions, until it is given up, again
// and again.
func TestReview3CommittedTxnLeftListedBlocksScalesForever(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	fs := &failStreamCASStore{Store: e.store, key: streamKey("sc", "st")}
	hook := func(w, step string) error {
		if w == kindCommit && step == "markCommitted" {
			fs.armed.Store(true)
		}
		return nil
	}
	s := New(fs, NewNodeSegments(StaticLocator(e.addr)), Options{Clock: e.clock.now, Logger: quietLog(), StepHook: hook,
		TxnSweepInterval: -1, RetentionInterval: -1, WatermarkInterval: -1, AutoScale: AutoScaleOptions{Interval: -1}})
	t.Cleanup(func() { s.Close() })
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
	must(t, err)
	tx, err := s.CreateTxn(ctx, "sc", "st", 10*time.Second)
	must(t, err)
	if err := s.CommitTxn(ctx, "sc", "st", tx.ID); err == nil {
		t.Fatal("the injected failure of forgetTxn was not hit")
	}
	// The client retries its commit: success.
	must(t, s.CommitTxn(ctx, "sc", "st", tx.ID))
	// Past the lease, the sweeper runs.
	e.clock.advance(time.Minute)
	must(t, s.sweepExpiredTxns(ctx))
	if r := record(t, e.store, "sc", "st"); len(r.Txns) != 0 {
		t.Errorf("the committed transaction is still listed on the stream after the retried commit and a sweep: %v", r.Txns)
	}
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}})
	if err != nil {
		t.Fatalf("scale after the transaction was committed: %v", err)
	}
}
