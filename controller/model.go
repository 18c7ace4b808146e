package controller

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is the deterministic core: the stream record and the pure
// functions over it (key ranges, cuts, successors, epochs). Nothing here
// does I/O or reads a clock.

// segmentRec is one segment of a stream: its number, the epoch that created
// it, and its key range [Low, High).
type segmentRec struct {
	Number int64   `json:"number"`
	Epoch  int64   `json:"epoch"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// epochRec is the set of segments active from CreationTime (ms since the
// Unix epoch) until the next epoch's creation. Segments are ordered by key.
type epochRec struct {
	Epoch        int64   `json:"epoch"`
	CreationTime int64   `json:"creationTime"`
	Segments     []int64 `json:"segments"`
	// Trigger and Reason say why the scale that began the epoch happened
	// (api.TriggerManual, api.TriggerAuto); absent in records written
	// before they were kept, and for epoch 0.
	Trigger string `json:"trigger,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// txnRef is what the stream record keeps of an unfinished transaction.
type txnRef struct {
	Epoch int64 `json:"epoch"`
}

// workflowRec is the unfinished workflow of a stream (at most one). Step is
// the index of the next step to perform in the kind's step list; it is
// written before that step is performed.
type workflowRec struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	Step      int    `json:"step"`
	StartTime int64  `json:"startTime"`
	// scale
	NewEpoch int64        `json:"newEpoch,omitempty"`
	Sealed   []int64      `json:"sealed,omitempty"`
	New      []segmentRec `json:"new,omitempty"`
	Trigger  string       `json:"trigger,omitempty"` // copied into the new epoch
	Reason   string       `json:"reason,omitempty"`
	// truncate: the cut (segment number -> offset) and the segments it
	// deletes.
	Cut    map[int64]int64 `json:"cut,omitempty"`
	Delete []int64         `json:"delete,omitempty"`
}

// streamRec is the value of scopes/<scope>/streams/<stream>.
type streamRec struct {
	Config       api.StreamConfig `json:"config"`
	CreationTime int64            `json:"creationTime"`
	Sealed       bool             `json:"sealed"`
	// Segments holds every published segment; Segments[i].Number == i.
	// Those numbered below FirstSegment were dropped by compact: they are
	// not stored, and read back as placeholders (dropped).
	Segments []segmentRec `json:"segments"`
	// Epochs holds every epoch; Epochs[e].Epoch == e. The last is current.
	// Those below FirstEpoch were dropped by compact: not stored, read
	// back as placeholders without segments.
	Epochs []epochRec `json:"epochs"`
	// FirstSegment and FirstEpoch are the first segment and epoch the
	// record keeps (0: all; compact moves them up after a truncation).
	FirstSegment int64 `json:"firstSegment,omitempty"`
	FirstEpoch   int64 `json:"firstEpoch,omitempty"`
	// NextSegment is the number the next created segment gets (numbers are
	// reserved by a scale's intent, so they are never reused).
	NextSegment int64 `json:"nextSegment"`
	// Head is the truncation cut (segment number -> offset); nil if the
	// stream was never truncated. Segments before it are deleted.
	Head map[int64]int64 `json:"head,omitempty"`
	// Txns are the transactions not yet COMMITTED or ABORTED.
	Txns     map[string]txnRef `json:"txns,omitempty"`
	Workflow *workflowRec      `json:"workflow,omitempty"`
	// PendingScale is the automatic scale waiting for Txns to end; while
	// it is set CreateTxn refuses (ErrScalePending). See txnscale.go.
	PendingScale *pendingScaleRec `json:"pendingScale,omitempty"`
	// GivenUp are the newest pending scales dropped (at most
	// maxGivenUp), oldest first: the scaling history's "given up".
	GivenUp []pendingScaleRec `json:"givenUp,omitempty"`
}

func (r *streamRec) current() epochRec { return r.Epochs[len(r.Epochs)-1] }

// dropped reports whether compact removed segment n's history from the
// record (it was deleted by a truncation, as were all the epochs it was
// active in): numbered below FirstSegment (a placeholder), or kept only
// because its number is not below FirstSegment while every epoch it was
// active in was dropped (created before FirstEpoch and not active in it).
func (r *streamRec) dropped(n int64) bool {
	if n < r.FirstSegment {
		return true
	}
	if r.FirstEpoch == 0 || n >= int64(len(r.Segments)) {
		return false
	}
	return r.Segments[n].Epoch < r.FirstEpoch && !contains(r.Epochs[r.FirstEpoch].Segments, n)
}

