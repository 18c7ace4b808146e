package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/retry"
)

// This file is retention's driver: one step reads each stream with a
// retention policy, asks the nodes for its segments' lengths, records its
// tail cut, and truncates it where decideRetention says, through the
// truncate workflow.

func retentionKey(scope, stream string) string { return streamKey(scope, stream) + "/retention" }

// RetentionInterval is how often retention should run: the pace of the
// leader's retention loop (package leader) and of the Service's own.
func (s *Service) RetentionInterval() time.Duration { return s.opts.RetentionInterval }

// Tier2URI is the root of tier 2 as configured (Options.Tier2URI); empty
// if not configured.
func (s *Service) Tier2URI() string { return s.opts.Tier2URI }

// leaderElector is a store that elects leaders (the ZooKeeper store): a
// Service over one is a cluster's controller, and its leader runs
// retention; over any other store the Service is the only controller and
// runs retention itself.
type leaderElector interface {
	Leader(ctx context.Context, key string) (string, error)
}

// retainer runs RetentionStep every RetentionInterval until Close. The
// first step is one interval after New.
func (s *Service) retainer() {
	defer s.wg.Done()
	retry.Every(s.ctx, s.opts.RetentionInterval, s.RetentionStep, func(err error) {
		s.log.WithError(err).Warn("controller: retention step failed; retrying at the next interval")
	})
}

// RetentionStep applies every stream's retention policy once: for each
// stream that has one (internal streams included) and is neither sealed nor
// in the middle of a workflow, it records the stream's tail cut (its
// active segments' lengths, from the nodes) with the time and the stream's
// size, keeps the cuts the policy may still need under
// scopes/<scope>/streams/<stream>/retention, and truncates the stream with
// TruncateStream at the cut decideRetention picks. Calling it from several
// controllers at once is safe (every write is a compare-and-set; a truncate
// while another workflow runs is refused and retried at the next step). It
// returns the first error and goes on with the other streams.
func (s *Service) RetentionStep(ctx context.Context) error {
	ctx = WithInternal(ctx)
	return s.eachStream(ctx, func(scope, stream string) error {
		if err := s.retainStream(ctx, scope, stream); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("controller: retention of %s/%s: %w", scope, stream, err)
		}
		return nil
	})
}

// retainStream is RetentionStep for one stream.
func (s *Service) retainStream(ctx context.Context, scope, stream string) error {
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return err
	}
	if r.Config.RetentionPolicy == nil || r.Sealed || r.Workflow != nil {
		return nil
	}
	p := *r.Config.RetentionPolicy
	now := s.nowMillis()
	head := r.headCut()

	// The length of every segment from the head on; the active ones' make
	// the tail cut.
	lengths := map[int64]int64{}
	for _, n := range r.between(head, nil) {
		info, err := s.segs.GetSegmentInfo(ctx, r.name(r.Segments[n]))
		if err != nil {
			return err
		}
		lengths[n] = info.Length
	}
	tail := map[int64]int64{}
	for _, n := range r.current().Segments {
		tail[n] = lengths[n]
	}
	size := r.bytesBetween(head, tail, lengths)

	rec, version, err := s.loadRetention(ctx, scope, stream)
	if err != nil {
		return err
	}
	// Measure the recorded cuts from today's head; drop those that no
	// longer lie wholly at or after it (the head moved past them).
	cuts := []retentionCut{}
	for _, c := range rec.Cuts {
		if !r.cutUsable(c.Cut) || r.cutNotAfter(head, c.Cut) != nil {
			continue
		}
		c.Size = r.bytesBetween(head, c.Cut, lengths)
		cuts = append(cuts, c)
	}
	if shouldRecord(p, now, cuts, size) {
		cuts = append(cuts, retentionCut{Time: now, Size: size, Cut: tail})
	}
	cut, truncate := decideRetention(p, now, head, cuts, size)
	rec.Cuts = trimRetention(p, now, head, cuts, size)
	if err := s.saveRetention(ctx, scope, stream, rec, version); err != nil {
		return err
	}
	if !truncate {
		return nil
	}
	s.log.WithField("stream", scope+"/"+stream).WithField("cut", cut).WithField("policy", p).Info("controller: retention truncates the stream")
	err = s.TruncateStream(ctx, scope, stream, r.cutNames(cut))
	if errors.Is(err, ErrConflict) {
		return nil // another workflow runs; the next step tries again
	}
	return err
}

// cutUsable reports whether every segment of a recorded cut still exists
// in the record and was not deleted by truncation.
func (r *streamRec) cutUsable(cut map[int64]int64) bool {
	if len(cut) == 0 {
		return false
	}
	for n := range cut {
		if _, ok := r.seg(n); !ok || r.deleted(n) {
			return false
		}
	}
	return true
}

// loadRetention reads a stream's recorded cuts; version is AnyVersion
// (and the record empty) if there is none yet.
func (s *Service) loadRetention(ctx context.Context, scope, stream string) (*retentionRec, cluster.Version, error) {
	kv, err := s.store.Get(ctx, retentionKey(scope, stream))
	if errors.Is(err, cluster.ErrNotFound) || err == nil && len(kv.Value) == 0 {
		return &retentionRec{}, cluster.AnyVersion, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var rec retentionRec
	if err := json.Unmarshal(kv.Value, &rec); err != nil {
		return nil, 0, fmt.Errorf("controller: retention record %s: %w", kv.Key, err)
	}
	return &rec, kv.Version, nil
}

// saveRetention writes the recorded cuts: a create when there was no
// record (version AnyVersion), a compare-and-set otherwise.
func (s *Service) saveRetention(ctx context.Context, scope, stream string, rec *retentionRec, version cluster.Version) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if version == cluster.AnyVersion {
		err = s.create(ctx, retentionKey(scope, stream), b)
	} else {
		_, err = s.store.CompareAndSet(ctx, retentionKey(scope, stream), b, version)
	}
	if errors.Is(err, cluster.ErrVersionMismatch) || errors.Is(err, cluster.ErrExists) {
		return nil // another controller recorded meanwhile; ours is not needed
	}
	return err
}
