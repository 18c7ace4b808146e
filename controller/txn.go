package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// txnRec is the value of scopes/<scope>/streams/<stream>/txns/<id>. Its
// Status is the commit/abort workflow's record: the steps between two
// statuses are idempotent, so they need no finer record.
type txnRec struct {
	ID           string   `json:"id"`
	Scope        string   `json:"scope"`
	Stream       string   `json:"stream"`
	Epoch        int64    `json:"epoch"`
	Parents      []string `json:"parents"`
	Segments     []string `json:"segments"` // Segments[i] is the shadow of Parents[i]
	LeaseMillis  int64    `json:"leaseMillis"`
	ExpiryTime   int64    `json:"expiryTime"`
	CreationTime int64    `json:"creationTime"`
	Status       string   `json:"status"`
}

func (t *txnRec) info() api.TxnInfo {
	return api.TxnInfo{ID: t.ID, Scope: t.Scope, Stream: t.Stream, Epoch: t.Epoch, Segments: append([]string{}, t.Segments...),
		LeaseMillis: t.LeaseMillis, ExpiryTime: t.ExpiryTime, Status: t.Status}
}

func (s *Service) checkLease(lease time.Duration) (time.Duration, error) {
	if lease == 0 {
		lease = DefaultTxnLease
	}
	if lease < time.Millisecond || lease > s.opts.MaxTxnLease {
		return 0, fmt.Errorf("%w: transaction lease %v not in 1ms..%v", ErrInvalid, lease, s.opts.MaxTxnLease)
	}
	return lease, nil
}

// CreateTxn opens a transaction on a stream, with one transaction segment
// per active segment created on the nodes, leased for lease
// (DefaultTxnLease if 0; ErrInvalid above Options.MaxTxnLease). ErrConflict
// if the stream is sealed or a scale, seal or delete is in progress;
// ErrScalePending (which is also ErrConflict) while a scale is in progress
// or an automatic scale waits for the stream's open transactions to end
// (txnscale.go): retry.
func (s *Service) CreateTxn(ctx context.Context, scope, stream string, lease time.Duration) (api.TxnInfo, error) {
	lease, err := s.checkLease(lease)
	if err != nil {
		return api.TxnInfo{}, err
	}
	for attempt := 0; ; attempt++ {
		r, err := s.load(ctx, scope, stream)
		if err != nil {
			return api.TxnInfo{}, err
		}
		if err := txnRefused(r); err != nil {
			return api.TxnInfo{}, err
		}
		now := s.nowMillis()
		t := &txnRec{ID: newUUID(), Scope: scope, Stream: stream, Epoch: r.current().Epoch, LeaseMillis: lease.Milliseconds(),
			ExpiryTime: now + lease.Milliseconds(), CreationTime: now, Status: api.TxnOpen}
		for _, n := range r.current().Segments {
			p := r.name(r.Segments[n])
			t.Parents = append(t.Parents, p)
			t.Segments = append(t.Segments, protocol.TransactionSegmentName(p, t.ID))
		}
		// The record first, then the stream's list of unfinished
		// transactions (the compare-and-set that a scale also goes
		// through), then the segments.
		b, _ := json.Marshal(t)
		if _, err := s.store.Create(ctx, txnKey(scope, stream, t.ID), b); err != nil {
			return api.TxnInfo{}, err
		}
		epochMoved := false
		_, err = s.update(ctx, scope, stream, func(r *streamRec) error {
			if err := txnRefused(r); err != nil {
				return err
			}
			if r.current().Epoch != t.Epoch {
				epochMoved = true
				return errNoChange
			}
			if r.Txns == nil {
				r.Txns = map[string]txnRef{}
			}
			r.Txns[t.ID] = txnRef{Epoch: t.Epoch}
			return nil
		})
		if err != nil || epochMoved {
			s.store.Delete(ctx, txnKey(scope, stream, t.ID), cluster.AnyVersion)
			if err != nil {
				return api.TxnInfo{}, err
			}
			if attempt < 3 {
				continue
			}
			return api.TxnInfo{}, fmt.Errorf("%w: stream %s/%s keeps scaling", ErrConflict, scope, stream)
		}
		for _, seg := range t.Segments {
			if err := s.segs.CreateSegment(ctx, seg, nil); err != nil {
				if aerr := s.AbortTxn(ctx, scope, stream, t.ID); aerr != nil {
					s.log.WithError(aerr).Warn("abort of a transaction whose creation failed; the sweeper retries")
				}
				return api.TxnInfo{}, err
			}
		}
		return t.info(), nil
	}
}

