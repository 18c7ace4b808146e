package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is event time: a Writer's NoteTime and a Txn's CommitAt
// report times to the controller, which combines them into watermarks;
// a Reader's CurrentTimeWindow places its position among them.

var (
	// ErrNoTimeController: the Client's Controller does not serve event
	// time (it is not a TimeController).
	ErrNoTimeController = errors.New("client: the controller does not serve event time")
	// ErrTimeNotReported: Txn.CommitAt committed the transaction but
	// reported no time, because the Writer that began it is closed (a
	// closed writer never holds the stream's watermarks back).
	ErrTimeNotReported = errors.New("client: the transaction's writer is closed: time not reported")
)

// TimeController is the part of the controller's API event time needs;
// *ctlclient.Client satisfies it. NoteTime, CommitAt and Close use the
// first two; CurrentTimeWindow the last two.
type TimeController interface {
	NoteWriterTime(ctx context.Context, scope, stream, writer string, wt api.WriterTime) error
	RemoveWriter(ctx context.Context, scope, stream, writer string) error
	Watermarks(ctx context.Context, scope, stream string, after int64) ([]api.Watermark, error)
	SegmentRange(ctx context.Context, segment string) (api.SegmentRange, error)
}

// DefaultWatermarkPoll is how often a Reader that was asked for its time
// window asks the controller for new watermarks (WithWatermarkPoll).
const DefaultWatermarkPoll = time.Second

// WithWatermarkPoll sets how often the Reader's watermark goroutine asks
// the controller for new watermarks (default DefaultWatermarkPoll). The
// goroutine starts at the first CurrentTimeWindow call.
func WithWatermarkPoll(d time.Duration) ReaderOption {
	return func(c *readerConfig) { c.markPoll = d }
}

// NoteTime tells the controller that every event this writer writes from
// now on has an event time at or after t (the application's promise; t
// is kept to the millisecond). It first waits for every event written
// before the call to be acknowledged (as Flush, and with Flush's errors),
// then reports t with the writer's position: per segment it wrote to, the
// end of its last acknowledged event there. The controller combines the
// reports of the stream's active writers into watermarks (see the package
// documentation); a writer that notes a time must keep noting times, or
// close, or it holds the stream's watermarks back until the controller
// times it out (a minute by default). Close tells the controller the
// writer is gone (best effort: see Close). A time earlier than one noted before does not move the
// writer's time back: the controller keeps the later one.
//
// It blocks until the controller has answered or ctx is done, and retries
// nothing. Errors: Flush's, ErrClosed, ErrNoTimeController, a t before the
// Unix epoch, and the controller's (ctlclient.ErrNotFound for a deleted
// stream, ErrConflict for a sealed one, ErrUnreachable, ErrUnavailable:
// call again). NoteTime must not
// race Close: a report that reaches the controller after Close's removal
// would count until the writer timeout.
func (w *Writer) NoteTime(ctx context.Context, t time.Time) error {
	tc, ok := w.c.ctl.(TimeController)
	if !ok {
		return ErrNoTimeController
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return fmt.Errorf("client: note time %v: before the Unix epoch", t)
	}
	w.mu.Lock()
	closed := w.mu.closed
	w.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	pos, err := w.position(ctx)
	if err != nil {
		return err
	}
	w.noted.Store(true)
	if err := tc.NoteWriterTime(ctx, w.scope, w.stream, w.cfg.id, api.WriterTime{Time: ms, Position: pos}); err != nil {
		return fmt.Errorf("client: note time of writer %s on %s/%s: %w", w.cfg.id, w.scope, w.stream, err)
	}
	return nil
}

