package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

func TestStreamLifecycle(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	c := e.conn()
	ctx := ctxT(t)

	must(t, s.CreateScope(ctx, "sc"))
	wantErr(t, "create scope twice", s.CreateScope(ctx, "sc"), ErrExists)
	cfg := fixed("sc", "st", 3)
	cfg.Tags = map[string]string{"team": "a"}
	info, err := s.CreateStream(ctx, cfg)
	must(t, err)
	if info.Epoch != 0 || info.Sealed || info.CreationTime != e.clock.now().UnixMilli() {
		t.Fatalf("created %+v", info)
	}
	_, err = s.CreateStream(ctx, cfg)
	wantErr(t, "create stream twice", err, ErrExists)
	_, err = s.CreateStream(ctx, fixed("sc", "other", 1))
	must(t, err)

	segs, err := s.CurrentSegments(ctx, "sc", "st")
	must(t, err)
	if len(segs) != 3 || segs[0].KeyLow != 0 || segs[2].KeyHigh != 1 || segs[0].KeyHigh != segs[1].KeyLow {
		t.Fatalf("segments %+v", segs)
	}
	for _, sg := range segs {
		equal(t, "segment on the node", segState(t, c, sg.Segment), "open")
	}

	list, err := s.ListStreams(ctx, "sc", nil)
	must(t, err)
	equal(t, "streams", len(list), 2)
	list, err = s.ListStreams(ctx, "sc", map[string]string{"team": "a"})
	must(t, err)
	equal(t, "streams tagged team=a", len(list), 1)
	list, err = s.ListStreams(ctx, "sc", map[string]string{"team": ""})
	must(t, err)
	equal(t, "streams tagged team", len(list), 1)
	list, err = s.ListStreams(ctx, "sc", map[string]string{"team": "b"})
	must(t, err)
	equal(t, "streams tagged team=b", len(list), 0)

	upd := fixed("", "", 5)
	upd.RetentionPolicy = &api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 3}
	info, err = s.UpdateStream(ctx, "sc", "st", upd)
	must(t, err)
	if info.ScalingPolicy.MinSegments != 5 || info.RetentionPolicy.Value != 3 || info.ScopeName != "sc" {
		t.Fatalf("updated %+v", info)
	}
	if segs2, _ := s.CurrentSegments(ctx, "sc", "st"); len(segs2) != 3 {
		t.Fatalf("an update scaled the stream: %v", segs2)
	}

	// Scale: split segment 1.
	e.clock.advance(time.Second)
	scaledAt := e.clock.now()
	mid := (segs[1].KeyLow + segs[1].KeyHigh) / 2
	created, err := s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{1},
		NewRanges: []api.KeyRange{{Low: segs[1].KeyLow, High: mid}, {Low: mid, High: segs[1].KeyHigh}}})
	must(t, err)
	if len(created) != 2 || created[0].Number != 3 || created[0].Epoch != 1 || created[1].Number != 4 {
		t.Fatalf("scale created %+v", created)
	}
	equal(t, "sealed by the scale", segState(t, c, segs[1].Segment), "sealed")
	equal(t, "created by the scale", segState(t, c, created[0].Segment), "open")
	succ, err := s.Successors(ctx, segs[1].Segment)
	must(t, err)
	if len(succ) != 2 || succ[0].Segment.Segment != created[0].Segment || len(succ[0].Predecessors) != 1 || succ[0].Predecessors[0] != segs[1].Segment {
		t.Fatalf("successors %+v", succ)
	}
	if succ, _ := s.Successors(ctx, segs[0].Segment); len(succ) != 0 {
		t.Fatalf("successors of an active segment: %+v", succ)
	}
	r, err := s.SegmentRangeOf(ctx, created[1].Segment)
	must(t, err)
	equal(t, "range of a new segment", r, created[1])
	at, err := s.SegmentsAt(ctx, "sc", "st", scaledAt.Add(-time.Millisecond))
	must(t, err)
	equal(t, "segments before the scale", at, api.StreamCut{segs[0].Segment: 0, segs[1].Segment: 0, segs[2].Segment: 0})
	at, err = s.SegmentsAt(ctx, "sc", "st", scaledAt)
	must(t, err)
	equal(t, "segments after the scale", at, api.StreamCut{segs[0].Segment: 0, created[0].Segment: 0, created[1].Segment: 0, segs[2].Segment: 0})
	between, err := s.SegmentsBetween(ctx, "sc", "st", nil, nil)
	must(t, err)
	equal(t, "segments between head and end", len(between), 5)

	// Truncate at a cut after the scale: segment 1 goes.
	write(t, c, segs[0].Segment, "a", "b")
	cut := api.StreamCut{segs[0].Segment: 5, created[0].Segment: 0, created[1].Segment: 0, segs[2].Segment: 0}
	must(t, s.TruncateStream(ctx, "sc", "st", cut))
	equal(t, "segment before the cut", segState(t, c, segs[1].Segment), "missing")
	head, err := s.HeadCut(ctx, "sc", "st")
	must(t, err)
	equal(t, "head", head, cut)
	got, err := c.GetSegmentInfo(ctx, segs[0].Segment)
	must(t, err)
	equal(t, "start offset of a truncated segment", got.StartOffset, int64(5))
	must(t, s.TruncateStream(ctx, "sc", "st", cut)) // again: nothing changes

	// Seal, delete.
	wantErr(t, "delete unsealed", s.DeleteStream(ctx, "sc", "st"), ErrConflict)
	must(t, s.SealStream(ctx, "sc", "st"))
	must(t, s.SealStream(ctx, "sc", "st"))
	info, err = s.GetStream(ctx, "sc", "st")
	must(t, err)
	if !info.Sealed || info.Epoch != 1 {
		t.Fatalf("sealed stream %+v", info)
	}
	for _, sg := range []string{segs[0].Segment, created[0].Segment, created[1].Segment, segs[2].Segment} {
		equal(t, "segment of a sealed stream", segState(t, c, sg), "sealed")
	}
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: segs[0].KeyHigh}}})
	wantErr(t, "scale a sealed stream", err, ErrConflict)
	_, err = s.UpdateStream(ctx, "sc", "st", upd)
	wantErr(t, "update a sealed stream", err, ErrConflict)
	wantErr(t, "delete a non-empty scope", s.DeleteScope(ctx, "sc"), ErrConflict)
	must(t, s.DeleteStream(ctx, "sc", "st"))
	for _, sg := range []string{segs[0].Segment, created[0].Segment, segs[2].Segment} {
		equal(t, "segment of a deleted stream", segState(t, c, sg), "missing")
	}
	_, err = s.GetStream(ctx, "sc", "st")
	wantErr(t, "get a deleted stream", err, ErrNotFound)
	must(t, s.SealStream(ctx, "sc", "other"))
	must(t, s.DeleteStream(ctx, "sc", "other"))
	must(t, s.DeleteScope(ctx, "sc"))
	scopes, err := s.ListScopes(ctx)
	must(t, err)
	equal(t, "scopes", len(scopes), 0)
	equal(t, "store after everything was deleted", dump(t, e.store), map[string]string{"scopes": ""})

	// A stream of the same name can be created again, from segment 0.
	must(t, s.CreateScope(ctx, "sc"))
	_, err = s.CreateStream(ctx, fixed("sc", "st", 1))
	must(t, err)
}

