package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Errors of sequenced writers (WithSequenced).
var (
	// ErrSequence is returned by WriteSeq for a sequence number that is
	// not greater than the previous one of the Writer, or outside
	// [0, protocol.MaxEventNumber]. Nothing is written; the Writer stays
	// usable.
	ErrSequence = errors.New("client: sequence numbers must increase")
	// ErrSequenced is returned by Write on a sequenced Writer and by
	// WriteSeq on one that is not.
	ErrSequenced = errors.New("client: Write and WriteSeq do not mix")
	// ErrNoHistory is returned by NewWriter with WithSequenced when the
	// Client's Controller cannot list a stream's history (Epochs).
	ErrNoHistory = errors.New("client: the controller does not list stream history")
)

// WithSequenced makes the Writer sequenced: the application numbers its
// events (WriteSeq) and the numbers are what the nodes store per (writer,
// segment), so that a Writer made again with the same WithWriterID, in
// this process or another after a crash, knows which of the events it is
// given again are stored already and skips them (Ack.Duplicate). It
// requires WithWriterID. See "Writers across restarts" in the package
// documentation for the rules.
func WithSequenced() WriterOption { return func(c *writerConfig) { c.sequenced = true } }

// Duplicate reports whether the event was not sent because an earlier
// life of the sequenced writer had stored it already (WriteSeq). Such an
// Ack is settled at once with a nil error.
func (a *Ack) Duplicate() bool { return a.dup }

// WriteSeq writes event with the application's sequence number seq, which
// must be greater than that of the Writer's previous WriteSeq (ErrSequence
// otherwise, and nothing is written) and in [0, protocol.MaxEventNumber].
// An event that an earlier life of the writer id stored already, as the
// Writer learned in NewWriter, is not sent: its Ack is settled at once and
// Duplicate says so. Otherwise it behaves like Write, and the node stores
// seq as the writer's event number. An empty key routes the event as if
// its key were seq in decimal (round-robin could not be resumed exactly).
// Sequence numbers must identify events: the application gives the same
// key and bytes each time it writes seq again.
func (w *Writer) WriteSeq(ctx context.Context, key string, seq int64, event []byte) (*Ack, error) {
	if !w.cfg.sequenced {
		return nil, fmt.Errorf("client: write to %s/%s: WriteSeq on a writer without WithSequenced: %w", w.scope, w.stream, ErrSequenced)
	}
	if err := protocol.CheckEvent(event); err != nil {
		return nil, fmt.Errorf("client: write to %s/%s: %w", w.scope, w.stream, err)
	}
	if seq < 0 || seq > protocol.MaxEventNumber {
		return nil, fmt.Errorf("client: write to %s/%s: sequence number %d out of [0, %d]: %w", w.scope, w.stream, seq, protocol.MaxEventNumber, ErrSequence)
	}
	if key == "" {
		key = strconv.FormatInt(seq, 10)
	}
	size := int64(protocol.EventHeaderSize + len(event))
	w.mu.Lock()
	for {
		if w.mu.closed {
			w.mu.Unlock()
			return nil, ErrClosed
		}
		if w.mu.seq.wrote && seq <= w.mu.seq.last {
			last := w.mu.seq.last
			w.mu.Unlock()
			return nil, fmt.Errorf("client: write to %s/%s: sequence number %d after %d: %w", w.scope, w.stream, seq, last, ErrSequence)
		}
		if seq <= w.resume.index.storedAt(protocol.KeyHash(key)) {
			w.mu.seq.last, w.mu.seq.wrote = seq, true
			// The event is stored, but not at a position this writer
			// learned: the next NoteTime reports the routed segment's
			// length, which lies after it.
			w.routeLocked(w.mu.routes, key).noteAcked(0, true)
			w.mu.Unlock()
			return &Ack{g: settledGroup, settled: true, dup: true}, nil
		}
		if fits, err := w.waitSpaceLocked(ctx, size); err != nil {
			return nil, err
		} else if fits {
			break
		}
	}
	w.mu.seq.last, w.mu.seq.wrote = seq, true
	a := w.routeLocked(w.mu.routes, key).addLocked(key, seq, event, nil)
	w.mu.Unlock()
	return a, nil
}

// Stored returns the highest sequence number that earlier lives of a
// sequenced writer stored in any segment of the stream, as learned in
// NewWriter (protocol.NoEventNumber if none, or if the writer is not
// sequenced). Events with lower numbers may still be missing on other
// keys: resend from the application's own last confirmed point and let
// WriteSeq skip what is stored.
func (w *Writer) Stored() int64 {
	if w.resume == nil {
		return protocol.NoEventNumber
	}
	return w.resume.index.max
}

// GoneSegments returns the segments of the stream's history that no longer
// existed when a sequenced writer resumed (deleted by a truncation): what
// earlier lives stored there is unknown, so events resent that only they
// held are written again (see "Writers across restarts").
func (w *Writer) GoneSegments() []string {
	if w.resume == nil {
		return nil
	}
	return slices.Clone(w.resume.gone)
}

// seqState is a sequenced writer's last sequence number, guarded by w.mu.
type seqState struct {
	last  int64
	wrote bool
}

// retriableController reports whether a controller call may succeed if
// tried again.
func retriableController(err error) bool {
	return errors.Is(err, ctlclient.ErrUnreachable) || errors.Is(err, ctlclient.ErrUnavailable)
}