// MaxReasonLen caps a scale's reason as the epoch records it.
const MaxReasonLen = 256

// capReason cuts reason to MaxReasonLen bytes (on a rune boundary).
func capReason(reason string) string {
	if len(reason) <= MaxReasonLen {
		return reason
	}
	cut := MaxReasonLen - len("...")
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut] + "..."
}

// streamRecJSON is streamRec's stored form (no placeholders).
type streamRecJSON streamRec

// MarshalJSON stores the record without the placeholders of dropped
// segments and epochs.
func (r streamRec) MarshalJSON() ([]byte, error) {
	out := streamRecJSON(r)
	if r.FirstSegment > 0 && r.FirstSegment <= int64(len(r.Segments)) {
		out.Segments = r.Segments[r.FirstSegment:]
	}
	if r.FirstEpoch > 0 && r.FirstEpoch < int64(len(r.Epochs)) {
		out.Epochs = r.Epochs[r.FirstEpoch:]
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a stored record, putting placeholders back for the
// dropped segments and epochs so that Segments[i].Number == i and
// Epochs[e].Epoch == e hold in memory. Records written before compact
// existed (every segment and epoch) read as they are.
func (r *streamRec) UnmarshalJSON(b []byte) error {
	var in streamRecJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in.FirstSegment > 0 {
		segs := make([]segmentRec, in.FirstSegment, in.FirstSegment+int64(len(in.Segments)))
		for i := range segs {
			segs[i] = segmentRec{Number: int64(i), Epoch: -1}
		}
		in.Segments = append(segs, in.Segments...)
	}
	if in.FirstEpoch > 0 {
		eps := make([]epochRec, in.FirstEpoch, in.FirstEpoch+int64(len(in.Epochs)))
		for i := range eps {
			eps[i] = epochRec{Epoch: int64(i)}
		}
		in.Epochs = append(eps, in.Epochs...)
	}
	*r = streamRec(in)
	return nil
}

// KeepDeletedHistory is how long compact keeps an epoch wholly before the
// truncation head after it ended: readers and stream cuts that far behind
// the head still find their segments' history (their ranges, successors),
// and are moved to the head as before; older ones are refused.
const KeepDeletedHistory = 7 * 24 * time.Hour

// compact drops from the record the epochs wholly before the truncation
// head (every segment of them deleted) that ended more than
// KeepDeletedHistory before now (ms), and the segments only they held, so
// that a stream that scales often but is truncated stays small: its
// record keeps what lies after the head, which retention bounds, and a
// week before it. The current epoch and the head's segments are always
// kept.
func (r *streamRec) compact(now int64) {
	if r.Head == nil {
		return
	}
	fe := r.FirstEpoch
	for fe < r.current().Epoch && r.Epochs[fe+1].CreationTime <= now-KeepDeletedHistory.Milliseconds() {
		all := true
		for _, n := range r.Epochs[fe].Segments {
			if !r.deleted(n) {
				all = false
				break
			}
		}
		if !all {
			break
		}
		fe++
	}
	fs := r.NextSegment
	for _, e := range r.Epochs[fe:] {
		for _, n := range e.Segments {
			fs = min(fs, n)
		}
	}
	for n := range r.Head {
		fs = min(fs, n)
	}
	if r.Workflow != nil {
		for _, n := range r.Workflow.Sealed {
			fs = min(fs, n)
		}
		for n := range r.Workflow.Cut {
			fs = min(fs, n)
		}
		for _, n := range r.Workflow.Delete {
			fs = min(fs, n)
		}
	}
	for _, t := range r.Txns {
		fe = min(fe, t.Epoch)
	}
	for i := r.FirstSegment; i < fs; i++ {
		r.Segments[i] = segmentRec{Number: i, Epoch: -1}
	}
	for i := r.FirstEpoch; i < fe; i++ {
		r.Epochs[i] = epochRec{Epoch: i}
	}
	r.FirstSegment, r.FirstEpoch = max(r.FirstSegment, fs), max(r.FirstEpoch, fe)
}

func (r *streamRec) seg(n int64) (segmentRec, bool) {
	if n < 0 || n >= int64(len(r.Segments)) || r.Segments[n].Number != n || r.dropped(n) {
		return segmentRec{}, false
	}
	return r.Segments[n], true
}

func (r *streamRec) name(s segmentRec) string {
	return protocol.SegmentName(r.Config.ScopeName, r.Config.StreamName, s.Number, s.Epoch)
}

func (r *streamRec) rangeOf(s segmentRec) api.SegmentRange {
	return api.SegmentRange{Segment: r.name(s), Number: s.Number, Epoch: s.Epoch, KeyLow: s.Low, KeyHigh: s.High}
}

// lastEpoch is the last epoch segment n is active in.
func (r *streamRec) lastEpoch(n int64) int64 {
	var s segmentRec
	if n >= r.FirstSegment && n < int64(len(r.Segments)) && r.Segments[n].Number == n {
		s = r.Segments[n] // a dropped one too: its epochs still order it
	}
	e := s.Epoch
	if e < r.FirstEpoch && contains(r.Epochs[r.FirstEpoch].Segments, n) {
		// Created in an epoch compact dropped, and still active in the
		// first one kept: walk from there.
		e = r.FirstEpoch
	}
	for e+1 < int64(len(r.Epochs)) && contains(r.Epochs[e+1].Segments, n) {
		e++
	}
	return e
}

func (r *streamRec) isActive(n int64) bool { return contains(r.current().Segments, n) }

func contains(list []int64, n int64) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

func overlaps(a, b segmentRec) bool { return a.Low < b.High && b.Low < a.High }

// evenRanges splits [0,1) into n ranges of equal width; the ends are exact
// (0 and 1).
func evenRanges(n int) []api.KeyRange {
	out := make([]api.KeyRange, n)
	for i := range out {
		out[i] = api.KeyRange{Low: float64(i) / float64(n), High: float64(i+1) / float64(n)}
	}
	out[n-1].High = 1
	return out
}

// checkCover checks that ranges, in any order, cover [low, high) exactly
// once: each non-empty, no gap, no overlap. It returns them sorted.
func checkCover(ranges []api.KeyRange, low, high float64) ([]api.KeyRange, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("%w: no key ranges", ErrInvalid)
	}
	rs := append([]api.KeyRange(nil), ranges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Low < rs[j].Low })
	at := low
	for _, r := range rs {
		if !(r.Low < r.High) || r.Low < 0 || r.High > 1 {
			return nil, fmt.Errorf("%w: key range [%v, %v) is empty or outside [0, 1)", ErrInvalid, r.Low, r.High)
		}
		if r.Low > at {
			return nil, fmt.Errorf("%w: key ranges leave a gap [%v, %v)", ErrInvalid, at, r.Low)
		}
		if r.Low < at {
			return nil, fmt.Errorf("%w: key ranges overlap at [%v, %v)", ErrInvalid, r.Low, at)
		}
		at = r.High
	}
	if at != high {
		if at < high {
			return nil, fmt.Errorf("%w: key ranges leave a gap [%v, %v)", ErrInvalid, at, high)
		}
		return nil, fmt.Errorf("%w: key ranges go beyond %v to %v", ErrInvalid, high, at)
	}
	return rs, nil
}