func TestInternalNames(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	wantErr(t, "user creates _system", s.CreateScope(ctx, "_system"), ErrInvalid)
	must(t, s.CreateScope(WithInternal(ctx), "_system"))
	_, err := s.CreateStream(WithInternal(ctx), fixed("_system", "_rg", 1))
	must(t, err)
	scopes, err := s.ListScopes(ctx)
	must(t, err)
	equal(t, "scopes a user sees", len(scopes), 0)
	scopes, err = s.ListScopes(WithInternal(ctx))
	must(t, err)
	equal(t, "scopes Sluice sees", len(scopes), 1)
}

// TestBadInputChangesNothing runs every refused request and checks that the
// store is as before, byte for byte.
func TestBadInputChangesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.service(nil)
	ctx := ctxT(t)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 2))
	must(t, err)
	_, err = s.CreateStream(ctx, fixed("sc", "sealed", 1))
	must(t, err)
	must(t, s.SealStream(ctx, "sc", "sealed"))
	segs, err := s.CurrentSegments(ctx, "sc", "st")
	must(t, err)
	s0, s1 := segs[0].Segment, segs[1].Segment
	_, err = s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}})
	must(t, err)
	long := strings.Repeat("x", 256)
	c := e.conn()
	write(t, c, s1, "12345")

	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"scope: bad character", func() error { return s.CreateScope(ctx, "a b") }, ErrInvalid},
		{"scope: empty", func() error { return s.CreateScope(ctx, "") }, ErrInvalid},
		{"scope: too long", func() error { return s.CreateScope(ctx, long) }, ErrInvalid},
		{"scope: dot", func() error { return s.CreateScope(ctx, ".") }, ErrInvalid},
		{"scope: reserved", func() error { return s.CreateScope(ctx, "_x") }, ErrInvalid},
		{"scope: exists", func() error { return s.CreateScope(ctx, "sc") }, ErrExists},
		{"scope: delete unknown", func() error { return s.DeleteScope(ctx, "nope") }, ErrNotFound},
		{"scope: delete non-empty", func() error { return s.DeleteScope(ctx, "sc") }, ErrConflict},
		{"stream: bad name", func() error { _, err := s.CreateStream(ctx, fixed("sc", "a/b", 1)); return err }, ErrInvalid},
		{"stream: reserved name", func() error { _, err := s.CreateStream(ctx, fixed("sc", "_b", 1)); return err }, ErrInvalid},
		{"stream: unknown scope", func() error { _, err := s.CreateStream(ctx, fixed("nope", "b", 1)); return err }, ErrNotFound},
		{"stream: exists", func() error { _, err := s.CreateStream(ctx, fixed("sc", "st", 1)); return err }, ErrExists},
		{"stream: zero segments", func() error { _, err := s.CreateStream(ctx, fixed("sc", "new", 0)); return err }, ErrInvalid},
		{"stream: bad policy", func() error {
			cfg := fixed("sc", "new", 1)
			cfg.ScalingPolicy.Type = "SOMETIMES"
			_, err := s.CreateStream(ctx, cfg)
			return err
		}, ErrInvalid},
		{"stream: get unknown", func() error { _, err := s.GetStream(ctx, "sc", "nope"); return err }, ErrNotFound},
		{"stream: list unknown scope", func() error { _, err := s.ListStreams(ctx, "nope", nil); return err }, ErrNotFound},
		{"stream: update renames", func() error { _, err := s.UpdateStream(ctx, "sc", "st", fixed("sc", "other", 1)); return err }, ErrInvalid},
		{"stream: update bad config", func() error { _, err := s.UpdateStream(ctx, "sc", "st", fixed("", "", 0)); return err }, ErrInvalid},
		{"stream: update unknown", func() error { _, err := s.UpdateStream(ctx, "sc", "nope", fixed("", "", 1)); return err }, ErrNotFound},
		{"stream: update sealed", func() error { _, err := s.UpdateStream(ctx, "sc", "sealed", fixed("", "", 1)); return err }, ErrConflict},
		{"stream: seal unknown", func() error { return s.SealStream(ctx, "sc", "nope") }, ErrNotFound},
		{"stream: delete unsealed", func() error { return s.DeleteStream(ctx, "sc", "st") }, ErrConflict},
		{"stream: delete unknown", func() error { return s.DeleteStream(ctx, "sc", "nope") }, ErrNotFound},
		{"scale: gap", func() error {
			return scaleErr(s, 1, api.KeyRange{Low: 0.5, High: 0.7}, api.KeyRange{Low: 0.8, High: 1})
		}, ErrInvalid},
		{"scale: overlap", func() error {
			return scaleErr(s, 1, api.KeyRange{Low: 0.5, High: 0.8}, api.KeyRange{Low: 0.7, High: 1})
		}, ErrInvalid},
		{"scale: too wide", func() error { return scaleErr(s, 1, api.KeyRange{Low: 0.4, High: 1}) }, ErrInvalid},
		{"scale: no ranges", func() error { return scaleErr(s, 1) }, ErrInvalid},
		{"scale: sealed segment", func() error { return scaleErr(s, 0, api.KeyRange{Low: 0, High: 0.5}) }, ErrInvalid},
		{"scale: unknown segment", func() error { return scaleErr(s, 7, api.KeyRange{Low: 0, High: 0.5}) }, ErrInvalid},
		{"scale: not neighbours", func() error {
			_, err := s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: []int64{2, 1}, NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.5, High: 1}}})
			return err
		}, ErrInvalid},
		{"scale: sealed stream", func() error {
			_, err := s.Scale(ctx, "sc", "sealed", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
			return err
		}, ErrConflict},
		{"scale: unknown stream", func() error {
			_, err := s.Scale(ctx, "sc", "nope", api.ScaleRequest{SealedSegments: []int64{0}, NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
			return err
		}, ErrNotFound},
		{"truncate: malformed name", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{"garbage": 0}) }, ErrInvalid},
		{"truncate: negative offset", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{s1: -1}) }, ErrInvalid},
		{"truncate: gap", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{s1: 0}) }, ErrInvalid},
		{"truncate: empty", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{}) }, ErrInvalid},
		{"truncate: segment and its successor", func() error {
			return s.TruncateStream(ctx, "sc", "st", api.StreamCut{s0: 0, s1: 0, "sc/st/2.#epoch.1": 0})
		}, ErrInvalid},
		{"truncate: other stream", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{"sc/sealed/0.#epoch.0": 0}) }, ErrInvalid},
		{"truncate: unknown segment", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{"sc/st/9.#epoch.0": 0}) }, ErrInvalid},
		{"truncate: wrong epoch", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{s0: 0, "sc/st/1.#epoch.1": 0}) }, ErrInvalid},
		{"truncate: beyond the end", func() error { return s.TruncateStream(ctx, "sc", "st", api.StreamCut{s0: 0, s1: 1000}) }, ErrInvalid},
		{"segments: bad name", func() error { _, err := s.Successors(ctx, "x"); return err }, ErrInvalid},
		{"segments: unknown", func() error { _, err := s.Successors(ctx, "sc/st/9.#epoch.0"); return err }, ErrNotFound},
		{"segments: between reversed", func() error {
			_, err := s.SegmentsBetween(ctx, "sc", "st", api.StreamCut{"sc/st/2.#epoch.1": 0, "sc/st/3.#epoch.1": 0, s1: 0}, api.StreamCut{s0: 0, s1: 0})
			return err
		}, ErrInvalid},
		{"txn: bad lease", func() error { _, err := s.CreateTxn(ctx, "sc", "st", -time.Second); return err }, ErrInvalid},
		{"txn: lease above max", func() error { _, err := s.CreateTxn(ctx, "sc", "st", time.Hour); return err }, ErrInvalid},
		{"txn: sealed stream", func() error { _, err := s.CreateTxn(ctx, "sc", "sealed", 0); return err }, ErrConflict},
		{"txn: unknown stream", func() error { _, err := s.CreateTxn(ctx, "sc", "nope", 0); return err }, ErrNotFound},
		{"txn: bad id", func() error { return s.CommitTxn(ctx, "sc", "st", "x") }, ErrInvalid},
		{"txn: unknown id", func() error { return s.CommitTxn(ctx, "sc", "st", "0f8fad5b-d9cb-469f-a165-70867728950e") }, ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(t, e.store)
			err := tc.do()
			wantErr(t, tc.name, err, tc.want)
			equal(t, "store after "+tc.name, dump(t, e.store), before)
		})
	}
}

func scaleErr(s *Service, seg int64, ranges ...api.KeyRange) error {
	_, err := s.Scale(context.Background(), "sc", "st", api.ScaleRequest{SealedSegments: []int64{seg}, NewRanges: ranges})
	return err
}
