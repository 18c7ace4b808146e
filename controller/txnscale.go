package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is the pending scale: how an automatic scale gets past a
// stream whose writers always hold an open transaction (controller/doc.go,
// "Transactions and scaling"). A scale still never runs while a
// transaction is unfinished (each commits into the epoch it was created
// in); instead the auto-scaler records its decision in the stream record,
// new transactions are refused while it is there, and the scale runs once
// the open ones have ended, clearing the mark in its intent's
// compare-and-set.

// maxGivenUp bounds the dropped pending scales a stream record keeps.
const maxGivenUp = 16

// pendingScaleRec is streamRec.PendingScale, and an entry of
// streamRec.GivenUp once dropped.
type pendingScaleRec struct {
	Since     int64          `json:"since"` // ms since the Unix epoch, by Options.Clock
	Epoch     int64          `json:"epoch"` // the epoch it was decided in
	Sealed    []int64        `json:"sealed"`
	NewRanges []api.KeyRange `json:"newRanges"`
	Reason    string         `json:"reason"`
	// set once given up
	GivenUpTime   int64  `json:"givenUpTime,omitempty"`
	GivenUpReason string `json:"givenUpReason,omitempty"`
}

func (p *pendingScaleRec) info() api.PendingScale {
	return api.PendingScale{Since: p.Since, SealedSegments: append([]int64{}, p.Sealed...),
		NewRanges: append([]api.KeyRange{}, p.NewRanges...), Reason: p.Reason,
		GivenUpTime: p.GivenUpTime, GivenUpReason: p.GivenUpReason}
}

// scaleWaitRefusal is CreateTxn's refusal while a scale is pending.
func scaleWaitRefusal(r *streamRec) error {
	if r.PendingScale == nil {
		return nil
	}
	return fmt.Errorf("%w: stream %s/%s is waiting to scale: new transactions wait until it has", ErrScalePending,
		r.Config.ScopeName, r.Config.StreamName)
}

// giveUpPending moves r's pending scale to its GivenUp list (keeping the
// newest maxGivenUp). The caller writes r.
func (r *streamRec) giveUpPending(now int64, why string) {
	p := r.PendingScale
	if p == nil {
		return
	}
	p.GivenUpTime, p.GivenUpReason = now, why
	r.GivenUp = append(r.GivenUp, *p)
	if n := len(r.GivenUp); n > maxGivenUp {
		r.GivenUp = append([]pendingScaleRec(nil), r.GivenUp[n-maxGivenUp:]...)
	}
	r.PendingScale = nil
}

// lastGiveUp is when the newest pending scale was dropped (0: never).
func (r *streamRec) lastGiveUp() int64 {
	if n := len(r.GivenUp); n > 0 {
		return r.GivenUp[n-1].GivenUpTime
	}
	return 0
}

// PendingScaleTimeout is how long a pending scale may hold new
// transactions back before it is given up: AutoScale.PendingTimeout, or
// by default MaxTxnLease plus two auto-scale intervals (a transaction
// begun just before the mark, with the longest lease, that is never
// pinged has ended by then; one pinged for ever does not hold the stream
// for ever).
func (s *Service) PendingScaleTimeout() time.Duration {
	if t := s.opts.AutoScale.PendingTimeout; t > 0 {
		return t
	}
	iv := s.opts.AutoScale.Interval
	if iv < 0 {
		iv = 0
	}
	return s.opts.MaxTxnLease + 2*iv
}

// ScaleWaits returns the stream's pending automatic scale (nil if none)
// and the newest given-up ones, oldest first.
func (s *Service) ScaleWaits(ctx context.Context, scope, stream string) (*api.PendingScale, []api.PendingScale, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, nil, err
	}
	var pending *api.PendingScale
	if r.PendingScale != nil {
		p := r.PendingScale.info()
		pending = &p
	}
	var given []api.PendingScale
	for i := range r.GivenUp {
		given = append(given, r.GivenUp[i].info())
	}
	return pending, given, nil
}