// planScale checks a scale request against the record and returns the
// workflow that performs it: new segments numbered from NextSegment in
// epoch current+1.
func planScale(r *streamRec, req api.ScaleRequest, now int64) (*workflowRec, error) {
	if len(req.SealedSegments) == 0 {
		return nil, fmt.Errorf("%w: no segments to seal", ErrInvalid)
	}
	if len(req.NewRanges) > api.MaxSegments {
		return nil, fmt.Errorf("%w: %d new ranges, at most %d", ErrInvalid, len(req.NewRanges), api.MaxSegments)
	}
	var sealed []segmentRec
	seen := map[int64]bool{}
	for _, n := range req.SealedSegments {
		if seen[n] {
			return nil, fmt.Errorf("%w: segment %d listed twice", ErrInvalid, n)
		}
		seen[n] = true
		s, ok := r.seg(n)
		if !ok {
			return nil, fmt.Errorf("%w: segment %d does not exist", ErrInvalid, n)
		}
		if !r.isActive(n) {
			return nil, fmt.Errorf("%w: segment %d is not active (sealed in epoch %d)", ErrInvalid, n, r.lastEpoch(n)+1)
		}
		sealed = append(sealed, s)
	}
	sort.Slice(sealed, func(i, j int) bool { return sealed[i].Low < sealed[j].Low })
	for i := 1; i < len(sealed); i++ {
		if sealed[i].Low != sealed[i-1].High {
			return nil, fmt.Errorf("%w: segments %d and %d are not neighbours", ErrInvalid, sealed[i-1].Number, sealed[i].Number)
		}
	}
	low, high := sealed[0].Low, sealed[len(sealed)-1].High
	rs, err := checkCover(req.NewRanges, low, high)
	if err != nil {
		return nil, fmt.Errorf("%w (the new ranges must cover exactly [%v, %v), the sealed segments' union)", err, low, high)
	}
	if err := checkMinSegments(r, len(sealed), len(rs)); err != nil {
		return nil, err
	}
	w := &workflowRec{Kind: kindScale, StartTime: now, NewEpoch: r.current().Epoch + 1}
	for _, s := range sealed {
		w.Sealed = append(w.Sealed, s.Number)
	}
	for i, kr := range rs {
		w.New = append(w.New, segmentRec{Number: r.NextSegment + int64(i), Epoch: w.NewEpoch, Low: kr.Low, High: kr.High})
	}
	return w, nil
}