func txnRefused(r *streamRec) error {
	if r.Sealed {
		return fmt.Errorf("%w: stream %s/%s is sealed", ErrConflict, r.Config.ScopeName, r.Config.StreamName)
	}
	if w := r.Workflow; w != nil && w.Kind == kindScale {
		// Transient like a pending scale (Resume completes it): the same
		// retriable refusal.
		return fmt.Errorf("%w: stream %s/%s is scaling: new transactions wait until it has", ErrScalePending,
			r.Config.ScopeName, r.Config.StreamName)
	}
	if w := r.Workflow; w != nil && w.Kind != kindTruncate {
		return fmt.Errorf("%w: stream %s/%s: a %s workflow is in progress", ErrConflict, r.Config.ScopeName, r.Config.StreamName, w.Kind)
	}
	return scaleWaitRefusal(r)
}

func checkTxnID(id string) error {
	if err := api.ValidateTxnID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func (s *Service) loadTxn(ctx context.Context, scope, stream, id string) (*txnRec, cluster.Version, error) {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return nil, 0, err
	}
	if err := checkTxnID(id); err != nil {
		return nil, 0, err
	}
	kv, err := s.store.Get(ctx, txnKey(scope, stream, id))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return nil, 0, fmt.Errorf("%w: transaction %s of %s/%s", ErrNotFound, id, scope, stream)
	}
	if err != nil {
		return nil, 0, err
	}
	var t txnRec
	if err := json.Unmarshal(kv.Value, &t); err != nil {
		return nil, 0, fmt.Errorf("controller: transaction record %s: %w", kv.Key, err)
	}
	return &t, kv.Version, nil
}