// position is, per segment with acknowledged events, the end of the last
// one. Where setups acknowledged blocks (a reconnect) the offset is not
// known: the segment's length, at or after it, stands for it from then on
// (a segment deleted meanwhile is left out).
func (w *Writer) position(ctx context.Context) (api.StreamCut, error) {
	pos := api.StreamCut{}
	var unknown []*segWriter
	w.mu.Lock()
	for name, s := range w.mu.segs {
		// Cleared before the length is asked: a setup that acknowledges
		// blocks after the answer sets it again for the next NoteTime.
		if s.ackedUnknown.Swap(false) {
			unknown = append(unknown, s)
		} else if off := s.acked.Load(); off > 0 {
			pos[name] = off
		}
	}
	w.mu.Unlock()
	for i, s := range unknown {
		name := s.r.Segment
		length, err := w.segmentLength(ctx, name)
		if err != nil {
			for _, s := range unknown[i:] {
				s.ackedUnknown.Store(true)
			}
			return nil, fmt.Errorf("client: note time: length of %s: %w", name, err)
		}
		s.noteAcked(length, false)
		if off := s.acked.Load(); off > 0 {
			pos[name] = off
		}
	}
	return pos, nil
}

// segmentLength asks the node for a segment's length (0 for a segment
// deleted meanwhile).
func (w *Writer) segmentLength(ctx context.Context, name string) (int64, error) {
	conn, err := w.c.SegmentConn(ctx, name)
	if err != nil {
		return 0, err
	}
	info, err := conn.GetSegmentInfo(ctx, name)
	if errors.Is(err, protocol.ErrNoSuchSegment) {
		return 0, nil
	}
	if err != nil {
		w.c.Invalidate(name, conn, err)
		return 0, err
	}
	return info.Length, nil
}

// noteAcked records the end of an acknowledged append (unknown: a setup
// acknowledged blocks without saying where they end).
func (s *segWriter) noteAcked(end int64, unknown bool) {
	if unknown {
		s.ackedUnknown.Store(true)
		return
	}
	for {
		old := s.acked.Load()
		if end <= old || s.acked.CompareAndSwap(old, end) {
			return
		}
	}
}

// forgetTimeTimeout bounds Close's call that tells the controller a
// writer that noted times is gone, whatever Close's ctx.
const forgetTimeTimeout = 3 * time.Second

// forgetTime tells the controller that a writer that noted times is gone
// (Close). It is best effort: it waits at most forgetTimeTimeout (and not
// past ctx, unless ctx is already done: then it still tries, for that
// long), takes ctlclient.ErrNotFound (the stream, and with it the
// writer's records, is gone) as done, and reports any other failure to
// the WithRetryNotify hook rather than to the caller: a writer not
// removed is timed out by the controller.
func (w *Writer) forgetTime(ctx context.Context) {
	if !w.noted.Swap(false) {
		return
	}
	tc, ok := w.c.ctl.(TimeController)
	if !ok {
		return
	}
	if ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, forgetTimeTimeout)
	defer cancel()
	err := tc.RemoveWriter(ctx, w.scope, w.stream, w.cfg.id)
	if err == nil || errors.Is(err, ctlclient.ErrNotFound) {
		return
	}
	w.c.retrying(1, fmt.Errorf("client: close writer %s: tell the controller it is gone (it will time out): %w", w.cfg.id, err))
}

// CommitAt commits the transaction (as Commit) and then reports event
// time t for the Writer that began it, as Pravega does on a commit with a
// timestamp: the events of the transaction and every event that Writer
// wrote before are taken to come before the end of the transaction's
// segments' parents, and the Writer promises times at or after t from
// now on (see Writer.NoteTime). If the commit succeeds but the report
// fails, the error says so and wraps the controller's; the transaction is
// committed (Status says COMMITTED) and calling CommitAt again reports
// the time again. If that Writer is closed (before or during CommitAt),
// the transaction is committed but no time stays reported: the error
// wraps ErrTimeNotReported.
func (t *Txn) CommitAt(ctx context.Context, at time.Time) error {
	tc, ok := t.c.ctl.(TimeController)
	if !ok {
		return ErrNoTimeController
	}
	ms := at.UnixMilli()
	if ms < 0 {
		return fmt.Errorf("client: commit transaction %s at %v: before the Unix epoch", t.id, at)
	}
	if err := t.Commit(ctx); err != nil {
		return err
	}
	notReported := fmt.Errorf("client: transaction %s committed; writer %s is closed: %w", t.id, t.owner.cfg.id, ErrTimeNotReported)
	if t.owner.isClosed() {
		return notReported
	}
	if err := t.owner.Flush(ctx); err != nil {
		return fmt.Errorf("client: transaction %s committed; its time not reported: %w", t.id, err)
	}
	t.owner.noted.Store(true)
	if err := tc.NoteWriterTime(ctx, t.scope, t.stream, t.owner.cfg.id, api.WriterTime{Time: ms, Txn: t.id}); err != nil {
		return fmt.Errorf("client: transaction %s committed; its time not reported: %w", t.id, err)
	}
	// Close may have removed the writer before the report landed: remove
	// it again (Close sets closed before its removal, so one of the two
	// removals comes after the report).
	if t.owner.isClosed() {
		t.owner.noted.Store(true)
		t.owner.forgetTime(ctx)
		return notReported
	}
	return nil
}

