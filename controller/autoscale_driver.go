package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/controller/autoscale"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is auto-scaling's driver: each step reads every stream with a
// BY_RATE_* policy, asks the nodes for its active segments' rates, lets
// the deterministic core (package controller/autoscale) decide, and
// carries a decision out through the scale workflow.

// Auto-scaling defaults (AutoScaleOptions), conservative as Pravega's:
// a scale is costly for readers and writers (every writer of the sealed
// segments moves, every reader waits for the predecessors), so a cluster
// scales on minutes of load, at most once per stream every ten minutes.
// The standalone (package embed) uses seconds so that a user trying it
// sees a stream split and merge back within minutes.
const (
	DefaultAutoScaleInterval    = 30 * time.Second
	DefaultAutoScaleCooldown    = 10 * time.Minute
	DefaultAutoScaleMaxSegments = 64
)

// AutoScaleOptions configures the auto-scaler. Zero values take the
// defaults.
type AutoScaleOptions struct {
	// Off turns the auto-scaler's loop off (as a negative Interval does);
	// AutoScaleStep still works when called.
	Off bool
	// Interval is the pace of AutoScaleStep (negative: no auto-scaling).
	// Over a store that elects leaders the leader runs it; over any other
	// the Service runs it itself, the first time one interval after New.
	Interval time.Duration
	// Cooldown is the least time between two scales of a stream (manual
	// ones included: it counts from the current epoch's creation). Zero
	// takes the default unless NoCooldown is set.
	Cooldown time.Duration
	// NoCooldown asks for no cooldown at all (Cooldown is then taken as
	// 0): a stream may scale at every step. `--autoscale-cooldown 0s`
	// sets it.
	NoCooldown bool
	// MaxSegments bounds the active segments a split may leave
	// (1..api.MaxSegments).
	MaxSegments int
	// PendingTimeout bounds how long a scale held up by open transactions
	// stays pending (and new transactions are refused) before it is given
	// up (0: Options.MaxTxnLease plus two Intervals; see
	// Service.PendingScaleTimeout).
	PendingTimeout time.Duration
}

// DefaultAutoScaleOptions returns the defaults: DefaultAutoScaleInterval,
// DefaultAutoScaleCooldown, DefaultAutoScaleMaxSegments.
func DefaultAutoScaleOptions() AutoScaleOptions {
	return AutoScaleOptions{Interval: DefaultAutoScaleInterval, Cooldown: DefaultAutoScaleCooldown, MaxSegments: DefaultAutoScaleMaxSegments}
}

func (o AutoScaleOptions) withDefaults() AutoScaleOptions {
	if o.Interval == 0 {
		o.Interval = DefaultAutoScaleInterval
	}
	switch {
	case o.NoCooldown:
		o.Cooldown = 0
	case o.Cooldown == 0:
		o.Cooldown = DefaultAutoScaleCooldown
	}
	if o.MaxSegments == 0 {
		o.MaxSegments = DefaultAutoScaleMaxSegments
	}
	if o.Off {
		o.Interval = -1
	}
	return o
}

// Validate checks the options with their defaults applied; the error
// wraps ErrInvalid and names the field.
func (o AutoScaleOptions) Validate() error {
	o = o.withDefaults()
	if o.PendingTimeout < 0 {
		return fmt.Errorf("%w: auto-scale pending timeout %v is negative", ErrInvalid, o.PendingTimeout)
	}
	if o.Cooldown < 0 {
		return fmt.Errorf("%w: auto-scale cooldown %v is negative", ErrInvalid, o.Cooldown)
	}
	if o.MaxSegments < 1 || o.MaxSegments > api.MaxSegments {
		return fmt.Errorf("%w: auto-scale max segments %d: want 1..%d", ErrInvalid, o.MaxSegments, api.MaxSegments)
	}
	return nil
}

// AutoScaleInterval is the pace of the auto-scaler (the leader's loop in
// package leader, or the Service's own); not positive: none.
func (s *Service) AutoScaleInterval() time.Duration { return s.opts.AutoScale.Interval }

// autoScaler runs AutoScaleStep every AutoScale.Interval until Close.
func (s *Service) autoScaler() {
	defer s.wg.Done()
	retry.Every(s.ctx, s.opts.AutoScale.Interval, s.AutoScaleStep, func(err error) {
		s.log.WithError(err).Warn("controller: auto-scaling step failed; retrying at the next interval")
	})
}