// applyScale publishes a planned scale: the new segments and epoch.
func applyScale(r *streamRec, w *workflowRec, now int64) {
	if r.current().Epoch >= w.NewEpoch {
		return // already published
	}
	r.Segments = append(r.Segments, w.New...)
	var segs []int64
	for _, n := range r.current().Segments {
		if !contains(w.Sealed, n) {
			segs = append(segs, n)
		}
	}
	for _, s := range w.New {
		segs = append(segs, s.Number)
	}
	sort.Slice(segs, func(i, j int) bool { return r.Segments[segs[i]].Low < r.Segments[segs[j]].Low })
	r.Epochs = append(r.Epochs, epochRec{Epoch: w.NewEpoch, CreationTime: now, Segments: segs, Trigger: w.Trigger, Reason: w.Reason})
}

// order is how two segments relate in the stream's history.
type order int

const (
	unrelated order = iota // disjoint key ranges
	same
	earlier // a is sealed before b is created, and their ranges overlap
	later
)

func (r *streamRec) compare(a, b int64) order {
	if a == b {
		return same
	}
	sa, sb := r.Segments[a], r.Segments[b]
	if !overlaps(sa, sb) {
		return unrelated
	}
	// Overlapping segments are never active in the same epoch.
	if r.lastEpoch(a) < sb.Epoch {
		return earlier
	}
	return later
}

// cutNumbers turns a cut of qualified names into segment numbers, checking
// each name belongs to this stream and exists.
func (r *streamRec) cutNumbers(c api.StreamCut) (map[int64]int64, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	out := make(map[int64]int64, len(c))
	for name, off := range c {
		q, _ := protocol.ParseSegmentName(name)
		if q.Scope != r.Config.ScopeName || q.Stream != r.Config.StreamName {
			return nil, fmt.Errorf("%w: stream cut: %q is not a segment of %s/%s", ErrInvalid, name, r.Config.ScopeName, r.Config.StreamName)
		}
		if r.dropped(q.Number) {
			return nil, fmt.Errorf("%w: stream cut: segment %q was deleted by a truncation more than %v ago and its history dropped: start from the head", ErrInvalid, name, KeepDeletedHistory)
		}
		s, ok := r.seg(q.Number)
		if !ok || s.Epoch != q.Epoch {
			return nil, fmt.Errorf("%w: stream cut: segment %q does not exist", ErrInvalid, name)
		}
		out[q.Number] = off
	}
	return out, nil
}

// validateCut checks that cut is a consistent position: its segments cover
// [0,1) exactly once, and no other segment lies both after one cut segment
// and before another (which would make the cut read it and skip it at
// once; this also excludes a cut holding a segment and its successor).
func (r *streamRec) validateCut(cut map[int64]int64) error {
	if len(cut) == 0 {
		return fmt.Errorf("%w: stream cut is empty", ErrInvalid)
	}
	var ranges []api.KeyRange
	for n := range cut {
		s := r.Segments[n]
		ranges = append(ranges, api.KeyRange{Low: s.Low, High: s.High})
	}
	if _, err := checkCover(ranges, 0, 1); err != nil {
		return fmt.Errorf("stream cut: %w", err)
	}
	for _, s := range r.Segments[r.FirstSegment:] {
		if _, in := cut[s.Number]; in {
			continue
		}
		var before, after int64 = -1, -1
		for n := range cut {
			switch r.compare(s.Number, n) {
			case earlier:
				before = n
			case later:
				after = n
			}
		}
		if before >= 0 && after >= 0 {
			return fmt.Errorf("%w: stream cut is inconsistent: segment %d lies after cut segment %d but before cut segment %d", ErrInvalid, s.Number, after, before)
		}
	}
	return nil
}

