package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Scale seals the active segments numbered req.SealedSegments (neighbours)
// and replaces them with new segments owning req.NewRanges, which must
// cover exactly the union of the sealed ranges (ErrInvalid otherwise). It
// runs the scale workflow: intent (the new epoch, segment numbers and
// ranges are recorded), createSegments, sealSegments, publishEpoch,
// cleanup. ErrConflict if the stream is sealed, another workflow is in
// progress, or a transaction is unfinished (see the package documentation).
// A manual scale does not wait as an automatic one does: it is refused
// while a transaction is unfinished, and one that runs gives up a pending
// automatic scale (recorded as such). It returns the new segments.
func (s *Service) Scale(ctx context.Context, scope, stream string, req api.ScaleRequest) ([]api.SegmentRange, error) {
	return s.scale(ctx, scope, stream, req, api.TriggerManual, "", anyEpoch)
}

// errTxnsOpen marks (with markedError) the ErrConflict of a scale refused
// because the stream has unfinished transactions, which the auto-scaler
// tells from other conflicts (another workflow, another epoch).
var errTxnsOpen = errors.New("controller: the stream has unfinished transactions")

// markedError is err (its text and its chain) that also matches mark.
type markedError struct{ err, mark error }

func (e markedError) Error() string   { return e.err.Error() }
func (e markedError) Unwrap() []error { return []error{e.err, e.mark} }

// anyEpoch is scale's onEpoch for a scale that may run on any epoch.
const anyEpoch = -1

// scale is Scale with the trigger and reason the new epoch records. With
// onEpoch >= 0 (the epoch an automatic decision was taken on) the scale
// is refused with ErrConflict, inside the compare-and-set that records
// its intent, if the current epoch is another: a scale that ran meanwhile
// (manual or not) restarts the cooldown, and the decision is taken again
// from the new epoch.
func (s *Service) scale(ctx context.Context, scope, stream string, req api.ScaleRequest, trigger, reason string, onEpoch int64) ([]api.SegmentRange, error) {
	return s.scaleWith(ctx, scope, stream, req, trigger, reason, onEpoch, nil)
}

// scaleWith is scale; with mark, it carries out that pending scale: the
// intent's compare-and-set requires the mark to be the stream's pending
// scale still (ErrConflict otherwise) and clears it. Without mark, a
// pending scale is given up as overtaken by this one.
func (s *Service) scaleWith(ctx context.Context, scope, stream string, req api.ScaleRequest, trigger, reason string, onEpoch int64, mark *pendingScaleRec) ([]api.SegmentRange, error) {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return nil, err
	}
	var planned *workflowRec
	err := s.startWorkflow(ctx, scope, stream, kindScale, func(r *streamRec, w *workflowRec) error {
		if r.Sealed {
			return fmt.Errorf("%w: stream %s/%s is sealed", ErrConflict, scope, stream)
		}
		if cur := r.current().Epoch; onEpoch >= 0 && cur != onEpoch {
			return fmt.Errorf("%w: stream %s/%s: the scale was decided on epoch %d, the stream is at epoch %d", ErrConflict, scope, stream, onEpoch, cur)
		}
		p, err := planScale(r, req, w.StartTime)
		if err != nil {
			return err
		}
		if len(r.Txns) > 0 {
			return markedError{fmt.Errorf("%w: stream %s/%s has %d unfinished transactions; a scale waits until they are committed or aborted", ErrConflict, scope, stream, len(r.Txns)), errTxnsOpen}
		}
		switch {
		case mark != nil && (r.PendingScale == nil || r.PendingScale.Since != mark.Since):
			return fmt.Errorf("%w: stream %s/%s: the pending scale was carried out or given up meanwhile", ErrConflict, scope, stream)
		case mark != nil:
			r.PendingScale = nil
		case r.PendingScale != nil:
			why := "overtaken by a manual scale"
			if trigger == api.TriggerAuto {
				why = "overtaken by another automatic scale"
			}
			r.giveUpPending(w.StartTime, why)
		}
		p.ID = w.ID
		p.Trigger, p.Reason = trigger, capReason(reason)
		*w = *p
		r.NextSegment += int64(len(w.New))
		planned = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	out := make([]api.SegmentRange, 0, len(planned.New))
	for _, sg := range planned.New {
		out = append(out, r.rangeOf(sg))
	}
	return out, nil
}

// CurrentSegments returns the active segments, ordered by key range (those
// of the last epoch if the stream is sealed).
func (s *Service) CurrentSegments(ctx context.Context, scope, stream string) ([]api.SegmentRange, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	return r.ranges(r.current().Segments), nil
}

func (r *streamRec) ranges(nums []int64) []api.SegmentRange {
	out := make([]api.SegmentRange, 0, len(nums))
	for _, n := range nums {
		out = append(out, r.rangeOf(r.Segments[n]))
	}
	return out
}

func (s *Service) load(ctx context.Context, scope, stream string) (*streamRec, error) {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return nil, err
	}
	r, _, err := s.loadStream(ctx, scope, stream)
	return r, err
}

