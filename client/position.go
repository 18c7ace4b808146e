package client

import (
	"maps"
	"slices"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// segmentTracker is the deterministic core of a reader's position: the
// segments it reads and the offset after the last event it returned from
// each, the segments it has read to their end whose successors have not
// started yet, and the successor graph it has learnt. It does no I/O; the
// Reader feeds it what the node and the controller said.
//
// The rule it enforces: a successor starts only once every
// one of its predecessors has been read to its end. It is slightly
// stricter: the successors of one scale start together, when every
// predecessor of the connected group (predecessors linked through shared
// successors) has ended. For a split (one predecessor) or a merge (one
// successor) that is the same rule; for a scale that seals P and Q and
// creates T (after P only) and S (after P and Q), T waits for Q too. The
// price is a little parallelism in that rare case; the gain is that
// cut() is always a consistent stream cut (the segments cover the key
// space exactly once), which the controller accepts for truncation and
// segments-between: starting T alone would leave P in the cut beside T,
// overlapping it.
//
// Not safe for concurrent use; the Reader holds its lock around it.
type segmentTracker struct {
	reading map[string]int64           // segment -> offset after the last event returned
	ended   map[string]int64           // read to its end -> end offset; kept until its successors start
	succs   map[string][]api.Successor // ended segment -> its successors, once known
	order   []string                   // reading's keys in segment order; nil when stale
}

func newSegmentTracker(cut api.StreamCut) *segmentTracker {
	t := &segmentTracker{
		reading: make(map[string]int64, len(cut)),
		ended:   map[string]int64{},
		succs:   map[string][]api.Successor{},
	}
	for s, off := range cut {
		t.reading[s] = off
	}
	return t
}

// advance records that the events of seg before next have been returned.
func (t *segmentTracker) advance(seg string, next int64) {
	if _, ok := t.reading[seg]; ok {
		t.reading[seg] = next
	}
}

// end records that seg has been read to its end, at offset end, and that
// its successors are succ (empty for a segment sealed with its stream).
// It returns the successors that start now, at offset 0, in segment
// order; they are then being read.
func (t *segmentTracker) end(seg string, end int64, succ []api.Successor) []string {
	if _, ok := t.reading[seg]; !ok {
		return nil
	}
	delete(t.reading, seg)
	t.order = nil
	t.ended[seg] = end
	t.succs[seg] = succ
	return t.startReady(seg)
}

// startReady starts the successors of the group that seg belongs to if
// every predecessor in it has ended and told its successors.
func (t *segmentTracker) startReady(seg string) []string {
	preds := map[string]bool{seg: true}
	next := map[string]bool{}
	queue := []string{seg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		ss, known := t.succs[p]
		if !known {
			return nil // p is still being read
		}
		for _, s := range ss {
			if next[s.Segment.Segment] {
				continue
			}
			next[s.Segment.Segment] = true
			for _, q := range s.Predecessors {
				if !preds[q] {
					preds[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	if len(next) == 0 {
		return nil // sealed with its stream: it stays in the cut at its end
	}
	for p := range preds {
		delete(t.ended, p)
		delete(t.succs, p)
	}
	started := make([]string, 0, len(next))
	for s := range next {
		if _, ok := t.reading[s]; !ok {
			t.reading[s] = 0
			t.order = nil
			started = append(started, s)
		}
	}
	sortSegments(started)
	return started
}

// replace stops reading the segments old (reading or ended) and reads
// the segments of add from their offsets instead: how a reader skips what
// truncation deleted.
func (t *segmentTracker) replace(old []string, add map[string]int64) {
	t.order = nil
	for _, s := range old {
		delete(t.reading, s)
		delete(t.ended, s)
		delete(t.succs, s)
	}
	for s, off := range add {
		t.reading[s] = off
	}
}

// done reports whether nothing is left to read: no segment is being read
// (every one ended with its stream sealed).
func (t *segmentTracker) done() bool { return len(t.reading) == 0 }

// cut returns the position: every segment being read at the offset after
// the last event returned (0 for one not started), and every ended
// segment whose successors have not started yet at its end.
func (t *segmentTracker) cut() api.StreamCut {
	c := make(api.StreamCut, len(t.reading)+len(t.ended))
	maps.Copy(c, t.reading)
	maps.Copy(c, t.ended)
	return c
}

// segments returns the segments being read, in segment order. The
// slice is shared and must not be modified; it is sorted again only
// after the set changes, not on every event.
func (t *segmentTracker) segments() []string {
	if t.order == nil {
		t.order = slices.Collect(maps.Keys(t.reading))
		sortSegments(t.order)
	}
	return t.order
}

// sortSegments sorts qualified segment names by segment number (then
// epoch), names that do not parse last, by text.
func sortSegments(names []string) {
	slices.SortFunc(names, func(a, b string) int {
		qa, ea := protocol.ParseSegmentName(a)
		qb, eb := protocol.ParseSegmentName(b)
		switch {
		case ea != nil || eb != nil:
			if (ea == nil) != (eb == nil) {
				if ea == nil {
					return -1
				}
				return 1
			}
		case qa.Number != qb.Number:
			if qa.Number < qb.Number {
				return -1
			}
			return 1
		case qa.Epoch != qb.Epoch:
			if qa.Epoch < qb.Epoch {
				return -1
			}
			return 1
		}
		if a < b {
			return -1
		} else if a > b {
			return 1
		}
		return 0
	})
}

// Position is a reader's position just after one event, as Event carries
// it. It is cheap to keep (a few words; the cut is built when asked for).
// The zero Position is the empty cut.
type Position struct{ p *posNode }

// Cut returns the position as a stream cut: FromCut(pos.Cut()) continues
// with the event after it.
func (p Position) Cut() api.StreamCut {
	if p.p == nil {
		return api.StreamCut{}
	}
	return p.p.cut()
}

// String returns the cut's text form (api.StreamCut.String).
func (p Position) String() string { return p.Cut().String() }

// posNode is one step of a chain of positions: a full cut, or the
// previous position with one segment's offset moved. Each event adds one
// small node instead of copying the whole cut; every posChainMax steps the
// chain restarts from a full copy, so Cut walks a bounded chain and a kept
// Position holds a bounded amount of memory.
type posNode struct {
	full   api.StreamCut // set on a full node (never changed)
	parent *posNode
	seg    string
	next   int64
	depth  int
}

const posChainMax = 64

// advance returns the position after p with seg's next event at next.
func (p *posNode) advance(seg string, next int64) *posNode {
	if p.depth+1 >= posChainMax {
		c := p.cut()
		c[seg] = next
		return &posNode{full: c}
	}
	return &posNode{parent: p, seg: seg, next: next, depth: p.depth + 1}
}

// cut builds the position's cut (a fresh map).
func (p *posNode) cut() api.StreamCut {
	var steps []*posNode
	n := p
	for ; n.full == nil; n = n.parent {
		steps = append(steps, n)
	}
	c := make(api.StreamCut, len(n.full))
	maps.Copy(c, n.full)
	for i := len(steps) - 1; i >= 0; i-- {
		c[steps[i].seg] = steps[i].next
	}
	return c
}
