package autoscale

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	t0      = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	windows = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	cfg     = Config{Cooldown: 10 * time.Second}
	policy  = Policy{TargetRate: 100, Unit: "events/s", ScaleFactor: 2, MinSegments: 1, MaxSegments: 8}
)

// seg is a known segment measured for a minute at the given rates (the
// same in every window when one is given).
func seg(n int64, low, high float64, rates ...float64) Segment {
	if len(rates) == 1 {
		rates = []float64{rates[0], rates[0], rates[0], rates[0]}
	}
	return Segment{Number: n, Low: low, High: high, Known: true, Age: time.Minute, Rates: rates}
}

func stream(p Policy, segs ...Segment) Stream {
	return Stream{Policy: p, Segments: segs, Windows: windows, LastScale: t0.Add(-time.Hour)}
}

func TestDecide(t *testing.T) {
	young := seg(2, 0.5, 1, 1)
	young.Age = 7 * time.Second
	unknown := Segment{Number: 2, Low: 0.5, High: 1}
	p3 := policy
	p3.ScaleFactor = 3
	max3 := policy
	max3.MaxSegments = 3
	max2 := policy
	max2.MaxSegments = 2
	min2 := policy
	min2.MinSegments = 2

	for _, tc := range []struct {
		name      string
		s         Stream
		now       time.Time
		action    Action
		seal      []int64
		ranges    []Range
		reason    string // a part of the reason
		blocked   string // a part of Blocked
		notReason string
	}{
		{name: "nothing measured", s: stream(policy, Segment{Number: 0, Low: 0, High: 1}), action: None},
		{name: "below the target, not cold: nothing", s: stream(policy, seg(0, 0, 1, 80)), action: None},
		{name: "hot splits into scaleFactor equal ranges", s: stream(policy, seg(0, 0, 0.5, 10), seg(1, 0.5, 1, 1000, 200, 100, 50)),
			action: Split, seal: []int64{1}, ranges: []Range{{0.5, 0.75}, {0.75, 1}}, reason: "segment 1 hot: 1000 events/s over 1s, target 100; split into 2"},
		{name: "scaleFactor 3", s: stream(p3, seg(0, 0, 1, 500)),
			action: Split, seal: []int64{0}, ranges: []Range{{0, 1.0 / 3}, {1.0 / 3, 2.0 / 3}, {2.0 / 3, 1}}},
		{name: "only the shortest window decides hot", s: stream(policy, seg(0, 0, 1, 99, 1000, 1000, 1000)), action: None},
		{name: "the hottest of two splits", s: stream(policy, seg(0, 0, 0.5, 300), seg(1, 0.5, 1, 900)),
			action: Split, seal: []int64{1}, ranges: []Range{{0.5, 0.75}, {0.75, 1}}},
		{name: "a tie splits the lowest key", s: stream(policy, seg(0, 0, 0.5, 300), seg(1, 0.5, 1, 300)),
			action: Split, seal: []int64{0}},
		{name: "a split is cut down to the maximum", s: stream(func() Policy { p := p3; p.MaxSegments = 3; return p }(), seg(0, 0, 0.5, 10), seg(1, 0.5, 1, 500)),
			action: Split, seal: []int64{1}, ranges: []Range{{0.5, 0.75}, {0.75, 1}}},
		{name: "at the maximum: no split, says why", s: stream(max2, seg(0, 0, 0.5, 10), seg(1, 0.5, 1, 500)),
			action: None, reason: "not split: the stream has 2 segments, the maximum is 2"},
		{name: "a hot segment wins over cold neighbours", s: stream(policy, seg(0, 0, 0.25, 1), seg(1, 0.25, 0.5, 1), seg(2, 0.5, 1, 500)),
			action: Split, seal: []int64{2}},
		{name: "at the maximum, cold neighbours merge to make room", s: stream(max3, seg(0, 0, 0.25, 1), seg(1, 0.25, 0.5, 1), seg(2, 0.5, 1, 500)),
			action: Merge, seal: []int64{0, 1}},
		{name: "cold neighbours merge", s: stream(policy, seg(0, 0, 0.5, 10), seg(1, 0.5, 1, 20)),
			action: Merge, seal: []int64{0, 1}, ranges: []Range{{0, 1}}, reason: "segments 0 and 1 cold"},
		{name: "cold but not neighbours: no merge", s: stream(policy, seg(0, 0, 0.25, 10), seg(1, 0.25, 0.75, 80), seg(2, 0.75, 1, 10)),
			action: None},
		{name: "the coldest pair merges", s: stream(policy, seg(0, 0, 0.25, 40), seg(1, 0.25, 0.5, 30), seg(2, 0.5, 0.75, 5), seg(3, 0.75, 1, 1)),
			action: Merge, seal: []int64{2, 3}, ranges: []Range{{0.5, 1}}},
		{name: "cold needs every window below half the target", s: stream(policy, seg(0, 0, 0.5, 10, 10, 10, 60), seg(1, 0.5, 1, 1)),
			action: None},
		{name: "cold needs the longest window measured", s: stream(policy, seg(0, 0, 0.5, 1), young), action: None},
		{name: "an unreported segment is neither hot nor cold", s: stream(policy, seg(0, 0, 0.5, 1), unknown), action: None},
		{name: "never below the minimum", s: stream(min2, seg(0, 0, 0.5, 1), seg(1, 0.5, 1, 1)), action: None},
		{name: "above the minimum: merges", s: stream(min2, seg(0, 0, 0.25, 1), seg(1, 0.25, 0.5, 1), seg(2, 0.5, 1, 1)),
			action: Merge, seal: []int64{0, 1}},
		{name: "a hot segment at the minimum width (1/maxSegments) is not split", s: stream(policy, seg(0, 0, 0.125, 1000), seg(1, 0.125, 1, 80)),
			action: None, reason: "not split: its key range [0, 0.125) is at the minimum width 0.125"},
		{name: "a hot segment just wider than the minimum width splits", s: stream(policy, seg(0, 0, 0.25, 1000), seg(1, 0.25, 1, 80)),
			action: Split, seal: []int64{0}, ranges: []Range{{0, 0.125}, {0.125, 0.25}}},
		{name: "a hotter segment at the minimum width gives way to a wider hot one", s: stream(policy, seg(0, 0, 0.125, 1000), seg(1, 0.125, 1, 200)),
			action: Split, seal: []int64{1}},
		{name: "a hot segment at the minimum width, neighbours not cold: nothing", s: stream(policy, seg(0, 0, 0.5, 80), seg(1, 0.5, 0.625, 500), seg(2, 0.625, 1, 80)),
			action: None, reason: "minimum width"},
		{name: "below the minimum: the widest segment splits", s: stream(min2, seg(0, 0, 1, 1)),
			action: Split, seal: []int64{0}, ranges: []Range{{0, 0.5}, {0.5, 1}}, reason: "below the policy's minimum of 2"},
		{name: "below the minimum: the widest of several, the lowest key of equals", s: stream(func() Policy { p := policy; p.MinSegments = 4; return p }(),
			seg(0, 0, 0.25, 1000), seg(1, 0.25, 0.625, 1), seg(2, 0.625, 1, 1)),
			action: Split, seal: []int64{1}, ranges: []Range{{0.25, 0.4375}, {0.4375, 0.625}}},
		{name: "below the minimum: scaleFactor parts, no more than the minimum needs", s: stream(func() Policy { p := p3; p.MinSegments = 2; return p }(), seg(0, 0, 1, 1)),
			action: Split, seal: []int64{0}, ranges: []Range{{0, 0.5}, {0.5, 1}}},
		{name: "below the minimum, within the cooldown: nothing", s: func() Stream {
			s := stream(min2, seg(0, 0, 1, 1))
			s.LastScale = t0.Add(-time.Second)
			return s
		}(), action: None, reason: "cooldown"},
		{name: "cooldown", s: func() Stream {
			s := stream(policy, seg(0, 0, 1, 1000))
			s.LastScale = t0.Add(-5 * time.Second)
			return s
		}(),
			action: None, reason: "cooldown: last scale 5s ago, cooldown 10s"},
		{name: "cooldown over", s: func() Stream {
			s := stream(policy, seg(0, 0, 1, 1000))
			s.LastScale = t0.Add(-10 * time.Second)
			return s
		}(),
			action: Split, seal: []int64{0}},
		{name: "a workflow running", s: func() Stream {
			s := stream(policy, seg(0, 0, 1, 1000))
			s.Busy = "a scale workflow is unfinished"
			return s
		}(),
			action: None, reason: "a scale workflow is unfinished"},
		{name: "transactions open: decided but blocked", s: func() Stream { s := stream(policy, seg(0, 0, 1, 1000)); s.OpenTxns = 2; return s }(),
			action: Split, seal: []int64{0}, blocked: "2 unfinished transactions"},
		{name: "transactions open, nothing to do: not blocked", s: func() Stream { s := stream(policy, seg(0, 0, 1, 50)); s.OpenTxns = 2; return s }(),
			action: None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			d := Decide(cfg, tc.s, now)
			if d.Action != tc.action {
				t.Fatalf("action %v (%q), want %v", d.Action, d.Reason, tc.action)
			}
			if tc.seal != nil && !reflect.DeepEqual(d.Seal, tc.seal) {
				t.Errorf("seal %v, want %v", d.Seal, tc.seal)
			}
			if tc.ranges != nil && !reflect.DeepEqual(d.NewRanges, tc.ranges) {
				t.Errorf("ranges %v, want %v", d.NewRanges, tc.ranges)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", d.Reason, tc.reason)
			}
			if tc.blocked == "" && d.Blocked != "" || !strings.Contains(d.Blocked, tc.blocked) {
				t.Errorf("blocked %q, want %q", d.Blocked, tc.blocked)
			}
			if d.Action != None {
				checkCover(t, tc.s, d)
			}
		})
	}
}