// beforeCut reports whether segment n lies wholly before a valid cut: it is
// not in the cut and the cut segments overlapping it are all later.
func (r *streamRec) beforeCut(n int64, cut map[int64]int64) bool {
	if _, in := cut[n]; in {
		return false
	}
	for c := range cut {
		if r.compare(n, c) == earlier {
			return true
		}
	}
	return false
}

// afterCut reports whether segment n lies wholly after a valid cut.
func (r *streamRec) afterCut(n int64, cut map[int64]int64) bool {
	if _, in := cut[n]; in {
		return false
	}
	for c := range cut {
		if r.compare(n, c) == later {
			return true
		}
	}
	return false
}

// deleted reports whether truncation removed segment n.
func (r *streamRec) deleted(n int64) bool {
	return r.dropped(n) || r.Head != nil && r.beforeCut(n, r.Head)
}

// headCut is where a reader from the start begins: the truncation cut, or
// the first epoch at offset 0.
func (r *streamRec) headCut() map[int64]int64 {
	if r.Head != nil {
		return r.Head
	}
	out := map[int64]int64{}
	for _, n := range r.Epochs[0].Segments {
		out[n] = 0
	}
	return out
}

// epochAt returns the epoch active at time t (ms): the last one created at
// or before t, or the first epoch for an earlier t.
func (r *streamRec) epochAt(t int64) epochRec {
	i := sort.Search(len(r.Epochs), func(i int) bool { return r.Epochs[i].CreationTime > t })
	if i == 0 {
		return r.Epochs[0]
	}
	return r.Epochs[i-1]
}

// cutAt is the position of time t: the segments of the epoch active then at
// offset 0, moved up to the head where truncation removed data.
func (r *streamRec) cutAt(t int64) map[int64]int64 {
	e := r.epochAt(t)
	if e.Epoch < r.FirstEpoch {
		return r.headCut() // dropped by compact: before the head
	}
	out := map[int64]int64{}
	for _, n := range e.Segments {
		if r.deleted(n) {
			return r.headCut()
		}
		out[n] = 0
		if off, ok := r.Head[n]; ok {
			out[n] = off
		}
	}
	return out
}

// successors returns the segments created when n was sealed that overlap
// its range, each with the segments sealed then that it overlaps (its
// predecessors). An active segment, or one sealed with the stream, has none.
func (r *streamRec) successors(n int64) []api.Successor {
	last := r.lastEpoch(n)
	if last+1 >= int64(len(r.Epochs)) {
		return nil
	}
	prev, next := r.Epochs[last], r.Epochs[last+1]
	s := r.Segments[n]
	var out []api.Successor
	for _, m := range next.Segments {
		x := r.Segments[m]
		if contains(prev.Segments, m) || !overlaps(s, x) {
			continue
		}
		succ := api.Successor{Segment: r.rangeOf(x), Predecessors: []string{}}
		for _, p := range prev.Segments {
			if !contains(next.Segments, p) && overlaps(r.Segments[p], x) {
				succ.Predecessors = append(succ.Predecessors, r.name(r.Segments[p]))
			}
		}
		out = append(out, succ)
	}
	return out
}

// between returns the segments a reader crosses from cut `from` to cut `to`
// (nil to: to the end), in segment-number order: those neither before from
// nor after to.
func (r *streamRec) between(from, to map[int64]int64) []int64 {
	var out []int64
	for _, s := range r.Segments[r.FirstSegment:] {
		if r.beforeCut(s.Number, from) || (to != nil && r.afterCut(s.Number, to)) {
			continue
		}
		out = append(out, s.Number)
	}
	return out
}

// cutNotAfter checks that cut `from` is not after cut `to`: no segment of
// to lies before from, and a segment in both has from's offset <= to's.
func (r *streamRec) cutNotAfter(from, to map[int64]int64) error {
	for n, off := range to {
		if r.beforeCut(n, from) {
			return fmt.Errorf("%w: the end cut's segment %d lies before the start cut", ErrInvalid, n)
		}
		if f, ok := from[n]; ok && f > off {
			return fmt.Errorf("%w: segment %d: the start cut's offset %d is after the end cut's %d", ErrInvalid, n, f, off)
		}
	}
	return nil
}

func (r *streamRec) cutNames(c map[int64]int64) api.StreamCut {
	out := api.StreamCut{}
	for n, off := range c {
		out[r.name(r.Segments[n])] = off
	}
	return out
}
