package client

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata/")

func gseg(n int) string {
	return fmt.Sprintf("s/x/%d.#epoch.%d", n, map[bool]int{true: 0, false: 1}[n < 4])
}

// TestGroupStateGolden runs the group's transitions through one story
// (join, rebalance, release, segment ends across a scale, expiry, a
// checkpoint with a segment ending in it, leave, reset, truncations) and
// compares the
// state after each step with testdata/group_state.golden (regenerate with
// go test -run TestGroupStateGolden -update).
func TestGroupStateGolden(t *testing.T) {
	s := newGroupState(api.StreamCut{gseg(0): 0, gseg(1): 0, gseg(2): 0, gseg(3): 0})
	var out strings.Builder
	step := func(what string, f func() any) {
		res := f()
		b, _ := json.MarshalIndent(s, "", "  ")
		fmt.Fprintf(&out, "## %s\n", what)
		if res != nil {
			r, _ := json.Marshal(res)
			fmt.Fprintf(&out, "-> %s\n", r)
		}
		fmt.Fprintf(&out, "%s\n\n", b)
	}
	// Successors of a split of 0 into 4 and 5, and a merge of 1 and 2 into 6.
	split := []api.Successor{
		{Segment: api.SegmentRange{Segment: gseg(4)}, Predecessors: []string{gseg(0)}},
		{Segment: api.SegmentRange{Segment: gseg(5)}, Predecessors: []string{gseg(0)}},
	}
	merge := []api.Successor{{Segment: api.SegmentRange{Segment: gseg(6)}, Predecessors: []string{gseg(1), gseg(2)}}}
	plan := func(id string) any {
		rel, acq := s.plan(id)
		return map[string]any{"release": rel, "acquire": acq}
	}
	step("a joins", func() any { s.join("a", 1000); return nil })
	step("plan a: takes all four", func() any { return plan("a") })
	step("a acquires", func() any { _, acq := s.plan("a"); return s.acquire("a", acq) })
	step("b joins", func() any { s.join("b", 1000); return nil })
	step("plan b: nothing free", func() any { return plan("b") })
	step("plan a: over its share of 2, releases 2 and 3", func() any { return plan("a") })
	step("a heartbeats with positions and releases 2 and 3", func() any {
		return s.report("a", 1100, groupReport{Positions: api.StreamCut{gseg(0): 10, gseg(1): 20},
			Released: api.StreamCut{gseg(2): 30, gseg(3): 40}})
	})
	step("b acquires 2 and 3", func() any { _, acq := s.plan("b"); return s.acquire("b", acq) })
	step("a ends 0 (split): 4 and 5 start", func() any {
		return s.report("a", 1200, groupReport{Ended: map[string]EndedSegment{gseg(0): {End: 50, Successors: split}}})
	})
	step("a ends 1 (merge with 2): 6 waits for 2", func() any {
		return s.report("a", 1300, groupReport{Ended: map[string]EndedSegment{gseg(1): {End: 60, Successors: merge}}})
	})
	step("b heartbeats", func() any { return s.report("b", 1300, groupReport{Positions: api.StreamCut{gseg(2): 35}}) })
	step("a is expired by b at 3000 (timeout 1000)", func() any { return s.expire("b", 3000, 1000) })
	step("plan b", func() any { return plan("b") })
	step("b acquires", func() any { _, acq := s.plan("b"); return s.acquire("b", acq) })
	step("c joins", func() any { s.join("c", 3000); return nil })
	step("checkpoint cp1", func() any { return errText(s.startCheckpoint("cp1")) })
	step("plan b during the checkpoint: frozen", func() any { return plan("b") })
	step("b ends 2 during the checkpoint: 6 must wait", func() any {
		return s.report("b", 3100, groupReport{Positions: api.StreamCut{gseg(3): 45, gseg(4): 5},
			Ended: map[string]EndedSegment{gseg(2): {End: 70, Successors: merge}}})
	})
	step("b heartbeats before its checkpoint event: still pending", func() any { return s.report("b", 3150, groupReport{}) })
	step("b reports its position at the checkpoint event", func() any {
		return s.report("b", 3200, groupReport{Positions: api.StreamCut{gseg(3): 47},
			Checkpoint: &checkpointReport{Name: "cp1", Positions: api.StreamCut{gseg(3): 45, gseg(4): 5, gseg(5): 0}}})
	})
	step("c reports another checkpoint's event: ignored", func() any {
		return s.report("c", 3200, groupReport{Checkpoint: &checkpointReport{Name: "cp0", Positions: api.StreamCut{}}})
	})
	step("c reports its checkpoint event: cp1 completes, 6 starts", func() any {
		return s.report("c", 3200, groupReport{Checkpoint: &checkpointReport{Name: "cp1", Positions: api.StreamCut{}}})
	})
	step("not a member", func() any { return errText(s.report("z", 3200, groupReport{})) })
	step("b leaves at positions", func() any { s.leave("b", api.StreamCut{gseg(3): 48}); return nil })
	step("reset to cp1", func() any { c, _ := s.checkpointCut("cp1"); s.reset(c); return nil })
	step("c acquires all five", func() any { _, acq := s.plan("c"); return s.acquire("c", acq) })
	step("c ends 1 (merge with 2): 6 waits for 2", func() any {
		return s.report("c", 3300, groupReport{Ended: map[string]EndedSegment{gseg(1): {End: 60, Successors: merge}}})
	})
	step("d joins", func() any { s.join("d", 3300); return nil })
	step("c meets a truncation inside 4: 4 unassigned at the head offset", func() any {
		return errText(s.truncated("c", []groupTruncation{{Segment: gseg(4), Drop: []string{gseg(4)}, Head: api.StreamCut{gseg(4): 20}}}))
	})
	step("c meets 2 deleted: 6 unassigned at the head offset, 1 no longer waits", func() any {
		return errText(s.truncated("c", []groupTruncation{{Segment: gseg(2), Drop: []string{gseg(2), gseg(1)}, Head: api.StreamCut{gseg(6): 7}}}))
	})
	step("plan c: at its share of 2, nothing to do", func() any { return plan("c") })
	step("d acquires 4 and 6", func() any { _, acq := s.plan("d"); return s.acquire("d", acq) })
	step("c meets the same truncation again in 2: it no longer holds 2, ignored", func() any {
		return errText(s.truncated("c", []groupTruncation{{Segment: gseg(2), Drop: []string{gseg(2), gseg(1)}, Head: api.StreamCut{gseg(6): 7}}}))
	})
	step("c meets 3 deleted, replaced by 6 that d holds: not placed twice", func() any {
		return errText(s.truncated("c", []groupTruncation{{Segment: gseg(3), Drop: []string{gseg(3)}, Head: api.StreamCut{gseg(6): 7}}}))
	})
	step("truncation of a non-member", func() any { return errText(s.truncated("z", nil)) })
	step("c ends 6 at an end cut (no successors)", func() any {
		return s.report("c", 3400, groupReport{Ended: map[string]EndedSegment{gseg(6): {End: 7, Successors: []api.Successor{}}}})
	})

	path := "testdata/group_state.golden"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != out.String() {
		t.Fatalf("state differs from %s (run with -update and review the diff):\n%s", path, out.String())
	}
}