// AutoScaleStep scales each stream with a BY_RATE_* policy once if the
// core decides so (at most one scale per stream per step, through the
// scale workflow: a crash mid-scale is completed by Resume, exactly
// once). A decision the stream's transactions hold up is recorded as the
// stream's pending scale (txnscale.go), carried out at a later step once
// they have ended; the scale's reason then says how long it waited. Safe to
// call from several controllers at once (the workflow's intent is a
// compare-and-set; a second scale is refused as a conflict). A stream
// whose automatic scale is unfinished (a step failed) has it completed
// instead, so that a controller without a leader (the standalone) does
// not leave it until a restart. It returns the first error and goes on
// with the other streams.
func (s *Service) AutoScaleStep(ctx context.Context) error {
	rr, ok := s.segs.(rateReader)
	if !ok {
		return nil
	}
	ctx = WithInternal(ctx)
	return s.eachStream(ctx, func(scope, stream string) error {
		if err := s.autoScaleStream(ctx, rr, scope, stream); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("controller: auto-scaling of %s/%s: %w", scope, stream, err)
		}
		return nil
	})
}

// autoScaleStream is AutoScaleStep for one stream.
func (s *Service) autoScaleStream(ctx context.Context, rr rateReader, scope, stream string) error {
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return err
	}
	if w := r.Workflow; w != nil && s.nowMillis()-w.StartTime > stuckScaleAfter(s.opts.AutoScale.Interval).Milliseconds() {
		// A workflow left unfinished (its controller failed or stopped,
		// or a step failed with no caller to retry it): complete it now
		// rather than at the next leader's Resume, since new
		// transactions and pending scales wait for it (txnscale.go). A
		// scale is the usual case; a truncation or seal left by a
		// standalone, which has no leader to resume it, is completed too.
		return s.runWorkflow(ctx, scope, stream)
	}
	if r.PendingScale != nil {
		return s.pendingStep(ctx, scope, stream, r)
	}
	p := r.Config.ScalingPolicy
	key := scope + "/" + stream
	if r.Sealed || (p.Type != api.ByRateInEventsPerSec && p.Type != api.ByRateInKBytesPerSec) {
		s.unblock(key)
		return nil
	}
	in := autoscale.Stream{
		Policy: autoscale.Policy{TargetRate: float64(p.TargetRate), Unit: "events/s", ScaleFactor: int(p.ScaleFactor),
			MinSegments: int(p.MinSegments), MaxSegments: s.opts.AutoScale.MaxSegments},
		// A pending scale given up counts as a scale for the cooldown, so
		// the stream takes new transactions for a while before the next
		// mark.
		LastScale: time.UnixMilli(max(r.current().CreationTime, r.lastGiveUp())),
		OpenTxns:  len(r.Txns),
	}
	if p.Type == api.ByRateInKBytesPerSec {
		in.Policy.Unit = "KB/s"
	}
	if r.Workflow != nil {
		in.Busy = fmt.Sprintf("a %s workflow is unfinished", r.Workflow.Kind)
	}
	cur := r.current().Segments
	names := make([]string, len(cur))
	for i, n := range cur {
		names[i] = r.name(r.Segments[n])
	}
	qctx, cancel := context.WithTimeout(ctx, s.rateQueryTimeout())
	measured, err := rr.SegmentRates(qctx, names)
	cancel()
	if err != nil {
		s.log.WithError(err).WithField("stream", key).Debug("controller: auto-scaling: some segments' rates unknown")
	}
	for i, n := range cur {
		sg := r.Segments[n]
		seg := autoscale.Segment{Number: n, Low: sg.Low, High: sg.High}
		if m, ok := measured[names[i]]; ok && (in.Windows == nil || equalDurations(in.Windows, m.Windows)) {
			in.Windows = m.Windows
			seg.Known, seg.Age = true, time.Duration(m.AgeMillis)*time.Millisecond
			seg.Rates = m.Events
			if p.Type == api.ByRateInKBytesPerSec {
				seg.Rates = make([]float64, len(m.Bytes))
				for j, b := range m.Bytes {
					seg.Rates[j] = b / 1024
				}
			}
		}
		in.Segments = append(in.Segments, seg)
	}
	now := s.opts.Clock()
	d := autoscale.Decide(autoscale.Config{Cooldown: s.opts.AutoScale.Cooldown}, in, now)
	if d.Action == autoscale.None {
		if in.Busy == "" {
			s.unblock(key)
		}
		return nil
	}
	req := api.ScaleRequest{SealedSegments: d.Seal}
	for _, kr := range d.NewRanges {
		req.NewRanges = append(req.NewRanges, api.KeyRange{Low: kr.Low, High: kr.High})
	}
	if d.Blocked != "" {
		if g := r.lastGiveUp(); g > 0 && now.Sub(time.UnixMilli(g)) < s.PendingScaleTimeout() {
			// A pending scale was given up lately: new transactions go
			// through for as long as they were held back (also with no
			// cooldown) before the stream is marked again; the scale
			// still runs if the transactions end by themselves.
			return nil
		}
		// Held up by open transactions: record the scale as pending, so
		// that new transactions wait for it rather than it for them.
		marked, err := s.markPending(ctx, scope, stream, r.current().Epoch, pendingScaleRec{Since: now.UnixMilli(),
			Sealed: req.SealedSegments, NewRanges: req.NewRanges, Reason: d.Reason})
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			return nil // the stream changed since it was read: the next step decides again
		}
		if err != nil || marked {
			if marked {
				s.log.WithField("stream", key).WithField("reason", d.Reason).WithField("waiting", d.Blocked).
					Info("controller: auto-scaling waits for the stream's open transactions; new ones are refused until it has scaled")
			}
			return err
		}
		// The transactions ended meanwhile: scale now.
	}
	reason := d.Reason
	if since, ok := s.blockedSince(key); ok {
		reason += fmt.Sprintf(" (after waiting %v for the stream's transactions to end)", now.Sub(since).Round(time.Second))
	}
	_, err = s.scale(ctx, scope, stream, req, api.TriggerAuto, reason, r.current().Epoch)
	switch {
	case err == nil:
		s.unblock(key)
		s.log.WithField("stream", key).WithField("reason", reason).Info("controller: auto-scaled the stream")
		return nil
	case errors.Is(err, errTxnsOpen):
		// A transaction began since the record was read: the next step
		// marks the scale pending.
		s.block(key, now, d.Reason, err.Error())
		return nil
	case errors.Is(err, ErrConflict), errors.Is(err, ErrInvalid):
		// The stream changed since it was read (another scale, a seal):
		// the next step decides again from the new state.
		return nil
	}
	return err
}