// isClosed reports whether Close was called.
func (w *Writer) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.closed
}

// TimeWindow bounds the event times around a reader's position, from the
// stream's watermarks: every event with a time at or before Lower has
// been read, and every event read has a time at or before Upper (when the
// writers keep their promise: times noted only increase, and each event
// is at or after the writer's last noted time). A zero Lower or Upper is
// unknown: no watermark lies at or before (after) the position yet.
type TimeWindow struct {
	Lower, Upper time.Time
}

// LowerKnown reports whether Lower is known.
func (w TimeWindow) LowerKnown() bool { return !w.Lower.IsZero() }

// UpperKnown reports whether Upper is known.
func (w TimeWindow) UpperKnown() bool { return !w.Upper.IsZero() }

// readerMarks is a Reader's copy of its stream's watermarks, kept by the
// goroutine pollMarks (started by the first CurrentTimeWindow).
type readerMarks struct {
	once sync.Once
	mu   struct {
		sync.Mutex
		marks  []api.Watermark
		ranges map[string]api.KeyRange // segment -> key range
	}
}

// maxReaderMarks bounds the watermarks a Reader keeps (the oldest go).
const maxReaderMarks = 256

// CurrentTimeWindow returns the time window of the reader's position
// (Position()) among the watermarks known (see TimeWindow); in a reader
// group, of the segments this reader holds. It does no I/O: the first
// call starts a goroutine (stopped by Close) that fetches the stream's
// watermarks from the controller every WithWatermarkPoll, so early calls
// may answer unknown. It is safe to call concurrently with ReadNext.
func (r *Reader) CurrentTimeWindow() TimeWindow {
	r.marks.once.Do(r.startMarks)
	pos := r.Position()
	r.marks.mu.Lock()
	defer r.marks.mu.Unlock()
	return timeWindow(pos, r.marks.mu.ranges, r.marks.mu.marks)
}

// CurrentTimeWindow returns the time window of the segments this reader
// holds (see Reader.CurrentTimeWindow).
func (gr *GroupReader) CurrentTimeWindow() TimeWindow { return gr.r.CurrentTimeWindow() }

func (r *Reader) startMarks() {
	tc, ok := r.c.ctl.(TimeController)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		return
	}
	r.wg.Add(1)
	go r.pollMarks(tc)
}

