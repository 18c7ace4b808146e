package controller

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

// rec builds a stream record with n even epoch-0 segments, epoch 0 created
// at time 0.
func rec(n int) *streamRec {
	r := &streamRec{Config: api.StreamConfig{ScopeName: "sc", StreamName: "st"}}
	e := epochRec{}
	for i, kr := range evenRanges(n) {
		r.Segments = append(r.Segments, segmentRec{Number: int64(i), Low: kr.Low, High: kr.High})
		e.Segments = append(e.Segments, int64(i))
	}
	r.Epochs = []epochRec{e}
	r.NextSegment = int64(n)
	return r
}

// scale applies a scale to r at time now, failing the test if it is refused.
func scale(t *testing.T, r *streamRec, now int64, sealed []int64, ranges ...api.KeyRange) {
	t.Helper()
	w, err := planScale(r, api.ScaleRequest{SealedSegments: sealed, NewRanges: ranges}, now)
	if err != nil {
		t.Fatal(err)
	}
	r.NextSegment += int64(len(w.New))
	applyScale(r, w, now)
}

func kr(lo, hi float64) api.KeyRange { return api.KeyRange{Low: lo, High: hi} }

func TestEvenRanges(t *testing.T) {
	for n := 1; n <= 7; n++ {
		rs := evenRanges(n)
		if _, err := checkCover(rs, 0, 1); err != nil {
			t.Errorf("evenRanges(%d) = %v: %v", n, rs, err)
		}
	}
}

