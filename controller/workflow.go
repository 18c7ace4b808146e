package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-streams/sluice/cluster"
)

// Workflow kinds (the first argument of Options.StepHook).
const (
	kindCreate   = "createStream"
	kindScale    = "scale"
	kindSeal     = "seal"
	kindTruncate = "truncate"
	kindDelete   = "delete"
	kindCommit   = "commit"
	kindAbort    = "abort"
)

// stepIntent is the first step of every workflow: writing its record.
const stepIntent = "intent"

// wfStep is one step of a stream workflow. act does the step's work on
// the nodes (idempotent: it may run again after a crash, or concurrently
// in two controllers); apply changes the record in the same
// compare-and-set that records the next step (or, for the last step,
// removes the workflow).
type wfStep struct {
	name  string
	act   func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error
	apply func(r *streamRec, w *workflowRec, now int64)
}

var workflows = map[string][]wfStep{
	kindCreate: {
		{name: "createSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, n := range r.Epochs[0].Segments {
				if err := s.segs.CreateSegment(ctx, r.name(r.Segments[n]), tierAttrs(r.Config)); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "activate"},
	},
	kindScale: {
		{name: "createSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, sg := range w.New {
				if err := s.segs.CreateSegment(ctx, r.name(sg), tierAttrs(r.Config)); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "sealSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, n := range w.Sealed {
				if _, err := s.segs.SealSegment(ctx, r.name(r.Segments[n])); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "publishEpoch", apply: applyScale},
		{name: "cleanup"},
	},
	kindSeal: {
		{name: "finishTxns", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for id := range r.Txns {
				if err := s.finishTxnForSeal(ctx, r.Config.ScopeName, r.Config.StreamName, id); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "sealSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, n := range r.current().Segments {
				if _, err := s.segs.SealSegment(ctx, r.name(r.Segments[n])); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "markSealed", apply: func(r *streamRec, w *workflowRec, now int64) {
			r.Sealed = true
			r.giveUpPending(now, "the stream was sealed")
		}},
	},
	kindTruncate: {
		{name: "truncateSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for n, off := range w.Cut {
				if err := s.segs.TruncateSegment(ctx, r.name(r.Segments[n]), off); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "publishHead", apply: func(r *streamRec, w *workflowRec, now int64) { r.Head = w.Cut }},
		{name: "deleteSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, n := range w.Delete {
				if err := s.segs.DeleteSegment(ctx, r.name(r.Segments[n])); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "cleanup", apply: func(r *streamRec, w *workflowRec, now int64) {
			r.Workflow = nil // done (runWorkflow clears it too): its segments are deleted
			r.compact(now)
		}},
	},
	kindDelete: {
		{name: "deleteSegments", act: func(s *Service, ctx context.Context, r *streamRec, w *workflowRec) error {
			for _, sg := range r.Segments[r.FirstSegment:] { // the dropped ones were deleted by truncations
				if err := s.segs.DeleteSegment(ctx, r.name(sg)); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "removeRecords"}, // special-cased in runWorkflow
	},
}

// runWorkflow performs the stream's unfinished workflow, from the step its
// record names, until it is done. Every step is recorded before it is
// performed, so a crash leaves the record naming the step to (re)do.
func (s *Service) runWorkflow(ctx context.Context, scope, stream string) error {
	for {
		r, _, err := s.loadStream(ctx, scope, stream)
		if errors.Is(err, ErrNotFound) {
			return nil // a delete finished
		}
		if err != nil {
			return err
		}
		w := r.Workflow
		if w == nil {
			return nil
		}
		steps, ok := workflows[w.Kind]
		if !ok || w.Step < 0 || w.Step >= len(steps) {
			return fmt.Errorf("controller: stream %s/%s: unknown workflow %s step %d", scope, stream, w.Kind, w.Step)
		}
		st := steps[w.Step]
		if err := s.step(w.Kind, st.name); err != nil {
			return err
		}
		s.log.WithFields(map[string]any{"stream": scope + "/" + stream, "workflow": w.Kind, "step": st.name}).Debug("workflow step")
		if st.act != nil {
			if err := st.act(s, ctx, r, w); err != nil {
				return fmt.Errorf("controller: stream %s/%s: %s step %s: %w", scope, stream, w.Kind, st.name, err)
			}
		}
		if w.Kind == kindDelete && st.name == "removeRecords" {
			return s.removeStreamRecords(ctx, scope, stream)
		}
		last := w.Step+1 == len(steps)
		now := s.nowMillis()
		_, err = s.update(ctx, scope, stream, func(cur *streamRec) error {
			cw := cur.Workflow
			if cw == nil || cw.ID != w.ID || cw.Step != w.Step {
				return errNoChange // another controller got further
			}
			if st.apply != nil {
				st.apply(cur, cw, now)
			}
			if last {
				cur.Workflow = nil
			} else {
				cw.Step++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// removeStreamRecords deletes a stream's transaction records, its
// retention record, writer reports and watermarks, and then its record:
// the last step of a delete.
func (s *Service) removeStreamRecords(ctx context.Context, scope, stream string) error {
	txns, err := s.store.List(ctx, txnsKey(scope, stream))
	if err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	for _, kv := range txns {
		if err := s.store.Delete(ctx, kv.Key, cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return err
		}
	}
	if err := s.store.Delete(ctx, txnsKey(scope, stream), cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	if err := s.store.Delete(ctx, retentionKey(scope, stream), cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	if err := s.removeWatermarkRecords(ctx, scope, stream); err != nil {
		return err
	}
	if err := s.store.Delete(ctx, streamKey(scope, stream), cluster.AnyVersion); err != nil && !errors.Is(err, cluster.ErrNotFound) {
		return err
	}
	return nil
}

// Resume completes every unfinished workflow in the store: each stream's
// (create, scale, seal, truncate, delete), then each transaction being
// committed or aborted. The leader calls it when it starts; calling it at
// any time is safe, also while another controller runs the same workflows.
// It goes on past a failed workflow and returns the first error.
func (s *Service) Resume(ctx context.Context) error {
	return s.eachStream(ctx, func(scope, stream string) error {
		return errors.Join(s.runWorkflow(ctx, scope, stream), s.resumeTxns(ctx, scope, stream))
	})
}

// eachStream calls fn for every stream of every scope in the store. It goes
// on past a failure (of fn, or of listing one scope's streams) and returns
// the first one; only a failure to list the scopes stops it at once.
func (s *Service) eachStream(ctx context.Context, fn func(scope, stream string) error) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	scopes, err := s.list(ctx, "scopes")
	if err != nil {
		return err
	}
	for _, sc := range scopes {
		scope := sc.Key[len("scopes/"):]
		streams, err := s.list(ctx, streamsKey(scope))
		if err != nil {
			keep(err)
			continue
		}
		for _, st := range streams {
			keep(fn(scope, st.Key[len(streamsKey(scope))+1:]))
		}
	}
	return first
}
