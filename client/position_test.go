package client

import (
	"maps"
	"slices"
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

func seg(n, e int64) string { return "s/t/" + itoa(n) + ".#epoch." + itoa(e) }

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func succ(s string, preds ...string) api.Successor {
	return api.Successor{Segment: api.SegmentRange{Segment: s}, Predecessors: preds}
}

func TestSegmentTrackerSplitThenMerge(t *testing.T) {
	a := seg(0, 0)
	b1, b2 := seg(1, 1), seg(2, 1)
	c := seg(3, 2)
	tr := newSegmentTracker(api.StreamCut{a: 0})
	tr.advance(a, 40)
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{a: 40}) {
		t.Fatalf("cut = %v", got)
	}
	// Split: both successors start at once, the predecessor leaves the cut.
	started := tr.end(a, 50, []api.Successor{succ(b1, a), succ(b2, a)})
	if !slices.Equal(started, []string{b1, b2}) {
		t.Fatalf("started = %v", started)
	}
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{b1: 0, b2: 0}) {
		t.Fatalf("cut = %v", got)
	}
	// Merge: c waits for both; b1 stays in the cut at its end meanwhile.
	tr.advance(b1, 7)
	if started := tr.end(b1, 9, []api.Successor{succ(c, b1, b2)}); len(started) != 0 {
		t.Fatalf("started %v before b2 ended", started)
	}
	tr.advance(b2, 3)
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{b1: 9, b2: 3}) {
		t.Fatalf("cut = %v", got)
	}
	if started := tr.end(b2, 3, []api.Successor{succ(c, b1, b2)}); !slices.Equal(started, []string{c}) {
		t.Fatalf("started = %v", started)
	}
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{c: 0}) {
		t.Fatalf("cut = %v", got)
	}
	// Sealed with the stream: no successors, the segment stays at its end.
	if started := tr.end(c, 12, []api.Successor{}); len(started) != 0 || !tr.done() {
		t.Fatalf("started %v, done %v", started, tr.done())
	}
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{c: 12}) {
		t.Fatalf("cut = %v", got)
	}
}

// A scale that seals P and Q and creates T (after P), S (after P and Q)
// and U (after Q): nothing starts until both ended, so the cut never
// holds T beside P.
func TestSegmentTrackerMixedScaleStartsTogether(t *testing.T) {
	p, q := seg(0, 0), seg(1, 0)
	tt, s, u := seg(2, 1), seg(3, 1), seg(4, 1)
	tr := newSegmentTracker(api.StreamCut{p: 0, q: 0})
	if started := tr.end(p, 5, []api.Successor{succ(tt, p), succ(s, p, q)}); len(started) != 0 {
		t.Fatalf("started %v before q ended", started)
	}
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{p: 5, q: 0}) {
		t.Fatalf("cut = %v", got)
	}
	started := tr.end(q, 6, []api.Successor{succ(s, p, q), succ(u, q)})
	if !slices.Equal(started, []string{tt, s, u}) {
		t.Fatalf("started = %v", started)
	}
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{tt: 0, s: 0, u: 0}) {
		t.Fatalf("cut = %v", got)
	}
}

func TestSegmentTrackerEndUnknownIgnored(t *testing.T) {
	tr := newSegmentTracker(api.StreamCut{seg(0, 0): 0})
	if started := tr.end(seg(9, 0), 1, []api.Successor{succ(seg(10, 1), seg(9, 0))}); started != nil {
		t.Fatalf("started = %v", started)
	}
	tr.replace([]string{seg(0, 0)}, map[string]int64{seg(5, 2): 30})
	if got := tr.cut(); !maps.Equal(got, api.StreamCut{seg(5, 2): 30}) {
		t.Fatalf("cut = %v", got)
	}
}

func TestSortSegments(t *testing.T) {
	in := []string{seg(10, 2), "zzz", seg(2, 0), seg(2, 1), "aaa"}
	sortSegments(in)
	want := []string{seg(2, 0), seg(2, 1), seg(10, 2), "aaa", "zzz"}
	if !slices.Equal(in, want) {
		t.Fatalf("got %v", in)
	}
}