// The ordering rules of sequenced writers. The node drops a block numbered
// at or below what it stores for the writer, so a segment must receive a
// writer's sequence numbers in increasing order, or a lower one sent after
// a higher one is lost. New writes rise; moves from sealed segments are
// what could break it (a merge: events of two predecessors reach one
// successor, found sealed at different times). So, in sequenced mode:
//
//   - an older segment X of the writer whose whole range is covered by
//     newer segments of the writer is superseded (supersedeLocked): it
//     leaves the routes at once, so every later write of its keys goes to
//     a newer segment, and it takes no new events but what moves into it
//     from older ones still (a partly covered X stays in the routes: the
//     older segment wins, and forwards once found sealed);
//   - S sends nothing while an older overlapping segment of the writer
//     holds events, queued or in flight (heldLocked): their outcome (stored
//     there, or moved on) is not known yet;
//   - events moved into S are merged with S's queued ones in sequence order
//     (moveSequencedLocked);
//   - a superseded segment with nothing left retires (its goroutine ends)
//     and wakes the others.

// supersedeLocked is called when s joins the writer's segments: it takes
// out of the routes s itself if newer segments cover it wholly already (s
// was started again for events moved from an older one), and the older
// segments overlapping s that newer ones now cover wholly, and wakes those,
// so that they retire once empty.
func (w *Writer) supersedeLocked(s *segWriter) {
	if w.coveredLocked(s) {
		s.superseded = true
		w.removeRouteLocked(s)
	}
	for _, x := range w.mu.segs {
		if x != s && x.r.Epoch < s.r.Epoch && overlaps(x, s) && !x.superseded && w.coveredLocked(x) {
			x.superseded = true
			w.removeRouteLocked(x)
			x.poke()
		}
	}
}

// coveredLocked reports whether the writer's segments newer than x cover
// x's whole range.
func (w *Writer) coveredLocked(x *segWriter) bool {
	var rs []api.SegmentRange
	for _, y := range w.mu.segs {
		if y != x && y.r.Epoch > x.r.Epoch && overlaps(x, y) {
			rs = append(rs, y.r)
		}
	}
	slices.SortFunc(rs, func(a, b api.SegmentRange) int { return cmp.Compare(a.KeyLow, b.KeyLow) })
	at := x.r.KeyLow
	for _, r := range rs {
		if r.KeyLow > at {
			break
		}
		at = max(at, r.KeyHigh)
	}
	return at >= x.r.KeyHigh
}

// newerOverlapLocked reports whether a segment of the writer newer than s
// overlaps it (and may be held by s's events).
func (w *Writer) newerOverlapLocked(s *segWriter) bool {
	for _, y := range w.mu.segs {
		if y != s && y.r.Epoch > s.r.Epoch && overlaps(s, y) {
			return true
		}
	}
	return false
}

// heldLocked reports whether s must not send yet: an older segment of the
// writer overlapping it holds events.
func (w *Writer) heldLocked(s *segWriter) bool {
	for _, x := range w.mu.segs {
		if x != s && x.r.Epoch < s.r.Epoch && overlaps(x, s) && x.hasEventsLocked() {
			return true
		}
	}
	return false
}

// pokeAllLocked wakes every segment goroutine: a hold may have ended.
func (w *Writer) pokeAllLocked() {
	for _, x := range w.mu.segs {
		x.poke()
	}
}

func overlaps(a, b *segWriter) bool { return a.r.KeyLow < b.r.KeyHigh && b.r.KeyLow < a.r.KeyHigh }

// hasEventsLocked reports whether s holds events: queued, or in flight as
// of its goroutine's last look at the queue (nfl).
func (s *segWriter) hasEventsLocked() bool {
	return s.nfl > 0 || len(s.ready) > 0 || s.open != nil
}

// poke wakes the segment's goroutine.
func (s *segWriter) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// movedEvent is one event of a block taken apart to be queued again.
type movedEvent struct {
	key string
	seq int64
	ev  []byte // points into its block's data
	a   *Ack
}

// eventsOf appends the events of blocks to out, in order; their sequence
// numbers are 0 unless the writer is sequenced.
func eventsOf(out []movedEvent, blocks []*block) []movedEvent {
	for _, b := range blocks {
		rest := b.data
		for i, a := range b.acks {
			ev, r, err := protocol.NextEvent(rest)
			if err != nil { // cannot happen: the writer framed them
				panic(fmt.Sprintf("client: writer block: %v", err))
			}
			rest = r
			var seq int64
			if i < len(b.seqs) {
				seq = b.seqs[i]
			}
			out = append(out, movedEvent{key: b.keys[i], seq: seq, ev: ev, a: a})
		}
	}
	return out
}

// moveSequencedLocked queues the events of blocks (a sealed segment's, in
// sequence order) on the segments of next by key, each target's queue
// merged with them in sequence order. It releases blocks.
func (w *Writer) moveSequencedLocked(next []*segWriter, blocks []*block) {
	moved := eventsOf(nil, blocks)
	per := map[*segWriter][]movedEvent{}
	var order []*segWriter
	for _, m := range moved {
		t := w.routeLocked(next, m.key)
		if _, ok := per[t]; !ok {
			order = append(order, t)
		}
		per[t] = append(per[t], m)
	}
	var release []*block
	for _, t := range order {
		queued := t.ready
		if t.open != nil {
			queued = append(queued, t.open)
		}
		t.ready, t.open = nil, nil
		release = append(release, queued...)
		all := mergeBySeq(per[t], eventsOf(nil, queued))
		for _, m := range all {
			t.addLocked(m.key, m.seq, m.ev, m.a)
		}
	}
	for _, b := range append(release, blocks...) {
		w.releaseLocked(b)
	}
}

// mergeBySeq merges two lists each in increasing sequence order.
func mergeBySeq(a, b []movedEvent) []movedEvent {
	out := make([]movedEvent, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].seq <= b[0].seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// errRetired ends the goroutine of a superseded segment with nothing left.
var errRetired = errors.New("client: segment superseded and empty")