// checkCover: the new ranges cover exactly the sealed segments' union,
// each non-empty, in order.
func checkCover(t *testing.T, s Stream, d Decision) {
	t.Helper()
	var low, high float64
	for i, n := range d.Seal {
		for _, sg := range s.Segments {
			if sg.Number == n {
				if i == 0 {
					low = sg.Low
				}
				high = sg.High
			}
		}
	}
	at := low
	for _, r := range d.NewRanges {
		if r.Low != at || !(r.Low < r.High) {
			t.Fatalf("ranges %v do not cover [%v, %v)", d.NewRanges, low, high)
		}
		at = r.High
	}
	if at != high {
		t.Fatalf("ranges %v end at %v, want %v", d.NewRanges, at, high)
	}
}

// A stream that is split and then goes quiet comes back to its minimum,
// one pair at a time, never below it; splits under load stop at the
// maximum: decisions applied in a loop.
func TestDecideConverges(t *testing.T) {
	apply := func(s Stream, d Decision) Stream {
		var out []Segment
		next := int64(100)
		for _, sg := range s.Segments {
			if sg.Number == d.Seal[0] {
				for _, r := range d.NewRanges {
					out = append(out, seg(next, r.Low, r.High, sg.Rates[0]/float64(len(d.NewRanges))*float64(len(d.Seal))))
					next++
				}
			}
			found := false
			for _, n := range d.Seal {
				found = found || n == sg.Number
			}
			if !found {
				out = append(out, sg)
			}
		}
		for i := range out {
			out[i].Number = int64(i) + next
		}
		s.Segments = out
		return s
	}
	s := stream(policy, seg(0, 0, 1, 10000))
	for i := 0; i < 20; i++ {
		d := Decide(cfg, s, t0)
		if d.Action == None {
			break
		}
		if d.Action != Split {
			t.Fatalf("step %d: %v under load", i, d.Action)
		}
		s = apply(s, d)
	}
	if len(s.Segments) != policy.MaxSegments {
		t.Fatalf("under load: %d segments, want the maximum %d", len(s.Segments), policy.MaxSegments)
	}
	for i := range s.Segments {
		s.Segments[i].Rates = []float64{0, 0, 0, 0}
	}
	for i := 0; i < 20; i++ {
		d := Decide(cfg, s, t0)
		if d.Action == None {
			break
		}
		if d.Action != Merge {
			t.Fatalf("quiet: %v", d.Action)
		}
		s = apply(s, d)
	}
	if len(s.Segments) != policy.MinSegments {
		t.Fatalf("quiet: %d segments, want the minimum %d", len(s.Segments), policy.MinSegments)
	}
}

