package client

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

const none = protocol.NoEventNumber

// TestResumeIndex: the dedupe rule's table. An event (key, seq) counts as
// stored iff seq <= storedAt(hash(key)): the maximum over the history's
// segments whose range holds the hash.
func TestResumeIndex(t *testing.T) {
	history := []storedRange{
		{0, 0.5, 10},      // epoch 0
		{0.5, 1, 7},       // epoch 0
		{0, 0.25, 12},     // split of [0, 0.5)
		{0.25, 0.5, none}, // nothing of the writer
		{0.25, 1, 30},     // merge of [0.25, 0.5) and [0.5, 1)
	}
	for _, tc := range []struct {
		name string
		rs   []storedRange
		h    float64
		want int64
	}{
		{"empty history", nil, 0.3, none},
		{"only absent", []storedRange{{0, 1, none}}, 0.3, none},
		{"one segment", []storedRange{{0, 1, 5}}, 0.999, 5},
		{"left of split", history, 0.1, 12},
		{"at a bound", history, 0.25, 30},
		{"just below a bound", history, 0.2499, 12},
		{"merged right", history, 0.75, 30},
		{"zero", history, 0, 12},
		{"older higher", []storedRange{{0, 1, 40}, {0, 0.5, 3}, {0.5, 1, 4}}, 0.6, 40},
		{"gap", []storedRange{{0, 0.4, 9}, {0.6, 1, 8}}, 0.5, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newResumeIndex(tc.rs).storedAt(tc.h); got != tc.want {
				t.Fatalf("storedAt(%v) = %d, want %d", tc.h, got, tc.want)
			}
		})
	}
	if got := newResumeIndex(history).max; got != 30 {
		t.Fatalf("max = %d, want 30", got)
	}
}