func TestCheckCover(t *testing.T) {
	cases := []struct {
		name     string
		ranges   []api.KeyRange
		lo, hi   float64
		wantErr  string
		wantSort []api.KeyRange
	}{
		{"exact", []api.KeyRange{kr(0.5, 1), kr(0, 0.5)}, 0, 1, "", []api.KeyRange{kr(0, 0.5), kr(0.5, 1)}},
		{"sub range", []api.KeyRange{kr(0.25, 0.3), kr(0.3, 0.5)}, 0.25, 0.5, "", nil},
		{"none", nil, 0, 1, "no key ranges", nil},
		{"gap", []api.KeyRange{kr(0, 0.4), kr(0.5, 1)}, 0, 1, "gap", nil},
		{"gap at start", []api.KeyRange{kr(0.1, 1)}, 0, 1, "gap", nil},
		{"gap at end", []api.KeyRange{kr(0, 0.9)}, 0, 1, "gap", nil},
		{"overlap", []api.KeyRange{kr(0, 0.6), kr(0.5, 1)}, 0, 1, "overlap", nil},
		{"duplicate", []api.KeyRange{kr(0, 1), kr(0, 1)}, 0, 1, "overlap", nil},
		{"beyond", []api.KeyRange{kr(0, 0.6)}, 0, 0.5, "beyond", nil},
		{"empty range", []api.KeyRange{kr(0, 0), kr(0, 1)}, 0, 1, "empty", nil},
		{"inverted", []api.KeyRange{kr(0.5, 0.2)}, 0, 1, "empty", nil},
		{"outside", []api.KeyRange{kr(-0.5, 1)}, 0, 1, "outside", nil},
	}
	for _, tc := range cases {
		got, err := checkCover(tc.ranges, tc.lo, tc.hi)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else if tc.wantSort != nil && !reflect.DeepEqual(got, tc.wantSort) {
				t.Errorf("%s: sorted %v, want %v", tc.name, got, tc.wantSort)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want ErrInvalid with %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestPlanScale(t *testing.T) {
	r := rec(4)                                                // 0:[0,.25) 1:[.25,.5) 2:[.5,.75) 3:[.75,1)
	scale(t, r, 10, []int64{0}, kr(0, 0.125), kr(0.125, 0.25)) // 4, 5 in epoch 1
	cases := []struct {
		name    string
		sealed  []int64
		ranges  []api.KeyRange
		wantErr string
	}{
		{"merge two", []int64{2, 1}, []api.KeyRange{kr(0.25, 0.75)}, ""},
		{"split one in three", []int64{3}, []api.KeyRange{kr(0.75, 0.8), kr(0.8, 0.9), kr(0.9, 1)}, ""},
		{"merge new and old", []int64{5, 1}, []api.KeyRange{kr(0.125, 0.5)}, ""},
		{"sealed segment", []int64{0}, []api.KeyRange{kr(0, 0.25)}, "not active"},
		{"unknown segment", []int64{9}, []api.KeyRange{kr(0, 0.25)}, "does not exist"},
		{"negative segment", []int64{-1}, []api.KeyRange{kr(0, 0.25)}, "does not exist"},
		{"not neighbours", []int64{1, 3}, []api.KeyRange{kr(0.25, 0.5), kr(0.75, 1)}, "neighbours"},
		{"twice", []int64{1, 1}, []api.KeyRange{kr(0.25, 0.5)}, "twice"},
		{"nothing", nil, []api.KeyRange{kr(0.25, 0.5)}, "no segments"},
		{"gap", []int64{1}, []api.KeyRange{kr(0.25, 0.3), kr(0.31, 0.5)}, "gap"},
		{"overlap", []int64{1}, []api.KeyRange{kr(0.25, 0.4), kr(0.3, 0.5)}, "overlap"},
		{"too wide", []int64{1}, []api.KeyRange{kr(0.25, 0.6)}, "beyond"},
		{"too narrow", []int64{1}, []api.KeyRange{kr(0.3, 0.5)}, "gap"},
	}
	for _, tc := range cases {
		w, err := planScale(r, api.ScaleRequest{SealedSegments: tc.sealed, NewRanges: tc.ranges}, 20)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if w.NewEpoch != 2 || w.New[0].Number != 6 || w.New[0].Epoch != 2 {
				t.Errorf("%s: planned %+v, want epoch 2 from segment 6", tc.name, w)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want ErrInvalid with %q", tc.name, err, tc.wantErr)
		}
	}
}

// history: 2 segments; epoch 1 (t=10) splits 1 into 2,3; epoch 2 (t=20)
// merges 0 and 2 into 4.
//
//	key 1   +----1----+----3-------------------
//	key .75 |         +----2----+----4---------
//	key .5  +----0--------------+
//	key 0   t=0       t=10      t=20
func history(t *testing.T) *streamRec {
	r := rec(2)
	scale(t, r, 10, []int64{1}, kr(0.5, 0.75), kr(0.75, 1))
	scale(t, r, 20, []int64{0, 2}, kr(0, 0.75))
	return r
}

func TestSuccessors(t *testing.T) {
	r := history(t)
	name := func(n int64) string { return r.name(r.Segments[n]) }
	cases := []struct {
		seg  int64
		want map[int64][]string // successor -> predecessors
	}{
		{0, map[int64][]string{4: {name(0), name(2)}}},
		{1, map[int64][]string{2: {name(1)}, 3: {name(1)}}},
		{2, map[int64][]string{4: {name(0), name(2)}}},
		{3, map[int64][]string{}},
		{4, map[int64][]string{}},
	}
	for _, tc := range cases {
		got := map[int64][]string{}
		for _, s := range r.successors(tc.seg) {
			got[s.Segment.Number] = s.Predecessors
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("successors(%d) = %v, want %v", tc.seg, got, tc.want)
		}
	}
}

func TestEpochAt(t *testing.T) {
	r := history(t)
	for _, tc := range []struct{ t, want int64 }{{-5, 0}, {0, 0}, {9, 0}, {10, 1}, {19, 1}, {20, 2}, {1000, 2}} {
		if got := r.epochAt(tc.t).Epoch; got != tc.want {
			t.Errorf("epochAt(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
	r.Head = map[int64]int64{0: 5, 2: 7, 3: 0}
	if got, want := r.cutAt(0), r.Head; !reflect.DeepEqual(got, want) {
		t.Errorf("cutAt before the head = %v, want the head %v", got, want)
	}
	if got, want := r.cutAt(25), map[int64]int64{4: 0, 3: 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("cutAt(25) = %v, want %v", got, want)
	}
	if got, want := r.cutAt(15), map[int64]int64{0: 5, 2: 7, 3: 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("cutAt(15) = %v, want %v", got, want)
	}
}

func TestValidateCut(t *testing.T) {
	r := history(t)
	cases := []struct {
		cut     map[int64]int64
		wantErr string
	}{
		{map[int64]int64{0: 0, 1: 0}, ""},
		{map[int64]int64{0: 1, 2: 2, 3: 3}, ""},
		{map[int64]int64{4: 0, 3: 0}, ""},
		{map[int64]int64{0: 0, 2: 0, 3: 0}, ""},
		{map[int64]int64{}, "empty"},
		{map[int64]int64{0: 0}, "gap"},
		{map[int64]int64{0: 0, 1: 0, 2: 0}, "overlap"}, // 2 is 1's successor
		{map[int64]int64{4: 0, 1: 0}, "overlap"},       // 4 overlaps 1? no: [0,.75) vs [.5,1)
		{map[int64]int64{0: 0, 2: 0, 1: 0}, "overlap"}, // same as above, other order
		{map[int64]int64{4: 0, 2: 0, 3: 0}, "overlap"}, // 4 succeeds 2
		{map[int64]int64{0: 0, 2: 0, 3: 0, 4: 0}, "overlap"},
	}
	for _, tc := range cases {
		err := r.validateCut(tc.cut)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("validateCut(%v): %v", tc.cut, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("validateCut(%v) = %v, want ErrInvalid with %q", tc.cut, err, tc.wantErr)
		}
	}

	// A cut that covers the key space once yet is inconsistent: 0 and 4
	// never coexisted, and 2 (the merge of 0 and 1, split into 3 and 4)
	// lies after 0 but before 4.
	r2 := rec(2)                                         // 0 [0,.5), 1 [.5,1)
	scale(t, r2, 10, []int64{0, 1}, kr(0, 1))            // 2 [0,1)
	scale(t, r2, 20, []int64{2}, kr(0, 0.5), kr(0.5, 1)) // 3, 4
	if err := r2.validateCut(map[int64]int64{0: 0, 4: 0}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "inconsistent") {
		t.Errorf("validateCut(0, 4) = %v, want inconsistent", err)
	}
	if err := r2.validateCut(map[int64]int64{3: 0, 4: 0}); err != nil {
		t.Errorf("validateCut(3, 4): %v", err)
	}
}

func TestBetween(t *testing.T) {
	r := history(t)
	cases := []struct {
		from, to map[int64]int64
		want     []int64
	}{
		{map[int64]int64{0: 0, 1: 0}, nil, []int64{0, 1, 2, 3, 4}},
		{map[int64]int64{0: 0, 1: 0}, map[int64]int64{0: 0, 1: 0}, []int64{0, 1}},
		{map[int64]int64{0: 0, 1: 0}, map[int64]int64{0: 9, 2: 0, 3: 0}, []int64{0, 1, 2, 3}},
		{map[int64]int64{0: 0, 2: 0, 3: 0}, map[int64]int64{4: 0, 3: 0}, []int64{0, 2, 3, 4}},
		{map[int64]int64{4: 0, 3: 0}, nil, []int64{3, 4}},
	}
	for _, tc := range cases {
		if got := r.between(tc.from, tc.to); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("between(%v, %v) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	if err := r.cutNotAfter(map[int64]int64{4: 0, 3: 0}, map[int64]int64{0: 0, 1: 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("cutNotAfter(later, earlier) = %v, want ErrInvalid", err)
	}
	if err := r.cutNotAfter(map[int64]int64{0: 5, 1: 0}, map[int64]int64{0: 4, 1: 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("cutNotAfter(offset 5, offset 4) = %v, want ErrInvalid", err)
	}
}