func errText(err error) any {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestGroupStateFairShare checks the fair share and the plan in a table.
func TestGroupStateFairShare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		readers map[string]int // reader -> segments held
		free    int
		self    string
		rel     int
		acq     int
	}{
		{"alone takes all", map[string]int{"a": 0}, 4, "a", 0, 4},
		{"second waits for the first to release", map[string]int{"a": 4, "b": 0}, 0, "b", 0, 0},
		{"first releases to its share", map[string]int{"a": 4, "b": 0}, 0, "a", 2, 0},
		{"ceil share of 5 over 2", map[string]int{"a": 5, "b": 0}, 0, "a", 2, 0},
		{"under share takes free", map[string]int{"a": 2, "b": 1}, 1, "b", 0, 1},
		{"three readers, four segments", map[string]int{"a": 2, "b": 2, "c": 0}, 0, "c", 0, 0},
		{"at share does nothing", map[string]int{"a": 2, "b": 2}, 0, "a", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGroupState(nil)
			n := 0
			for id, k := range tc.readers {
				s.join(id, 0)
				for range k {
					s.Readers[id].Segments[gseg(n)] = 0
					n++
				}
			}
			for range tc.free {
				s.Unassigned[gseg(n)] = 0
				n++
			}
			rel, acq := s.plan(tc.self)
			if len(rel) != tc.rel || len(acq) != tc.acq {
				t.Fatalf("plan(%s) = release %v acquire %v, want %d and %d", tc.self, rel, acq, tc.rel, tc.acq)
			}
		})
	}
}