// rateQueryTimeout bounds one stream's rate query: the step's interval,
// between 1 s and 5 s (5 s when the loop is off), so a node that never
// answers leaves its streams unmeasured for this step (neither hot nor
// cold) instead of holding every other stream's auto-scaling.
func (s *Service) rateQueryTimeout() time.Duration {
	if iv := s.opts.AutoScale.Interval; iv > 0 {
		return min(max(iv, time.Second), 5*time.Second)
	}
	return 5 * time.Second
}

// stuckScaleAfter is the age after which the auto-scaler takes a scale
// workflow for left unfinished and runs it itself (running it twice at
// once is safe, but needless while its controller is still at it).
func stuckScaleAfter(interval time.Duration) time.Duration {
	return max(2*interval, 5*time.Second)
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// block notes that key's decision waits (the first time only) and logs why.
func (s *Service) block(key string, now time.Time, reason, why string) {
	s.autoMu.Lock()
	_, already := s.autoMu.blocked[key]
	if !already {
		s.autoMu.blocked[key] = now
	}
	s.autoMu.Unlock()
	if !already {
		s.log.WithField("stream", key).WithField("reason", reason).WithField("waiting", why).
			Info("controller: auto-scaling waits: the scale is refused until the stream's transactions end; retrying at every step")
	}
}

func (s *Service) unblock(key string) {
	s.autoMu.Lock()
	delete(s.autoMu.blocked, key)
	s.autoMu.Unlock()
}

func (s *Service) blockedSince(key string) (time.Time, bool) {
	s.autoMu.Lock()
	defer s.autoMu.Unlock()
	t, ok := s.autoMu.blocked[key]
	return t, ok
}