func TestMergeBySeq(t *testing.T) {
	ev := func(seqs ...int64) []movedEvent {
		var out []movedEvent
		for _, s := range seqs {
			out = append(out, movedEvent{seq: s})
		}
		return out
	}
	seqs := func(ms []movedEvent) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.seq)
		}
		return out
	}
	for _, tc := range []struct{ a, b, want []int64 }{
		{nil, nil, nil},
		{[]int64{1, 3}, nil, []int64{1, 3}},
		{[]int64{1, 3, 5}, []int64{2, 4, 10}, []int64{1, 2, 3, 4, 5, 10}},
		{[]int64{7}, []int64{1, 2}, []int64{1, 2, 7}},
	} {
		if got := seqs(mergeBySeq(ev(tc.a...), ev(tc.b...))); !slices.Equal(got, tc.want) {
			t.Errorf("merge %v %v = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// testWriter is a sequenced Writer with no goroutines, for the ordering
// rules: segments are added to its maps by hand.
func testWriter() *Writer {
	w := &Writer{cfg: defaultWriterConfig()}
	w.cfg.sequenced = true
	w.mu.segs = map[string]*segWriter{}
	w.mu.groups = map[*ackGroup]struct{}{}
	return w
}

func (w *Writer) addTestSegLocked(num, epoch int64, lo, hi float64) *segWriter {
	r := api.SegmentRange{Segment: fmt.Sprintf("s/x/%d.#epoch.%d", num, epoch), Number: num, Epoch: epoch, KeyLow: lo, KeyHigh: hi}
	s := &segWriter{w: w, r: r, wake: make(chan struct{}, 1)}
	w.mu.segs[r.Segment] = s
	w.mu.routes = append(w.mu.routes, s)
	w.supersedeLocked(s)
	return s
}

func queuedSeqs(s *segWriter) []int64 {
	var out []int64
	for _, b := range append(slices.Clone(s.ready), s.open) {
		if b != nil {
			out = append(out, b.seqs...)
		}
	}
	return out
}

// TestMergeOrdering: P and Q merge into T. T supersedes both (routes hold
// T alone), is held while Q holds events, and takes Q's events merged in
// sequence order with its own queued ones.
func TestMergeOrdering(t *testing.T) {
	w := testWriter()
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.addTestSegLocked(0, 0, 0, 0.5)
	q := w.addTestSegLocked(1, 0, 0.5, 1)
	kp, kq := keyIn(0, 0.5), keyIn(0.5, 1)
	for seq := int64(0); seq < 6; seq += 2 {
		p.addLocked(kp, seq, []byte("p"), nil)
		q.addLocked(kq, seq+1, []byte("q"), nil)
	}
	tt := w.addTestSegLocked(2, 1, 0, 1)
	if !p.superseded || !q.superseded || len(w.mu.routes) != 1 || w.mu.routes[0] != tt {
		t.Fatalf("after T: superseded %v %v, routes %d; want both superseded, T alone", p.superseded, q.superseded, len(w.mu.routes))
	}
	if !w.heldLocked(tt) {
		t.Fatal("T not held while P and Q hold events")
	}
	// P is found sealed first: its events move to T; later writes of
	// both ranges go to T.
	pb := p.takeAllLocked()
	delete(w.mu.segs, p.r.Segment)
	w.moveSequencedLocked([]*segWriter{tt}, pb)
	w.routeLocked(w.mu.routes, kq).addLocked(kq, 10, []byte("q"), nil)
	w.routeLocked(w.mu.routes, kp).addLocked(kp, 11, []byte("p"), nil)
	if !w.heldLocked(tt) {
		t.Fatal("T not held while Q holds events")
	}
	qb := q.takeAllLocked()
	delete(w.mu.segs, q.r.Segment)
	w.moveSequencedLocked([]*segWriter{tt}, qb)
	if w.heldLocked(tt) {
		t.Fatal("T still held with P and Q emptied")
	}
	if got, want := queuedSeqs(tt), []int64{0, 1, 2, 3, 4, 5, 10, 11}; !slices.Equal(got, want) {
		t.Fatalf("T's queue %v, want %v", got, want)
	}
	// An older segment without events does not hold T.
	w.addTestSegLocked(3, 0, 0, 0.1).superseded = false
	if w.heldLocked(tt) {
		t.Fatal("T held by an empty older segment")
	}
}

// TestPartlyCoveredSegmentKeepsRouting: X ([0, 1)) is only partly
// covered by a newer segment: it keeps its keys' routes (older wins) and
// holds the newer one while it has events; once covered wholly it leaves
// the routes.
func TestPartlyCoveredSegmentKeepsRouting(t *testing.T) {
	w := testWriter()
	w.mu.Lock()
	defer w.mu.Unlock()
	x := w.addTestSegLocked(0, 0, 0, 1)
	left, right := keyIn(0, 0.5), keyIn(0.5, 1)
	x.addLocked(left, 1, []byte("x"), nil)
	s := w.addTestSegLocked(3, 2, 0, 0.5)
	if x.superseded {
		t.Fatal("X superseded while [0.5, 1) has no newer segment")
	}
	for _, k := range []string{left, right} {
		if got := w.routeLocked(w.mu.routes, k); got != x {
			t.Fatalf("key %s routed to %s, want X (older wins)", k, got.r.Segment)
		}
	}
	if !w.heldLocked(s) {
		t.Fatal("newer segment not held while X holds events")
	}
	w.addTestSegLocked(2, 1, 0.5, 1)
	if !x.superseded {
		t.Fatal("X not superseded once covered wholly")
	}
	if got := w.routeLocked(w.mu.routes, right); got == x {
		t.Fatal("X still routed after it was covered")
	}
	// A segment started again after the newer ones (events moved into it
	// from an older one) is superseded at once.
	old := w.addTestSegLocked(4, 0, 0.5, 1)
	if !old.superseded || slices.Contains(w.mu.routes, old) {
		t.Fatal("an older segment started after its successors takes routes")
	}
}

func keyIn(lo, hi float64) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("k%d", i)
		if h := protocol.KeyHash(k); lo <= h && h < hi {
			return k
		}
	}
}