// One routing key far above the target: its segment is halved down to the
// minimum width (1/maxSegments) and then left alone; cold neighbours do
// not merge to make room for splits that would spread nothing. Decisions
// applied in a loop, a few scales in all, never an endless cycle.
func TestDecideOneHotKeyStops(t *testing.T) {
	const key = 0.3
	p := policy // MaxSegments 8
	rate := func(low, high float64) float64 {
		if low <= key && key < high {
			return 10000
		}
		return 1
	}
	s := stream(p, seg(0, 0, 1, rate(0, 1)))
	next := int64(1)
	scales := 0
	for ; scales < 100; scales++ {
		d := Decide(cfg, s, t0)
		if d.Action == None {
			break
		}
		checkCover(t, s, d)
		var out []Segment
		for _, sg := range s.Segments {
			if sg.Number == d.Seal[0] {
				for _, r := range d.NewRanges {
					out = append(out, seg(next, r.Low, r.High, rate(r.Low, r.High)))
					next++
				}
			}
			if !slicesContains(d.Seal, sg.Number) {
				out = append(out, sg)
			}
		}
		s.Segments = out
	}
	if scales > 8 {
		t.Fatalf("one hot routing key: %d scales, want a few (3 splits to the minimum width, then cold pairs merging)", scales)
	}
	for _, sg := range s.Segments {
		if sg.Low <= key && key < sg.High && sg.High-sg.Low != 0.125 {
			t.Errorf("the hot key's segment [%v, %v), want the minimum width 0.125", sg.Low, sg.High)
		}
	}
}

func slicesContains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
