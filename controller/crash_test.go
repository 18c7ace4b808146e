package controller

import (
	"sort"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

// nodeView is what the node holds of the given segments.
func nodeView(t *testing.T, e *env, names []string) map[string]string {
	c := e.conn()
	out := map[string]string{}
	for _, n := range names {
		out[n] = segState(t, c, n)
	}
	return out
}

// allSegmentNames lists the segment names a stream ever had.
func allSegmentNames(r *streamRec) []string {
	var out []string
	for _, sg := range r.Segments {
		out = append(out, r.name(sg))
	}
	sort.Strings(out)
	return out
}

var split = api.ScaleRequest{SealedSegments: []int64{1}, NewRanges: []api.KeyRange{{Low: 0.5, High: 0.75}, {Low: 0.75, High: 1}}}

// TestScaleCrashAtEveryStep stops a scale before each of its steps, then a
// new Service on the same store and node resumes it; the store and the node
// end as after a scale that never stopped.
func TestScaleCrashAtEveryStep(t *testing.T) {
	run := func(t *testing.T, step string) (*env, map[string]string) {
		e := newEnv(t)
		ctx := ctxT(t)
		s1 := e.service(crashAt(kindScale, step))
		must(t, s1.CreateScope(ctx, "sc"))
		_, err := s1.CreateStream(ctx, fixed("sc", "st", 2))
		must(t, err)
		before := dump(t, e.store)
		_, err = s1.Scale(ctx, "sc", "st", split)
		if step == "" {
			must(t, err)
			return e, dump(t, e.store)
		}
		wantErr(t, "scale stopped before "+step, err, ErrStepFailed)
		if step == stepIntent {
			equal(t, "store after a scale stopped before its intent", dump(t, e.store), before)
		} else {
			// While it is unfinished, other workflows and transactions wait.
			_, err = s1.Scale(ctx, "sc", "st", split)
			wantErr(t, "second scale while one is unfinished", err, ErrConflict)
			_, err = s1.CreateTxn(ctx, "sc", "st", 0)
			wantErr(t, "transaction while a scale is unfinished", err, ErrConflict)
		}
		s1.Close()
		s2 := e.service(nil)
		must(t, s2.Resume(ctx))
		if step == stepIntent {
			// Nothing was recorded: the caller got an error and retries.
			_, err = s2.Scale(ctx, "sc", "st", split)
			must(t, err)
		}
		return e, dump(t, e.store)
	}
	refEnv, ref := run(t, "")
	refRec := record(t, refEnv.store, "sc", "st")
	names := allSegmentNames(refRec)
	refNode := nodeView(t, refEnv, names)
	equal(t, "reference node", refNode, map[string]string{
		"sc/st/0.#epoch.0": "open", "sc/st/1.#epoch.0": "sealed", "sc/st/2.#epoch.1": "open", "sc/st/3.#epoch.1": "open"})
	for _, step := range []string{stepIntent, "createSegments", "sealSegments", "publishEpoch", "cleanup"} {
		t.Run(step, func(t *testing.T) {
			e, got := run(t, step)
			equal(t, "store", got, ref)
			equal(t, "node", nodeView(t, e, names), refNode)
		})
	}
}

// TestOtherWorkflowsCrashAtEveryStep does for create, seal, delete and
// truncate what TestScaleCrashAtEveryStep does for scale.
func TestOtherWorkflowsCrashAtEveryStep(t *testing.T) {
	type flow struct {
		kind  string
		steps []string
		setup func(t *testing.T, s *Service)
		do    func(s *Service) error
		retry bool // the request is repeated after a stop before intent
	}
	ctxFlows := []flow{
		{kindCreate, []string{stepIntent, "createSegments", "activate"},
			func(t *testing.T, s *Service) {},
			func(s *Service) error { _, err := s.CreateStream(ctxT(t), fixed("sc", "st", 2)); return err }, true},
		{kindSeal, []string{stepIntent, "finishTxns", "sealSegments", "markSealed"},
			func(t *testing.T, s *Service) {
				_, err := s.CreateStream(ctxT(t), fixed("sc", "st", 2))
				must(t, err)
			},
			func(s *Service) error { return s.SealStream(ctxT(t), "sc", "st") }, true},
		{kindDelete, []string{stepIntent, "deleteSegments", "removeRecords"},
			func(t *testing.T, s *Service) {
				_, err := s.CreateStream(ctxT(t), fixed("sc", "st", 2))
				must(t, err)
				must(t, s.SealStream(ctxT(t), "sc", "st"))
			},
			func(s *Service) error { return s.DeleteStream(ctxT(t), "sc", "st") }, true},
		{kindTruncate, []string{stepIntent, "truncateSegments", "publishHead", "deleteSegments", "cleanup"},
			func(t *testing.T, s *Service) {
				_, err := s.CreateStream(ctxT(t), fixed("sc", "st", 2))
				must(t, err)
				_, err = s.Scale(ctxT(t), "sc", "st", split)
				must(t, err)
			},
			func(s *Service) error {
				return s.TruncateStream(ctxT(t), "sc", "st", api.StreamCut{"sc/st/0.#epoch.0": 0, "sc/st/2.#epoch.1": 0, "sc/st/3.#epoch.1": 0})
			}, true},
	}
	names := []string{"sc/st/0.#epoch.0", "sc/st/1.#epoch.0", "sc/st/2.#epoch.1", "sc/st/3.#epoch.1"}
	for _, f := range ctxFlows {
		run := func(t *testing.T, step string) (*env, map[string]string) {
			e := newEnv(t)
			s1 := e.service(crashAt(f.kind, step))
			must(t, s1.CreateScope(ctxT(t), "sc"))
			f.setup(t, s1)
			err := f.do(s1)
			if step == "" {
				must(t, err)
				return e, dump(t, e.store)
			}
			wantErr(t, f.kind+" stopped before "+step, err, ErrStepFailed)
			s1.Close()
			s2 := e.service(nil)
			must(t, s2.Resume(ctxT(t)))
			if step == stepIntent {
				must(t, f.do(s2))
			}
			return e, dump(t, e.store)
		}
		t.Run(f.kind, func(t *testing.T) {
			refEnv, ref := run(t, "")
			refNode := nodeView(t, refEnv, names)
			for _, step := range f.steps {
				t.Run(step, func(t *testing.T) {
					e, got := run(t, step)
					equal(t, "store", got, ref)
					equal(t, "node", nodeView(t, e, names), refNode)
				})
			}
		})
	}
}