// pollMarks fetches new watermarks, and the key ranges of the segments
// the reader holds, until Close. Failures are retried at the next tick.
func (r *Reader) pollMarks(tc TimeController) {
	defer r.wg.Done()
	every := r.cfg.markPoll
	if every <= 0 {
		every = DefaultWatermarkPoll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var after int64
	for {
		ws, err := tc.Watermarks(r.ctx, r.scope, r.stream, after)
		if err == nil && len(ws) > 0 {
			after = ws[len(ws)-1].Seq
			r.addMarks(ws)
		}
		pos := r.Position()
		r.pruneRanges(pos)
		for seg := range pos {
			r.marks.mu.Lock()
			_, known := r.marks.mu.ranges[seg]
			r.marks.mu.Unlock()
			if known {
				continue
			}
			if sr, err := tc.SegmentRange(r.ctx, seg); err == nil {
				r.marks.mu.Lock()
				r.setRangeLocked(seg, api.KeyRange{Low: sr.KeyLow, High: sr.KeyHigh})
				r.marks.mu.Unlock()
			}
		}
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *Reader) addMarks(ws []api.Watermark) {
	r.marks.mu.Lock()
	defer r.marks.mu.Unlock()
	for _, w := range ws {
		for _, s := range w.Segments {
			r.setRangeLocked(s.Segment, api.KeyRange{Low: s.KeyLow, High: s.KeyHigh})
		}
	}
	m := append(r.marks.mu.marks, ws...)
	if len(m) > maxReaderMarks {
		m = append([]api.Watermark(nil), m[len(m)-maxReaderMarks:]...)
	}
	r.marks.mu.marks = m
}

// pruneRanges forgets the key ranges of segments neither in pos nor in a
// kept watermark's cut, so that a long-lived reader's map stays small.
func (r *Reader) pruneRanges(pos api.StreamCut) {
	r.marks.mu.Lock()
	defer r.marks.mu.Unlock()
	if len(r.marks.mu.ranges) <= maxReaderRanges {
		return
	}
	for seg := range r.marks.mu.ranges {
		if _, ok := pos[seg]; ok {
			continue
		}
		used := false
		for _, w := range r.marks.mu.marks {
			if _, used = w.Cut[seg]; used {
				break
			}
		}
		if !used {
			delete(r.marks.mu.ranges, seg)
		}
	}
}

// maxReaderRanges is how many key ranges a Reader keeps before it prunes.
const maxReaderRanges = 1024

func (r *Reader) setRangeLocked(seg string, kr api.KeyRange) {
	if r.marks.mu.ranges == nil {
		r.marks.mu.ranges = map[string]api.KeyRange{}
	}
	r.marks.mu.ranges[seg] = kr
}

// timeWindow places pos among marks (oldest first): Lower is the lower
// time of the newest watermark whose cut pos is at or after, Upper the
// upper time of the oldest whose cut pos is at or before. ranges gives
// the key ranges of pos's and the cuts' segments; a segment of pos
// without one leaves the window unknown.
func timeWindow(pos api.StreamCut, ranges map[string]api.KeyRange, marks []api.Watermark) TimeWindow {
	var tw TimeWindow
	if len(pos) == 0 {
		return tw
	}
	for seg := range pos {
		if _, ok := ranges[seg]; !ok {
			return tw
		}
	}
	for _, w := range marks {
		cmp, ok := compareCut(pos, w.Cut, ranges)
		if !ok {
			continue
		}
		if cmp >= 0 {
			tw.Lower = time.UnixMilli(w.LowerTime)
		}
		if cmp <= 0 && tw.Upper.IsZero() {
			tw.Upper = time.UnixMilli(w.UpperTime)
		}
	}
	return tw
}

// compareCut compares a position with a watermark's cut where they
// overlap: 1 if pos is at or after the cut everywhere and after it
// somewhere, 0 if equal, -1 if at or before everywhere and before
// somewhere; ok is false if they are mixed, do not overlap, or a cut
// segment's key range is unknown. A segment of an older epoch overlapping
// one of a newer epoch was sealed before the newer one began.
func compareCut(pos, cut api.StreamCut, ranges map[string]api.KeyRange) (cmp int, ok bool) {
	after, before, overlap := false, false, false
	for p, poff := range pos {
		pr := ranges[p]
		pq, err := protocol.ParseSegmentName(p)
		if err != nil {
			return 0, false
		}
		for c, coff := range cut {
			cr, known := ranges[c]
			if !known {
				return 0, false
			}
			if !(pr.Low < cr.High && cr.Low < pr.High) {
				continue
			}
			overlap = true
			cq, err := protocol.ParseSegmentName(c)
			if err != nil {
				return 0, false
			}
			switch {
			case p == c && poff > coff, p != c && pq.Epoch > cq.Epoch:
				after = true
			case p == c && poff < coff, p != c && pq.Epoch < cq.Epoch:
				before = true
			}
		}
	}
	switch {
	case !overlap || after && before:
		return 0, false
	case after:
		return 1, true
	case before:
		return -1, true
	}
	return 0, true
}