// TestGroupStateTruncated checks the truncation transition in a table:
// reader a meets a truncation; b holds other segments.
func TestGroupStateTruncated(t *testing.T) {
	merge := []api.Successor{{Segment: api.SegmentRange{Segment: gseg(6)}, Predecessors: []string{gseg(1), gseg(2)}}}
	for _, tc := range []struct {
		name       string
		a, b       []int // segments held
		ended      []int // ended, merging into 6
		checkpoint bool
		tr         groupTruncation
		wantA      []int
		wantB      []int
		unassigned api.StreamCut
		wantEnded  int
	}{
		{name: "inside a held segment: unassigned at the head offset",
			a: []int{0, 1}, b: []int{2}, tr: groupTruncation{Segment: gseg(0), Drop: []string{gseg(0)}, Head: api.StreamCut{gseg(0): 9}},
			wantA: []int{1}, wantB: []int{2}, unassigned: api.StreamCut{gseg(0): 9}},
		{name: "deleted: each replacing head segment unassigned",
			a: []int{0}, tr: groupTruncation{Segment: gseg(0), Drop: []string{gseg(0)}, Head: api.StreamCut{gseg(4): 3, gseg(5): 0}},
			unassigned: api.StreamCut{gseg(4): 3, gseg(5): 0}},
		{name: "head segment held by another reader: not placed twice",
			a: []int{0}, b: []int{4}, tr: groupTruncation{Segment: gseg(0), Drop: []string{gseg(0)}, Head: api.StreamCut{gseg(4): 3, gseg(5): 0}},
			wantB: []int{4}, unassigned: api.StreamCut{gseg(5): 0}},
		{name: "segment not held by the reader: ignored",
			a: []int{1}, b: []int{0}, tr: groupTruncation{Segment: gseg(0), Drop: []string{gseg(0)}, Head: api.StreamCut{gseg(4): 3}},
			wantA: []int{1}, wantB: []int{0}, unassigned: api.StreamCut{}},
		{name: "deleted predecessor another reader holds leaves that reader",
			a: []int{2}, b: []int{1, 3}, tr: groupTruncation{Segment: gseg(2), Drop: []string{gseg(2), gseg(1)}, Head: api.StreamCut{gseg(6): 5}},
			wantB: []int{3}, unassigned: api.StreamCut{gseg(6): 5}},
		{name: "deleted predecessor that had ended leaves Ended",
			a: []int{2}, ended: []int{1}, tr: groupTruncation{Segment: gseg(2), Drop: []string{gseg(2), gseg(1)}, Head: api.StreamCut{gseg(6): 5}},
			unassigned: api.StreamCut{gseg(6): 5}},
		{name: "ended segment whose successor the head places leaves Ended",
			a: []int{2}, ended: []int{1}, tr: groupTruncation{Segment: gseg(2), Drop: []string{gseg(2)}, Head: api.StreamCut{gseg(6): 5}},
			unassigned: api.StreamCut{gseg(6): 5}},
		{name: "during a checkpoint: the dropped position leaves it",
			a: []int{0, 1}, checkpoint: true, tr: groupTruncation{Segment: gseg(0), Drop: []string{gseg(0)}, Head: api.StreamCut{gseg(0): 9}},
			wantA: []int{1}, unassigned: api.StreamCut{gseg(0): 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGroupState(nil)
			s.join("a", 0)
			s.join("b", 0)
			for _, n := range tc.a {
				s.Readers["a"].Segments[gseg(n)] = 1
			}
			for _, n := range tc.b {
				s.Readers["b"].Segments[gseg(n)] = 1
			}
			for _, n := range tc.ended {
				s.Ended[gseg(n)] = EndedSegment{End: 10, Successors: merge}
			}
			if tc.checkpoint {
				s.Checkpoint = &Checkpoint{Name: "cp", Pending: []string{"b"}, Positions: api.StreamCut{gseg(0): 1, gseg(1): 1}}
			}
			if err := s.truncated("a", []groupTruncation{tc.tr}); err != nil {
				t.Fatal(err)
			}
			for id, held := range map[string][]int{"a": tc.wantA, "b": tc.wantB} {
				want := api.StreamCut{}
				for _, n := range held {
					want[gseg(n)] = 1
				}
				if fmt.Sprint(s.Readers[id].Segments) != fmt.Sprint(map[string]int64(want)) {
					t.Fatalf("%s holds %v, want %v", id, s.Readers[id].Segments, want)
				}
			}
			if fmt.Sprint(s.Unassigned) != fmt.Sprint(map[string]int64(tc.unassigned)) {
				t.Fatalf("unassigned %v, want %v", s.Unassigned, tc.unassigned)
			}
			if len(s.Ended) != tc.wantEnded {
				t.Fatalf("ended %v, want %d", s.Ended, tc.wantEnded)
			}
			if tc.checkpoint {
				if _, ok := s.Checkpoint.Positions[gseg(0)]; ok {
					t.Fatalf("checkpoint positions %v still hold the dropped segment", s.Checkpoint.Positions)
				}
			}
		})
	}
	if err := newGroupState(nil).truncated("z", nil); !errors.Is(err, ErrNotMember) {
		t.Fatalf("non-member: %v", err)
	}
}