// SegmentsAt returns the position of time t: the segments of the epoch
// active at t (the first epoch for an earlier t) at offset 0, moved up to
// the truncation head where truncation deleted data.
func (s *Service) SegmentsAt(ctx context.Context, scope, stream string, t time.Time) (api.StreamCut, error) {
	l, err := s.PositionAt(ctx, scope, stream, t)
	return l.Cut, err
}

// PositionAt is SegmentsAt with the key range of each segment of the cut,
// ordered by key, read from one load of the stream record.
func (s *Service) PositionAt(ctx context.Context, scope, stream string, t time.Time) (api.SegmentList, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return api.SegmentList{}, err
	}
	c := r.cutAt(t.UnixMilli())
	nums := make([]int64, 0, len(c))
	for n := range c {
		nums = append(nums, n)
	}
	segs := r.ranges(nums)
	sort.Slice(segs, func(i, j int) bool { return segs[i].KeyLow < segs[j].KeyLow })
	return api.SegmentList{Segments: segs, Cut: r.cutNames(c)}, nil
}

// HeadCut returns where a reader from the beginning starts: the truncation
// cut, or the first epoch's segments at offset 0.
func (s *Service) HeadCut(ctx context.Context, scope, stream string) (api.StreamCut, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	return r.cutNames(r.headCut()), nil
}

// segmentOf finds a segment by qualified name.
func (s *Service) segmentOf(ctx context.Context, name string) (*streamRec, segmentRec, error) {
	q, err := protocol.ParseSegmentName(name)
	if err != nil {
		return nil, segmentRec{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if q.Transaction != "" {
		return nil, segmentRec{}, fmt.Errorf("%w: %q is a transaction segment", ErrInvalid, name)
	}
	r, err := s.load(ctx, q.Scope, q.Stream)
	if err != nil {
		return nil, segmentRec{}, err
	}
	if r.dropped(q.Number) {
		return nil, segmentRec{}, fmt.Errorf("%w: segment %s was deleted by a truncation more than %v ago and its history dropped", ErrNotFound, name, KeepDeletedHistory)
	}
	sg, ok := r.seg(q.Number)
	if !ok || sg.Epoch != q.Epoch {
		return nil, segmentRec{}, fmt.Errorf("%w: segment %s", ErrNotFound, name)
	}
	return r, sg, nil
}

// SegmentRangeOf returns a segment's key range.
func (s *Service) SegmentRangeOf(ctx context.Context, segment string) (api.SegmentRange, error) {
	r, sg, err := s.segmentOf(ctx, segment)
	if err != nil {
		return api.SegmentRange{}, err
	}
	return r.rangeOf(sg), nil
}

// Successors returns the segments that replaced a sealed segment, each with
// the predecessors a reader must finish before reading it. An active
// segment, or one sealed with its stream, has none (an empty slice).
func (s *Service) Successors(ctx context.Context, segment string) ([]api.Successor, error) {
	r, sg, err := s.segmentOf(ctx, segment)
	if err != nil {
		return nil, err
	}
	out := r.successors(sg.Number)
	if out == nil {
		out = []api.Successor{}
	}
	return out, nil
}

// SegmentsBetween returns the segments a reader crosses going from cut
// from to cut to, in segment-number order. An empty from is the head; an
// empty to is the end of the stream. ErrInvalid if a cut is not a valid
// cut of the stream or from lies after to.
func (s *Service) SegmentsBetween(ctx context.Context, scope, stream string, from, to api.StreamCut) ([]api.SegmentRange, error) {
	r, err := s.load(ctx, scope, stream)
	if err != nil {
		return nil, err
	}
	f := r.headCut()
	if len(from) > 0 {
		if f, err = r.cutNumbers(from); err != nil {
			return nil, err
		}
		if err := r.validateCut(f); err != nil {
			return nil, err
		}
	}
	var t map[int64]int64
	if len(to) > 0 {
		if t, err = r.cutNumbers(to); err != nil {
			return nil, err
		}
		if err := r.validateCut(t); err != nil {
			return nil, err
		}
		if err := r.cutNotAfter(f, t); err != nil {
			return nil, err
		}
	}
	return r.ranges(r.between(f, t)), nil
}