// markPending records d's scale as pending on the stream decided from
// epoch (one compare-and-set). It returns false, having written nothing,
// if the stream has no unfinished transaction by now (the caller scales
// at once), and ErrConflict if the stream changed otherwise (a workflow,
// another epoch, a mark already there): the next step decides again.
func (s *Service) markPending(ctx context.Context, scope, stream string, epoch int64, p pendingScaleRec) (bool, error) {
	marked := false
	_, err := s.update(ctx, scope, stream, func(r *streamRec) error {
		switch {
		case r.Sealed || r.Workflow != nil || r.PendingScale != nil || r.current().Epoch != epoch:
			return fmt.Errorf("%w: stream %s/%s changed since the decision", ErrConflict, scope, stream)
		case len(r.Txns) == 0:
			return errNoChange
		}
		p.Epoch = epoch
		r.PendingScale = &p
		marked = true
		return nil
	})
	return marked, err
}

// dropPending gives the stream's pending scale up, if it is still the one
// recorded at since.
func (s *Service) dropPending(ctx context.Context, scope, stream string, since int64, why string) error {
	now := s.nowMillis()
	_, err := s.update(ctx, scope, stream, func(r *streamRec) error {
		if r.PendingScale == nil || r.PendingScale.Since != since {
			return errNoChange
		}
		r.giveUpPending(now, why)
		return nil
	})
	if err == nil {
		s.log.WithField("stream", scope+"/"+stream).WithField("why", why).Warn("controller: a pending automatic scale was given up")
	}
	return err
}

// pendingStep is the auto-scaler's step for a stream with a pending
// scale: wait while transactions or a workflow are unfinished, give the
// mark up once older than PendingScaleTimeout (or no longer carried out
// by this stream), and otherwise run the scale, whose intent clears the
// mark in the same compare-and-set.
func (s *Service) pendingStep(ctx context.Context, scope, stream string, r *streamRec) error {
	p := *r.PendingScale
	now := s.opts.Clock()
	p2 := r.Config.ScalingPolicy.Type
	switch {
	case r.Sealed:
		return s.dropPending(ctx, scope, stream, p.Since, "the stream was sealed")
	case p2 != api.ByRateInEventsPerSec && p2 != api.ByRateInKBytesPerSec:
		return s.dropPending(ctx, scope, stream, p.Since, "the stream's scaling policy is no longer by rate")
	case r.current().Epoch != p.Epoch:
		return s.dropPending(ctx, scope, stream, p.Since, fmt.Sprintf("the stream scaled meanwhile (epoch %d, decided in %d)", r.current().Epoch, p.Epoch))
	}
	waited := now.Sub(time.UnixMilli(p.Since))
	if bound := s.PendingScaleTimeout(); waited > bound {
		return s.dropPending(ctx, scope, stream, p.Since, fmt.Sprintf("waited %v for %d unfinished transactions, longer than %v", waited.Round(time.Second), len(r.Txns), bound))
	}
	if r.Workflow != nil || len(r.Txns) > 0 {
		return nil // the next step looks again
	}
	reason := p.Reason
	if waited >= time.Second {
		reason += fmt.Sprintf(" (after waiting %v for the stream's transactions to end)", waited.Round(time.Second))
	} else {
		reason += " (after waiting for the stream's transactions to end)"
	}
	_, err := s.scaleWith(ctx, scope, stream, api.ScaleRequest{SealedSegments: p.Sealed, NewRanges: p.NewRanges}, api.TriggerAuto, reason, p.Epoch, &p)
	switch {
	case err == nil:
		s.log.WithField("stream", scope+"/"+stream).WithField("reason", reason).Info("controller: auto-scaled the stream")
		return nil
	case errors.Is(err, ErrInvalid):
		// The recorded scale no longer fits the stream (a minimum raised
		// meanwhile): dropped, the next step decides again.
		return s.dropPending(ctx, scope, stream, p.Since, "no longer valid: "+err.Error())
	case errors.Is(err, ErrConflict):
		return nil // changed since read: the next step looks again
	}
	return err
}
