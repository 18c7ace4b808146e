package controller

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// TestReview3CompactedHistoryKeepsASegmentsSuccessors: compact keeps a
// segment that a kept epoch still lists (here segment 0, active in epochs
// 0..2, deleted by the truncation) but drops the earlier epochs it was
// active in (0 and 1, wholly before the head). lastEpoch walks the epochs
// from the segment's creation epoch and stops at the first placeholder,
// so segment 0 reads as sealed in epoch 1 with no successors: Successors
// answers "none" (an active segment, or one sealed with its stream)
// instead of segments 5 and 6, though the promise is that a reader a
// week behind the head still finds its segments' successors.
func TestReview3CompactedHistoryKeepsASegmentsSuccessors(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	s := e.service(nil)
	must(t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 2)) // 0 [0,.5) 1 [.5,1)
	must(t, err)
	scale := func(sealed []int64, ranges ...api.KeyRange) {
		t.Helper()
		_, err := s.Scale(ctx, "sc", "st", api.ScaleRequest{SealedSegments: sealed, NewRanges: ranges})
		must(t, err)
	}
	scale([]int64{1}, api.KeyRange{Low: 0.5, High: 0.75}, api.KeyRange{Low: 0.75, High: 1}) // epoch 1: 0 2 3
	scale([]int64{2, 3}, api.KeyRange{Low: 0.5, High: 1})                                   // epoch 2: 0 4
	e.clock.advance(8 * 24 * time.Hour)
	scale([]int64{0}, api.KeyRange{Low: 0, High: 0.25}, api.KeyRange{Low: 0.25, High: 0.5}) // epoch 3: 5 6 4
	before, err := s.Successors(ctx, "sc/st/0.#epoch.0")
	must(t, err)
	if len(before) != 2 {
		t.Fatalf("before the truncation: successors of 0 = %+v, want 5 and 6", before)
	}
	must(t, s.TruncateStream(ctx, "sc", "st", api.StreamCut{"sc/st/5.#epoch.3": 0, "sc/st/6.#epoch.3": 0, "sc/st/4.#epoch.2": 0}))
	r := record(t, e.store, "sc", "st")
	t.Logf("after compact: FirstEpoch %d FirstSegment %d", r.FirstEpoch, r.FirstSegment)
	after, err := s.Successors(ctx, "sc/st/0.#epoch.0")
	if err != nil {
		t.Fatalf("successors of 0 after compact: %v", err)
	}
	if len(after) != 2 {
		t.Fatalf("after compact: successors of 0 (kept in the record) = %+v, want 5 and 6 as before", after)
	}
	// Segment 1 was active only in dropped epochs: its history is gone,
	// which Successors says rather than "none".
	if succ, err := s.Successors(ctx, "sc/st/1.#epoch.0"); err == nil {
		t.Fatalf("successors of 1, whose epochs were all dropped: %+v, want an error saying its history was dropped", succ)
	}
	// The history left still orders the segments: from the head, a
	// reader crosses only 4, 5 and 6.
	between, err := s.SegmentsBetween(ctx, "sc", "st", nil, nil)
	must(t, err)
	var nums []int64
	for _, sg := range between {
		nums = append(nums, sg.Number)
	}
	if len(nums) != 3 || nums[0] != 4 || nums[1] != 5 || nums[2] != 6 {
		t.Fatalf("segments between the head and the end after compact: %v, want [4 5 6]", nums)
	}
}
