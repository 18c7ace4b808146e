package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

func (r *streamRec) info() api.StreamInfo {
	return api.StreamInfo{StreamConfig: r.Config, Sealed: r.Sealed, Epoch: r.current().Epoch, CreationTime: r.CreationTime}
}

// checkStream validates scope and stream names.
func (s *Service) checkStream(ctx context.Context, scope, stream string) error {
	if err := checkName(ctx, "scope", scope); err != nil {
		return err
	}
	return checkName(ctx, "stream", stream)
}

// CreateStream creates a stream and its epoch-0 segments on the nodes: the
// key space [0,1) split evenly into ScalingPolicy.MinSegments ranges.
// ErrExists if the stream exists, ErrNotFound if the scope does not.
func (s *Service) CreateStream(ctx context.Context, cfg api.StreamConfig) (api.StreamInfo, error) {
	if err := s.checkStream(ctx, cfg.ScopeName, cfg.StreamName); err != nil {
		return api.StreamInfo{}, err
	}
	if err := cfg.Validate(); err != nil {
		return api.StreamInfo{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := s.GetScope(ctx, cfg.ScopeName); err != nil {
		return api.StreamInfo{}, err
	}
	now := s.nowMillis()
	r := &streamRec{Config: cfg, CreationTime: now}
	epoch := epochRec{Epoch: 0, CreationTime: now}
	for i, kr := range evenRanges(int(cfg.ScalingPolicy.MinSegments)) {
		r.Segments = append(r.Segments, segmentRec{Number: int64(i), Epoch: 0, Low: kr.Low, High: kr.High})
		epoch.Segments = append(epoch.Segments, int64(i))
	}
	r.Epochs = []epochRec{epoch}
	r.NextSegment = int64(len(r.Segments))
	r.Workflow = &workflowRec{Kind: kindCreate, ID: newUUID(), StartTime: now}
	if err := s.step(kindCreate, stepIntent); err != nil {
		return api.StreamInfo{}, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return api.StreamInfo{}, err
	}
	if _, _, err := s.loadStream(ctx, cfg.ScopeName, cfg.StreamName); errors.Is(err, ErrNotFound) {
		// A new stream starts with no writers and no watermarks: clear
		// what a step or a report racing the delete of an old stream of
		// the name left behind.
		if err := s.removeWatermarkRecords(ctx, cfg.ScopeName, cfg.StreamName); err != nil {
			return api.StreamInfo{}, err
		}
	}
	err = s.create(ctx, streamKey(cfg.ScopeName, cfg.StreamName), b)
	if errors.Is(err, cluster.ErrExists) {
		return api.StreamInfo{}, fmt.Errorf("%w: stream %s/%s", ErrExists, cfg.ScopeName, cfg.StreamName)
	}
	if err != nil {
		return api.StreamInfo{}, err
	}
	// A DeleteScope that raced with us may have removed the scope record
	// after our check: then take the stream back out.
	if _, err := s.GetScope(ctx, cfg.ScopeName); errors.Is(err, ErrNotFound) {
		s.store.Delete(ctx, streamKey(cfg.ScopeName, cfg.StreamName), cluster.AnyVersion)
		return api.StreamInfo{}, err
	}
	if err := s.runWorkflow(ctx, cfg.ScopeName, cfg.StreamName); err != nil {
		return api.StreamInfo{}, err
	}
	return s.GetStream(ctx, cfg.ScopeName, cfg.StreamName)
}

// GetStream returns a stream's configuration and state.
func (s *Service) GetStream(ctx context.Context, scope, stream string) (api.StreamInfo, error) {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return api.StreamInfo{}, err
	}
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return api.StreamInfo{}, err
	}
	return r.info(), nil
}

// ListStreams returns the streams of a scope, sorted by name, that carry
// every tag in tags (a tag given with the value "" matches any value).
// Internal streams are listed only for an internal ctx.
func (s *Service) ListStreams(ctx context.Context, scope string, tags map[string]string) ([]api.StreamInfo, error) {
	if _, err := s.GetScope(ctx, scope); err != nil {
		return nil, err
	}
	kvs, err := s.list(ctx, streamsKey(scope))
	if err != nil {
		return nil, err
	}
	out := []api.StreamInfo{}
next:
	for _, kv := range kvs {
		var r streamRec
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("controller: stream record %s: %w", kv.Key, err)
		}
		if checkName(ctx, "stream", r.Config.StreamName) != nil {
			continue
		}
		for k, v := range tags {
			got, ok := r.Config.Tags[k]
			if !ok || v != "" && v != got {
				continue next
			}
		}
		out = append(out, r.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StreamName < out[j].StreamName })
	return out, nil
}

