package client

import (
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

func TestTimeWindow(t *testing.T) {
	// Epoch 0: s0 [0,.5), s1 [.5,1); epoch 1 splits s0 into s2, s3.
	s0, s1, s2, s3 := seg(0, 0), seg(1, 0), seg(2, 1), seg(3, 1)
	ranges := map[string]api.KeyRange{
		s0: {Low: 0, High: 0.5}, s1: {Low: 0.5, High: 1},
		s2: {Low: 0, High: 0.25}, s3: {Low: 0.25, High: 0.5},
	}
	marks := []api.Watermark{
		{Seq: 1, LowerTime: 100, UpperTime: 150, Cut: api.StreamCut{s0: 10, s1: 10}},
		{Seq: 2, LowerTime: 200, UpperTime: 250, Cut: api.StreamCut{s2: 5, s3: 0, s1: 30}},
	}
	const unknown = -1
	tests := []struct {
		name         string
		pos          api.StreamCut
		lower, upper int64
	}{
		{"at the head: only an upper bound", api.StreamCut{s0: 0, s1: 0}, unknown, 150},
		{"at the first cut: both its bounds", api.StreamCut{s0: 10, s1: 10}, 100, 150},
		{"between the cuts", api.StreamCut{s0: 10, s1: 20}, 100, 250},
		{"past a split: the old segment is before the new ones", api.StreamCut{s2: 0, s3: 0, s1: 30}, 100, 250},
		{"at the second cut", api.StreamCut{s2: 5, s3: 0, s1: 30}, 200, 250},
		{"past every cut: only a lower bound", api.StreamCut{s2: 6, s3: 0, s1: 30}, 200, unknown},
		{"ahead on one segment, behind on another: that cut gives nothing", api.StreamCut{s0: 20, s1: 5}, unknown, 250},
		{"a group reader holding one segment", api.StreamCut{s1: 30}, 200, 250},
		{"a group reader past the split on its key range", api.StreamCut{s3: 1}, 200, unknown},
		{"a segment without a known key range", api.StreamCut{s0: 10, seg(9, 3): 0}, unknown, unknown},
		{"no position", api.StreamCut{}, unknown, unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tw := timeWindow(tt.pos, ranges, marks)
			check := func(what string, got time.Time, want int64) {
				if want == unknown {
					if !got.IsZero() {
						t.Errorf("%s = %v, want unknown", what, got.UnixMilli())
					}
					return
				}
				if !got.Equal(time.UnixMilli(want)) {
					t.Errorf("%s = %v (zero: %v), want %d", what, got.UnixMilli(), got.IsZero(), want)
				}
			}
			check("lower", tw.Lower, tt.lower)
			check("upper", tw.Upper, tt.upper)
			if tw.LowerKnown() != (tt.lower != unknown) || tw.UpperKnown() != (tt.upper != unknown) {
				t.Errorf("known = %v/%v, want %v/%v", tw.LowerKnown(), tw.UpperKnown(), tt.lower != unknown, tt.upper != unknown)
			}
		})
	}
}