// updateTxn is update for a transaction record.
func (s *Service) updateTxn(ctx context.Context, scope, stream, id string, fn func(t *txnRec) error) (*txnRec, error) {
	for {
		t, v, err := s.loadTxn(ctx, scope, stream, id)
		if err != nil {
			return nil, err
		}
		if err := fn(t); err != nil {
			if errors.Is(err, errNoChange) {
				return t, nil
			}
			return nil, err
		}
		b, _ := json.Marshal(t)
		_, err = s.store.CompareAndSet(ctx, txnKey(scope, stream, id), b, v)
		if errors.Is(err, cluster.ErrVersionMismatch) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// GetTxn returns a transaction's state.
func (s *Service) GetTxn(ctx context.Context, scope, stream, id string) (api.TxnInfo, error) {
	t, _, err := s.loadTxn(ctx, scope, stream, id)
	if err != nil {
		return api.TxnInfo{}, err
	}
	return t.info(), nil
}

// PingTxn renews an OPEN transaction's lease to lease from now (ErrInvalid
// above Options.MaxTxnLease; ErrConflict if the transaction is no longer
// OPEN or its lease has expired already).
func (s *Service) PingTxn(ctx context.Context, scope, stream, id string, lease time.Duration) (api.TxnInfo, error) {
	lease, err := s.checkLease(lease)
	if err != nil {
		return api.TxnInfo{}, err
	}
	t, err := s.updateTxn(ctx, scope, stream, id, func(t *txnRec) error {
		now := s.nowMillis()
		if t.Status != api.TxnOpen {
			return fmt.Errorf("%w: transaction %s is %s", ErrConflict, id, t.Status)
		}
		if now >= t.ExpiryTime {
			return fmt.Errorf("%w: transaction %s: lease expired", ErrConflict, id)
		}
		t.LeaseMillis = lease.Milliseconds()
		t.ExpiryTime = now + t.LeaseMillis
		return nil
	})
	if err != nil {
		return api.TxnInfo{}, err
	}
	return t.info(), nil
}

// CommitTxn commits a transaction: intent (status COMMITTING), then
// sealTxnSegments, mergeTxnSegments (each into its parent), markCommitted.
// Committing a COMMITTED transaction is success; ErrConflict if it is
// aborting, aborted, or OPEN with an expired lease.
func (s *Service) CommitTxn(ctx context.Context, scope, stream, id string) error {
	if err := s.step(kindCommit, stepIntent); err != nil {
		return err
	}
	t, err := s.updateTxn(ctx, scope, stream, id, func(t *txnRec) error {
		switch t.Status {
		case api.TxnCommitting, api.TxnCommitted:
			return errNoChange
		case api.TxnOpen:
			if s.nowMillis() >= t.ExpiryTime {
				return fmt.Errorf("%w: transaction %s: lease expired", ErrConflict, id)
			}
			t.Status = api.TxnCommitting
			return nil
		default:
			return fmt.Errorf("%w: transaction %s is %s", ErrConflict, id, t.Status)
		}
	})
	if err != nil {
		return err
	}
	return s.runTxn(ctx, t)
}

// AbortTxn aborts a transaction: intent (status ABORTING), then
// deleteTxnSegments, markAborted. Aborting an ABORTED transaction is
// success; ErrConflict if it is committing or committed.
func (s *Service) AbortTxn(ctx context.Context, scope, stream, id string) error {
	return s.abortTxn(ctx, scope, stream, id, false)
}

// abortTxn aborts; with expiredOnly, only an OPEN transaction whose lease
// has expired (the sweeper).
func (s *Service) abortTxn(ctx context.Context, scope, stream, id string, expiredOnly bool) error {
	if err := s.step(kindAbort, stepIntent); err != nil {
		return err
	}
	t, err := s.updateTxn(ctx, scope, stream, id, func(t *txnRec) error {
		switch t.Status {
		case api.TxnAborting, api.TxnAborted:
			return errNoChange
		case api.TxnOpen:
			if expiredOnly && s.nowMillis() < t.ExpiryTime {
				return errNoChange
			}
			t.Status = api.TxnAborting
			return nil
		default:
			return fmt.Errorf("%w: transaction %s is %s", ErrConflict, id, t.Status)
		}
	})
	if err != nil {
		return err
	}
	return s.runTxn(ctx, t)
}

// runTxn completes a COMMITTING or ABORTING transaction; others are left.
func (s *Service) runTxn(ctx context.Context, t *txnRec) error {
	var final string
	switch t.Status {
	case api.TxnCommitting:
		final = api.TxnCommitted
		if err := s.step(kindCommit, "sealTxnSegments"); err != nil {
			return err
		}
		for _, seg := range t.Segments {
			// A missing segment was merged by an earlier run.
			if _, err := s.segs.SealSegment(ctx, seg); err != nil && !errors.Is(err, protocol.ErrNoSuchSegment) {
				return err
			}
		}
		if err := s.step(kindCommit, "mergeTxnSegments"); err != nil {
			return err
		}
		for i, seg := range t.Segments {
			if err := s.mergeOnce(ctx, t.Parents[i], seg); err != nil {
				return err
			}
		}
		if err := s.step(kindCommit, "markCommitted"); err != nil {
			return err
		}
	case api.TxnAborting:
		final = api.TxnAborted
		if err := s.step(kindAbort, "deleteTxnSegments"); err != nil {
			return err
		}
		for _, seg := range t.Segments {
			if err := s.segs.DeleteSegment(ctx, seg); err != nil {
				return err
			}
		}
		if err := s.step(kindAbort, "markAborted"); err != nil {
			return err
		}
	case api.TxnCommitted, api.TxnAborted:
		// Finished, but perhaps still listed on the stream (the run that
		// finished it ended before forgetTxn): a scale waits for it.
		return s.forgetTxn(ctx, t.Scope, t.Stream, t.ID)
	default:
		return nil
	}
	if _, err := s.updateTxn(ctx, t.Scope, t.Stream, t.ID, func(cur *txnRec) error {
		if cur.Status == final {
			return errNoChange
		}
		cur.Status = final
		return nil
	}); err != nil {
		return err
	}
	return s.forgetTxn(ctx, t.Scope, t.Stream, t.ID)
}

// mergeOnce merges a sealed transaction segment into its parent unless an
// earlier run did: the node's merge appends and deletes the source in one
// log record, so a source that no longer exists while its parent does has
// been merged.
func (s *Service) mergeOnce(ctx context.Context, parent, seg string) error {
	_, err := s.segs.GetSegmentInfo(ctx, seg)
	if errors.Is(err, protocol.ErrNoSuchSegment) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.segs.MergeSegments(ctx, parent, seg)
	if errors.Is(err, protocol.ErrNoSuchSegment) {
		// Merged meanwhile by another controller, or the parent is gone.
		if _, perr := s.segs.GetSegmentInfo(ctx, parent); perr != nil {
			return fmt.Errorf("controller: merge %s into %s: %w", seg, parent, perr)
		}
		return nil
	}
	return err
}

// forgetTxn removes a finished transaction from its stream's list.
func (s *Service) forgetTxn(ctx context.Context, scope, stream, id string) error {
	_, err := s.update(ctx, scope, stream, func(r *streamRec) error {
		if _, ok := r.Txns[id]; !ok {
			return errNoChange
		}
		delete(r.Txns, id)
		if len(r.Txns) == 0 {
			r.Txns = nil
		}
		return nil
	})
	return err
}

// finishTxnForSeal brings a transaction to an end before its stream is
// sealed: an OPEN one is aborted, one being committed or aborted is
// completed.
func (s *Service) finishTxnForSeal(ctx context.Context, scope, stream, id string) error {
	t, _, err := s.loadTxn(WithInternal(ctx), scope, stream, id)
	if errors.Is(err, ErrNotFound) {
		return s.forgetTxn(ctx, scope, stream, id)
	}
	if err != nil {
		return err
	}
	if t.Status == api.TxnOpen {
		err := s.AbortTxn(WithInternal(ctx), scope, stream, id)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		// Committed meanwhile: complete that instead.
		if t, _, err = s.loadTxn(WithInternal(ctx), scope, stream, id); err != nil {
			return err
		}
	}
	if err := s.runTxn(ctx, t); err != nil {
		return err
	}
	return s.forgetTxn(ctx, scope, stream, id)
}

// resumeTxns completes the stream's transactions being committed or
// aborted, and forgets finished ones the stream still lists.
func (s *Service) resumeTxns(ctx context.Context, scope, stream string) error {
	ctx = WithInternal(ctx)
	kvs, err := s.list(ctx, txnsKey(scope, stream))
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		var t txnRec
		if err := json.Unmarshal(kv.Value, &t); err != nil {
			return fmt.Errorf("controller: transaction record %s: %w", kv.Key, err)
		}
		switch t.Status {
		case api.TxnCommitting, api.TxnAborting:
			if err := s.runTxn(ctx, &t); err != nil {
				return err
			}
		case api.TxnCommitted, api.TxnAborted:
			if err := s.forgetTxn(ctx, scope, stream, t.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// sweeper aborts expired transactions every TxnSweepInterval until Close.
func (s *Service) sweeper() {
	defer s.wg.Done()
	retry.Every(s.ctx, s.opts.TxnSweepInterval, s.sweepExpiredTxns, func(err error) {
		s.log.WithError(err).Warn("transaction sweep")
	})
}

// sweepExpiredTxns aborts every OPEN transaction whose lease has expired,
// completes every one being committed or aborted past its lease, and
// forgets a finished one the stream still lists.
func (s *Service) sweepExpiredTxns(ctx context.Context) error {
	ctx = WithInternal(ctx)
	return s.eachStream(ctx, func(scope, stream string) error {
		kvs, err := s.list(ctx, txnsKey(scope, stream))
		if err != nil {
			return err
		}
		if len(kvs) == 0 {
			return nil
		}
		r, _, err := s.loadStream(ctx, scope, stream)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		var first error
		now := s.nowMillis()
		for _, kv := range kvs {
			var t txnRec
			if json.Unmarshal(kv.Value, &t) != nil || now < t.ExpiryTime {
				continue
			}
			switch t.Status {
			case api.TxnCommitted, api.TxnAborted:
				// Finished, but still listed if the run that finished it
				// ended before forgetting it: a scale waits for it.
				if _, listed := r.Txns[t.ID]; listed {
					if err := s.forgetTxn(ctx, scope, stream, t.ID); err != nil && first == nil {
						first = err
					}
				}
			case api.TxnOpen:
				if err := s.abortTxn(ctx, scope, stream, t.ID, true); err != nil && first == nil && !errors.Is(err, ErrConflict) {
					first = err
				}
			case api.TxnCommitting, api.TxnAborting:
				// Left unfinished past its lease (its request cancelled,
				// its controller failed): complete it rather than wait for
				// the next leader's Resume, since a scale, and new
				// transactions behind a pending one, wait for it. Running
				// it beside a live run is safe (mergeOnce).
				if err := s.runTxn(ctx, &t); err != nil && first == nil {
					first = err
				}
			}
		}
		return first
	})
}