// UpdateStream replaces a stream's configuration. cfg's scope and stream
// names must be empty or equal to scope and stream (ErrInvalid otherwise).
// A new scaling policy takes effect at the auto-scaler's next steps: a
// BY_RATE_* policy turns auto-scaling on (a FIXED one turns it off), and
// with such a policy a minSegments above the active segments makes it
// split the stream up to it, one split per cooldown. UpdateStream itself scales nothing.
// ErrConflict if the stream is sealed.
func (s *Service) UpdateStream(ctx context.Context, scope, stream string, cfg api.StreamConfig) (api.StreamInfo, error) {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return api.StreamInfo{}, err
	}
	if cfg.ScopeName != "" && cfg.ScopeName != scope || cfg.StreamName != "" && cfg.StreamName != stream {
		return api.StreamInfo{}, fmt.Errorf("%w: a stream's scope and name cannot change (%s/%s to %s/%s)", ErrInvalid, scope, stream, cfg.ScopeName, cfg.StreamName)
	}
	cfg.ScopeName, cfg.StreamName = scope, stream
	if err := cfg.Validate(); err != nil {
		return api.StreamInfo{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var tierChanged bool
	r, err := s.update(ctx, scope, stream, func(r *streamRec) error {
		if r.Sealed {
			return fmt.Errorf("%w: stream %s/%s is sealed", ErrConflict, scope, stream)
		}
		tierChanged = !reflect.DeepEqual(tierAttrs(r.Config), tierAttrs(cfg))
		r.Config = cfg
		return nil
	})
	if err != nil {
		return api.StreamInfo{}, err
	}
	if tierChanged {
		if err := s.applyTierPolicy(ctx, r); err != nil {
			return api.StreamInfo{}, err
		}
	}
	return r.info(), nil
}

// startWorkflow records a workflow's intent on the stream (step "intent"),
// refusing with ErrConflict if another one is unfinished, then runs it.
// check, called on the current record, may refuse the workflow or fill it
// in (it returns errNoChange when there is nothing to do).
func (s *Service) startWorkflow(ctx context.Context, scope, stream, kind string, check func(r *streamRec, w *workflowRec) error) error {
	if err := s.step(kind, stepIntent); err != nil {
		return err
	}
	_, err := s.update(ctx, scope, stream, func(r *streamRec) error {
		if w := r.Workflow; w != nil {
			return fmt.Errorf("%w: stream %s/%s: a %s workflow is in progress (the leader completes it)", ErrConflict, scope, stream, w.Kind)
		}
		w := &workflowRec{Kind: kind, ID: newUUID(), StartTime: s.nowMillis()}
		if err := check(r, w); err != nil {
			return err
		}
		r.Workflow = w
		return nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.runWorkflow(ctx, scope, stream)
}

// SealStream seals a stream: it aborts its OPEN transactions and completes
// those being committed or aborted, seals every active segment on the
// nodes, and marks the stream sealed. Sealing a sealed stream is success.
func (s *Service) SealStream(ctx context.Context, scope, stream string) error {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return err
	}
	return s.startWorkflow(ctx, scope, stream, kindSeal, func(r *streamRec, w *workflowRec) error {
		if r.Sealed {
			return errNoChange
		}
		return nil
	})
}

// DeleteStream deletes a sealed stream (ErrConflict if it is not): every
// segment on the nodes, then its records.
func (s *Service) DeleteStream(ctx context.Context, scope, stream string) error {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return err
	}
	return s.startWorkflow(ctx, scope, stream, kindDelete, func(r *streamRec, w *workflowRec) error {
		if !r.Sealed {
			return fmt.Errorf("%w: stream %s/%s is not sealed; seal it before deleting it", ErrConflict, scope, stream)
		}
		return nil
	})
}

// TruncateStream truncates a stream at a cut: segments wholly before the
// cut are deleted, the cut's segments truncated at their offsets. The cut
// must be a valid cut of the stream (ErrInvalid): its segments cover [0,1)
// exactly once, are consistent with each other, none was deleted by an
// earlier truncation, no offset is beyond its segment's length, and every
// offset that moves the head is an event boundary, as its node confirms
// (else the error wraps both ErrInvalid and protocol.ErrNotEventBoundary).
// All of that is checked before the truncation is recorded, so a refused
// cut changes nothing, in the metadata or on any node. Truncating at or
// before the current head changes nothing.
func (s *Service) TruncateStream(ctx context.Context, scope, stream string, cut api.StreamCut) error {
	if err := s.checkStream(ctx, scope, stream); err != nil {
		return err
	}
	// Check the offsets against the nodes first (reading only).
	r, _, err := s.loadStream(ctx, scope, stream)
	if err != nil {
		return err
	}
	nums, err := r.cutNumbers(cut)
	if err != nil {
		return err
	}
	if err := r.validateCut(nums); err != nil {
		return err
	}
	for n, off := range nums {
		if r.deleted(n) {
			return fmt.Errorf("%w: stream cut: segment %s was deleted by an earlier truncation", ErrInvalid, r.name(r.Segments[n]))
		}
		info, err := s.segs.GetSegmentInfo(ctx, r.name(r.Segments[n]))
		if err != nil {
			return err
		}
		if off > info.Length {
			return fmt.Errorf("%w: stream cut: offset %d of %s is beyond its length %d", ErrInvalid, off, info.Segment, info.Length)
		}
		if h, ok := r.Head[n]; (ok && off <= h) || off <= info.StartOffset {
			continue // changes nothing there
		}
		if err := s.segs.CheckBoundary(ctx, info.Segment, off); err != nil {
			if errors.Is(err, protocol.ErrNotEventBoundary) {
				return fmt.Errorf("%w: stream cut: offset %d of %s: %w", ErrInvalid, off, info.Segment, err)
			}
			return err
		}
	}
	return s.startWorkflow(ctx, scope, stream, kindTruncate, func(r *streamRec, w *workflowRec) error {
		nums, err := r.cutNumbers(cut) // the record may have changed since
		if err != nil {
			return err
		}
		if err := r.validateCut(nums); err != nil {
			return err
		}
		w.Cut = map[int64]int64{}
		moved := false
		for n, off := range nums {
			if r.deleted(n) {
				return fmt.Errorf("%w: stream cut: segment %s was deleted by an earlier truncation", ErrInvalid, r.name(r.Segments[n]))
			}
			if h, ok := r.Head[n]; ok && h >= off {
				off = h
			} else {
				moved = true
			}
			w.Cut[n] = off
		}
		if !moved {
			return errNoChange
		}
		for _, sg := range r.Segments[r.FirstSegment:] {
			if r.beforeCut(sg.Number, w.Cut) && !r.deleted(sg.Number) {
				w.Delete = append(w.Delete, sg.Number)
			}
		}
		return nil
	})
}
