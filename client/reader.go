package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Errors of readers.
var (
	// ErrEndOfStream is returned by ReadNext once the stream is sealed and
	// every event of it has been returned.
	ErrEndOfStream = errors.New("client: end of stream")
	// ErrReaderBusy is returned by ReadNext when another ReadNext of the
	// same Reader is running.
	ErrReaderBusy = errors.New("client: ReadNext called concurrently")
)

// Reader defaults.
const (
	// DefaultReadBuffer is the most bytes asked of a node per read.
	DefaultReadBuffer = 1 << 20
	// tailWait is how long a read at a segment's tail waits on the node
	// for new bytes before the reader asks again (long poll).
	tailWait = 2 * time.Second
)

// ReaderOption configures a Reader.
type ReaderOption func(*readerConfig)

type readerConfig struct {
	start      int // startHead, startTail, startCut
	cut        api.StreamCut
	readBuffer int
	onTrunc    func(Truncation)
	tailWait   time.Duration
	end        api.StreamCut // ToCut: where reading ends (nil: no end)
	// group: the reader is driven by a reader group (group_member.go):
	// it reads only the segments acquired, and hands ended segments to
	// the group instead of starting their successors.
	group bool
	// markPoll is how often CurrentTimeWindow's goroutine asks the
	// controller for new watermarks (watermark.go).
	markPoll time.Duration
}

const (
	startHead = iota
	startTail
	startCut
)

// FromHead starts the reader at the stream's head: its first event, or
// after truncation the truncation cut. The default.
func FromHead() ReaderOption {
	return func(c *readerConfig) { c.start, c.cut = startHead, nil }
}

// FromTail starts the reader at the stream's end when NewReader runs: it
// returns only events appended afterwards.
func FromTail() ReaderOption {
	return func(c *readerConfig) { c.start, c.cut = startTail, nil }
}

// FromCut starts the reader at cut, a consistent stream cut of this stream
// such as a Reader's Position or Event.Position: the first event returned
// is the one just after it.
func FromCut(cut api.StreamCut) ReaderOption {
	return func(c *readerConfig) { c.start, c.cut = startCut, cut }
}

// WithReadBuffer sets the most bytes asked of a node per read (default
// DefaultReadBuffer). A larger event is still read whole, with a read as
// large as it.
func WithReadBuffer(bytes int) ReaderOption {
	return func(c *readerConfig) { c.readBuffer = bytes }
}

// WithTruncationFunc calls f (from ReadNext, before it returns the next
// event) whenever the stream was truncated past the reader: the events
// between where the reader stood and the stream's new head were deleted
// before it read them, and it continues at the head. Without it, the
// reader skips them silently.
func WithTruncationFunc(f func(Truncation)) ReaderOption {
	return func(c *readerConfig) { c.onTrunc = f }
}

// withTailWait sets how long a tail read waits on the node (tests).
func withTailWait(d time.Duration) ReaderOption {
	return func(c *readerConfig) { c.tailWait = d }
}

// Truncation reports events a reader lost to truncation: it stood in
// Segment at Offset, and continues at the segments of Head (the part of
// the stream's head cut that replaces Segment and whatever it held that
// truncation deleted), which may be Segment itself at a higher offset.
type Truncation struct {
	Segment string
	Offset  int64
	Head    api.StreamCut
}

// Event is one event returned by ReadNext.
type Event struct {
	// Data is the event's bytes. The Reader never reuses it: the caller
	// owns it.
	Data []byte
	// Segment is the qualified name of the segment holding the event, and
	// Offset where the event's frame begins in it.
	Segment string
	Offset  int64
	// Position is the reader's position just after this event.
	Position Position
	// Checkpoint, when not empty, makes this a checkpoint event of a
	// reader group (GroupReader.ReadNext): the name of the checkpoint, no
	// Data, and Position the reader's share of the checkpoint's cut
	// (every event returned before it lies before the cut, every one
	// after it after). See ReaderGroup.InitiateCheckpoint.
	Checkpoint string
}

// IsCheckpoint reports whether ev is a checkpoint event.
func (ev Event) IsCheckpoint() bool { return ev.Checkpoint != "" }

// headCutter is the controller route FromHead needs. *ctlclient.Client
// has it; a Controller without it can start readers only FromTail or
// FromCut.
type headCutter interface {
	HeadCut(ctx context.Context, scope, stream string) (api.StreamCut, error)
}

// Reader reads one stream's events: every segment from its start point,
// each in order, successors only after all their predecessors (so events
// of one routing key come out in the order they were written, across
// scaling). Events of different segments are interleaved round robin
// among the segments that have data.
//
// Inside, one goroutine per segment being read keeps at most one read in
// flight on the node (a long poll at the tail: the node answers when bytes
// arrive or after a wait of a few seconds, and the goroutine asks again;
// no empty reads in a tight loop). It retries, with capped exponential
// backoff and jitter, everything that may pass later: a broken connection,
// WrongHost and ContainerUnavailable (the segment's node is looked up
// again), an unreachable or unavailable controller. When a segment ends it
// asks the controller for the successors; when a read finds the segment
// truncated or deleted, it moves to the stream's head cut (see
// WithTruncationFunc).
//
// ReadNext is not safe for concurrent use; Position and Close are.
type Reader struct {
	c       *Client
	scope   string
	stream  string
	cfg     readerConfig
	hasHead headCutter

	ctx     context.Context // the reader's life; cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	results chan fetchResult
	busy    chan struct{} // a token: held while ReadNext (or a group's runOwner) runs
	reading atomic.Bool   // a ReadNext call is in progress
	cmds    chan func()   // run by the running ReadNext (see runOwner)
	marks   readerMarks   // watermarks for CurrentTimeWindow (watermark.go)

	// Owned by ReadNext (under busy).
	segs map[string]*segRead
	rr   int    // round-robin start among segs, in segment order
	gen  uint64 // the last fetch generation given out

	mu struct {
		sync.Mutex
		tracker *segmentTracker
		pos     *posNode
		closed  bool
		// Group mode: segments read to their end, not yet handed to the
		// group; and whether the group has read everything.
		groupEnded map[string]EndedSegment
		groupDone  bool
		// Group mode: truncations met, not yet handed to the group.
		groupTruncs []groupTruncation
		// Group mode: checkpoint events (group_checkpoint.go).
		ckpt readerCheckpoint
	}
}

// segRead is the state of one segment being read. Owned by ReadNext.
type segRead struct {
	name     string
	gen      uint64 // tells a current fetch's result from a stale one
	buf      []byte // fetched bytes not yet returned; buf[0] is at bufOff
	bufOff   int64
	pend     [][]byte // reads fetched after buf, in order (readahead.go)
	fetching bool
	eos      bool            // the fetched bytes end at the sealed end
	succs    []api.Successor // with eos: the successors
}

// fetchResult is what a segment's fetch goroutine delivers.
type fetchResult struct {
	seg  string
	gen  uint64
	off  int64  // where data begins
	data []byte // segment bytes (a fresh slice)
	eos  bool   // data ends at the sealed end; succs follow
	// succs, with eos: the successors (empty: the stream is sealed).
	succs []api.Successor
	// trunc: seg was truncated or deleted past the reader; drop holds the
	// segments to stop reading, add the head-cut segments replacing them.
	trunc *truncMove
	err   error // a failure that retrying will not mend
}

type truncMove struct {
	drop []string
	add  api.StreamCut
}

// NewReader returns a Reader of scope/stream starting at FromHead (the
// default), FromTail or FromCut. It asks the controller (and for FromTail
// the nodes) where to start, blocking until they answer or ctx is done,
// without retrying: an unknown stream, a cut of another stream or an
// unreachable controller is an error. ctx bounds only the start, not the
// Reader's life. The Reader must be closed.
func (c *Client) NewReader(ctx context.Context, scope, stream string, opts ...ReaderOption) (*Reader, error) {
	cfg := readerConfig{start: startHead, readBuffer: DefaultReadBuffer, tailWait: tailWait}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.readBuffer <= 0 || cfg.readBuffer > protocol.MaxFrameSize/2 {
		return nil, fmt.Errorf("client: read buffer %d: must be in [1, %d]", cfg.readBuffer, protocol.MaxFrameSize/2)
	}
	if _, err := c.ctl.GetStream(ctx, scope, stream); err != nil {
		return nil, fmt.Errorf("client: reader of %s/%s: %w", scope, stream, err)
	}
	hc, _ := c.ctl.(headCutter)
	r := &Reader{c: c, scope: scope, stream: stream, cfg: cfg, hasHead: hc,
		results: make(chan fetchResult),
		busy:    make(chan struct{}, 1),
		cmds:    make(chan func()),
		segs:    map[string]*segRead{},
	}
	start, err := r.startCut(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: reader of %s/%s: %w", scope, stream, err)
	}
	if cfg.end != nil {
		if err := checkEndCut(ctx, c.ctl, scope, stream, start, cfg.end); err != nil {
			return nil, fmt.Errorf("client: reader of %s/%s: %w", scope, stream, err)
		}
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.mu.tracker = newSegmentTracker(start)
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	for _, s := range r.mu.tracker.segments() {
		r.segs[s] = &segRead{name: s, bufOff: start[s]}
	}
	return r, nil
}

// startCut returns where the reader begins.
func (r *Reader) startCut(ctx context.Context) (api.StreamCut, error) {
	switch r.cfg.start {
	case startCut:
		cut := r.cfg.cut
		if len(cut) == 0 {
			return nil, fmt.Errorf("%w: empty stream cut", api.ErrInvalid)
		}
		if err := cut.Validate(); err != nil {
			return nil, err
		}
		for s := range cut {
			q, _ := protocol.ParseSegmentName(s)
			if q.Scope != r.scope || q.Stream != r.stream {
				return nil, fmt.Errorf("%w: stream cut: %s is not a segment of %s/%s", api.ErrInvalid, s, r.scope, r.stream)
			}
		}
		if v, ok := r.c.ctl.(interface {
			SegmentsBetween(ctx context.Context, scope, stream string, from, to api.StreamCut) ([]api.SegmentRange, error)
		}); ok {
			// The controller checks that the cut is consistent.
			if _, err := v.SegmentsBetween(ctx, r.scope, r.stream, cut, nil); err != nil {
				return nil, err
			}
		}
		out := make(api.StreamCut, len(cut))
		for s, o := range cut {
			out[s] = o
		}
		return out, nil
	case startTail:
		segs, err := r.c.ctl.CurrentSegments(ctx, r.scope, r.stream)
		if err != nil {
			return nil, err
		}
		cut := api.StreamCut{}
		for _, s := range segs {
			conn, err := r.c.SegmentConn(ctx, s.Segment)
			if err != nil {
				return nil, err
			}
			info, err := conn.GetSegmentInfo(ctx, s.Segment)
			if err != nil {
				r.c.Invalidate(s.Segment, conn, err)
				return nil, err
			}
			cut[s.Segment] = info.Length
		}
		return cut, nil
	default:
		return r.headCut(ctx)
	}
}

func (r *Reader) headCut(ctx context.Context) (api.StreamCut, error) {
	if r.hasHead == nil {
		return nil, errNoHeadCut
	}
	return r.hasHead.HeadCut(ctx, r.scope, r.stream)
}

// ReadNext returns the next event. It blocks until one is there (at the
// tail: until one is appended), the stream is sealed and read to its end
// (ErrEndOfStream), every event before the end cut was returned (ToCut:
// ErrEndOfSlice, returned again on every later call), ctx is done
// (ctx.Err(); nothing is lost: the next call continues where this one
// stood), or the Reader is closed (ErrClosed).
// Failures that may pass are retried inside without end; ReadNext returns
// an error otherwise (say, the stream was deleted, or the reader stands
// inside an event of a segment because it started from a bad cut: an
// error wrapping protocol.ErrNotEventBoundary, returned again on every
// call; the segment itself and other readers are unaffected). A call while
// another is running returns ErrReaderBusy.
func (r *Reader) ReadNext(ctx context.Context) (Event, error) {
	// reading tells concurrent ReadNext calls apart from the group's
	// heartbeat, which takes busy for a moment to change the segment set
	// (runOwner): ReadNext waits for that, but refuses a second caller.
	if !r.reading.CompareAndSwap(false, true) {
		return Event{}, ErrReaderBusy
	}
	defer r.reading.Store(false)
	select {
	case r.busy <- struct{}{}:
	case <-ctx.Done():
		return Event{}, ctx.Err()
	case <-r.ctx.Done():
		return Event{}, ErrClosed
	}
	defer func() { <-r.busy }()
	for {
		if r.isClosed() {
			return Event{}, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		// Take in what has arrived, so segments interleave by
		// availability rather than one draining first.
		for more := true; more; {
			select {
			case res := <-r.results:
				if err := r.apply(res); err != nil {
					return Event{}, err
				}
			case f := <-r.cmds:
				f()
			default:
				more = false
			}
		}
		if ev, ok := r.takeCheckpoint(); ok {
			return ev, nil
		}
		if ev, ok, err := r.nextBuffered(); ok || err != nil {
			return ev, err
		}
		r.mu.Lock()
		done := r.mu.tracker.done() && (!r.cfg.group || r.mu.groupDone)
		r.mu.Unlock()
		if done {
			return Event{}, r.endErr()
		}
		r.startFetches()
		select {
		case res := <-r.results:
			if err := r.apply(res); err != nil {
				return Event{}, err
			}
		case f := <-r.cmds:
			f()
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-r.ctx.Done():
			return Event{}, ErrClosed
		}
	}
}

// nextBuffered returns an event already fetched, round robin over the
// segments, and ends the segments that are read to their end.
func (r *Reader) nextBuffered() (Event, bool, error) {
	r.mu.Lock()
	order := r.mu.tracker.segments()
	r.mu.Unlock()
	n := len(order)
	for i := range n {
		sr := r.segs[order[(r.rr+i)%n]]
		if sr == nil {
			continue
		}
		sr.stitch()
		if ended, err := r.atEndCut(sr); err != nil {
			return Event{}, false, err
		} else if ended {
			continue
		}
		ev, rest, err := protocol.NextEvent(sr.buf)
		switch {
		case err == nil:
			off := sr.bufOff
			next := off + protocol.EventHeaderSize + int64(len(ev))
			if err := r.eventPastEnd(sr, next); err != nil {
				return Event{}, false, err
			}
			sr.buf, sr.bufOff = rest, next
			if len(rest) == 0 {
				sr.buf = nil
			}
			r.rr = (r.rr + i + 1) % n
			r.maybeFetch(sr)
			r.mu.Lock()
			r.mu.tracker.advance(sr.name, next)
			r.mu.pos = r.mu.pos.advance(sr.name, next)
			pos := r.mu.pos
			r.mu.Unlock()
			return Event{Data: ev, Segment: sr.name, Offset: off, Position: Position{pos}}, true, nil
		case errors.Is(err, io.EOF):
			if sr.eos {
				r.end(sr)
			}
		case errors.Is(err, io.ErrUnexpectedEOF):
			if sr.eos {
				return Event{}, false, fmt.Errorf("client: segment %s ends inside an event at offset %d", sr.name, sr.bufOff)
			}
		default:
			return Event{}, false, fmt.Errorf("client: segment %s at offset %d: %w", sr.name, sr.bufOff, err)
		}
	}
	return Event{}, false, nil
}

// end records that sr has been read to its end and starts the successors
// that may start now.
func (r *Reader) end(sr *segRead) {
	delete(r.segs, sr.name)
	r.mu.Lock()
	if r.cfg.group {
		// The group starts the successors (after all predecessors, which
		// other readers may hold).
		r.mu.tracker.replace([]string{sr.name}, nil)
		r.mu.groupEnded[sr.name] = EndedSegment{End: sr.bufOff, Successors: sr.succs}
		r.mu.pos = &posNode{full: r.mu.tracker.cut()}
		r.mu.Unlock()
		return
	}
	started := r.mu.tracker.end(sr.name, sr.bufOff, sr.succs)
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	r.mu.Unlock()
	for _, s := range started {
		r.segs[s] = &segRead{name: s}
	}
}

// startFetches starts a fetch for every segment that needs one.
func (r *Reader) startFetches() {
	for _, sr := range r.segs {
		r.maybeFetch(sr)
	}
}

// maybeFetch starts a fetch for sr unless it holds readBuffer bytes or
// more, is at its end or has one in flight. Called also right after
// an event is taken, so the next read is on its way while the caller
// handles the events buffered (readahead.go).
func (r *Reader) maybeFetch(sr *segRead) {
	if sr.fetching || sr.eos || r.fetchPastEnd(sr, sr.fetchOff()) {
		return
	}
	held := sr.buffered()
	if _, _, err := protocol.NextEvent(sr.buf); (err == nil || len(sr.pend) > 0) && held >= r.cfg.readBuffer {
		return
	}
	max := r.cfg.readBuffer
	if len(sr.pend) == 0 && len(sr.buf) >= protocol.EventHeaderSize {
		// A partial event: ask for at least the rest of it.
		need := protocol.EventHeaderSize + int(binary.BigEndian.Uint32(sr.buf))
		max = maxInt(max, need-len(sr.buf))
	}
	sr.fetching = true
	r.gen++
	sr.gen = r.gen
	r.wg.Add(1)
	// Holding no part of an event, the reader stands where one starts: the
	// node checks that, so that a position inside an event is a clear
	// error instead of garbage parsed as events.
	go r.fetch(sr.name, sr.gen, sr.fetchOff(), int32(max), held == 0)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// apply takes in a fetch's result.
func (r *Reader) apply(res fetchResult) error {
	sr := r.segs[res.seg]
	if sr == nil || sr.gen != res.gen {
		return nil // the segment was dropped meanwhile
	}
	sr.fetching = false
	switch {
	case res.err != nil:
		return res.err
	case res.trunc != nil:
		r.truncate(sr, res.trunc)
		return nil
	}
	if len(res.data) > 0 {
		sr.pend = append(sr.pend, res.data)
	}
	if res.eos {
		sr.eos, sr.succs = true, res.succs
	}
	return nil
}

// truncate drops the segments truncation deleted and reads the head cut's
// segments that replace them. For a bounded reader relocate stops at the
// end cut: a segment of it whose head lies at or past its end offset, or
// that truncation deleted, comes back at its end offset (and so ends at
// once), and the segments after it are never added.
func (r *Reader) truncate(sr *segRead, m *truncMove) {
	info := Truncation{Segment: sr.name, Offset: sr.bufOff, Head: m.add}
	if r.cfg.group {
		// The group moves the reader, through its state (group_member.go).
		r.groupTruncate(sr.name, m)
		if r.cfg.onTrunc != nil {
			r.cfg.onTrunc(info)
		}
		return
	}
	r.mu.Lock()
	held := r.mu.tracker.cut()
	var drop []string
	for _, s := range m.drop {
		if _, ok := held[s]; ok {
			drop = append(drop, s)
		}
	}
	add := api.StreamCut{}
	for s, off := range m.add {
		if _, ok := held[s]; !ok || off > held[s] {
			add[s] = off
		}
	}
	r.mu.tracker.replace(drop, add)
	r.mu.pos = &posNode{full: r.mu.tracker.cut()}
	r.mu.Unlock()
	for _, s := range drop {
		delete(r.segs, s)
	}
	for s, off := range add {
		r.segs[s] = &segRead{name: s, bufOff: off}
	}
	if r.cfg.onTrunc != nil {
		r.cfg.onTrunc(info)
	}
}

// fetch reads seg at off once (retrying what may pass) and delivers the
// result; at the end of a sealed segment it also finds the successors, and
// on truncation where to go. It runs until it delivers or the Reader
// closes.
func (r *Reader) fetch(seg string, gen uint64, off int64, max int32, atEvent bool) {
	defer r.wg.Done()
	res := fetchResult{seg: seg, gen: gen, off: off}
	bo := retry.NewJittered(fetchRetryMin, fetchRetryMax)
	retries := 0
	// handed: the connection's reader gave the data straight to a
	// ReadNext that was waiting (handOver), so this goroutine has
	// nothing left to deliver.
	var handed atomic.Bool
	handOver := func(read *protocol.SegmentRead, err error) {
		if err != nil || read.EndOfSegment || len(read.Data) == 0 {
			return // this goroutine decides what follows
		}
		select {
		case r.results <- fetchResult{seg: seg, gen: gen, off: off, data: joinData(read.Data)}:
			handed.Store(true)
		default: // ReadNext is not waiting: this goroutine delivers
		}
	}
	for {
		read, err := r.readOnce(seg, off, max, atEvent, handOver)
		if handed.Load() {
			return
		}
		switch {
		case err == nil && read.EndOfSegment:
			res.data, res.eos = joinData(read.Data), true
			res.succs, err = r.successors(seg)
		case err == nil && len(read.Data) == 0:
			continue // at the tail after a full wait: ask again (the wait paces it)
		case err == nil:
			res.data = joinData(read.Data)
		case errors.Is(err, protocol.ErrSegmentTruncated) || errors.Is(err, protocol.ErrNoSuchSegment):
			res.trunc, err = r.relocate(seg, off)
		}
		if err == nil {
			break
		}
		if r.ctx.Err() != nil {
			return
		}
		if !readRetriable(err) {
			res.err = fmt.Errorf("client: read %s at %d: %w", seg, off, err)
			break
		}
		if !errors.Is(err, errScaleUnpublished) && !errors.Is(err, errHeadUnpublished) {
			// (Those two are the controller catching up, not failures.)
			r.c.retrying(retries+1, fmt.Errorf("client: read %s at %d: %w", seg, off, err))
		}
		retries++
		if retry.Sleep(r.ctx, bo.NextBackOff()) != nil {
			return
		}
	}
	select {
	case r.results <- res:
	case <-r.ctx.Done():
	}
}

// joinData returns the bytes of a read as one slice: the decoder hands
// them over as one fresh slice, so normally without a copy.
func joinData(d [][]byte) []byte {
	switch len(d) {
	case 0:
		return nil
	case 1:
		return d[0]
	}
	var n int
	for _, b := range d {
		n += len(b)
	}
	out := make([]byte, 0, n)
	for _, b := range d {
		out = append(out, b...)
	}
	return out
}

// readOnce reads seg through the Client's pool, dropping the cached
// endpoint when the node says it is not the segment's.
//
// notify, if not nil, gets the answer first, in the connection's reader
// goroutine (segclient's ReadSegmentNotify).
func (r *Reader) readOnce(seg string, off int64, max int32, atEvent bool, notify func(*protocol.SegmentRead, error)) (*protocol.SegmentRead, error) {
	conn, err := r.c.SegmentConn(r.ctx, seg)
	if err != nil {
		return nil, err
	}
	res, err := conn.ReadSegmentNotify(r.ctx, seg, off, max, r.cfg.tailWait, atEvent, notify)
	if err != nil {
		r.c.Invalidate(seg, conn, err)
	}
	return res, err
}

// successors returns the successors of the sealed segment seg. A segment
// sealed by a scale whose epoch is not published yet has none for a
// moment: unless the stream is sealed, that is retried.
func (r *Reader) successors(seg string) ([]api.Successor, error) {
	succ, err := r.c.ctl.Successors(r.ctx, seg)
	if err != nil || len(succ) > 0 {
		return succ, err
	}
	info, err := r.c.ctl.GetStream(r.ctx, r.scope, r.stream)
	if err != nil {
		return nil, err
	}
	if info.Sealed {
		return []api.Successor{}, nil
	}
	return nil, errScaleUnpublished
}

var errScaleUnpublished = errors.New("client: segment sealed before its scale was published")

// relocate finds where a reader that stood in seg at off continues after
// truncation: seg itself further on if it is in the head cut, else the
// head cut's segments that descend from seg (found through the successor
// graph), dropping every predecessor met on the way (truncation deleted
// them too). Before the controller has published the head that the
// node's truncation belongs to, there is nowhere to go yet: retried.
func (r *Reader) relocate(seg string, off int64) (*truncMove, error) {
	head, err := r.headCut(r.ctx)
	if err != nil {
		return nil, err
	}
	if h, ok := head[seg]; ok {
		if h > off {
			return &truncMove{drop: []string{seg}, add: api.StreamCut{seg: r.clampToEnd(seg, h)}}, nil
		}
		return nil, errHeadUnpublished
	}
	m := &truncMove{add: api.StreamCut{}}
	seen := map[string]bool{seg: true}
	queue := []string{seg}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if h, ok := head[s]; ok {
			m.add[s] = r.clampToEnd(s, h)
			continue
		}
		m.drop = append(m.drop, s)
		if e, ok := r.cfg.end[s]; ok {
			// A segment of the end cut that truncation deleted: the head
			// cut lies after the end cut in its key range, so nothing
			// before the end cut is left there. It stands at its end
			// offset, where the reader ends it; its successors, after
			// the end cut, are not followed.
			m.add[s] = e
			continue
		}
		succ, err := r.c.ctl.Successors(r.ctx, s)
		if err != nil {
			return nil, err
		}
		for _, x := range succ {
			for _, n := range append([]string{x.Segment.Segment}, x.Predecessors...) {
				if !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
	}
	if len(m.add) == 0 {
		return nil, errHeadUnpublished
	}
	return m, nil
}

// clampToEnd is where a truncation's head offset h in seg leaves a
// bounded reader: h, or seg's end-cut offset if h lies beyond it (nothing
// before the end cut is left in seg: the reader ends it there).
func (r *Reader) clampToEnd(seg string, h int64) int64 {
	if e, ok := r.cfg.end[seg]; ok && h > e {
		return e
	}
	return h
}

// errNoHeadCut: the Client's Controller cannot say where the stream's head
// is (FromHead and truncation need it).
var errNoHeadCut = errors.New("client: the controller client has no HeadCut: start the reader FromTail or FromCut")

var errHeadUnpublished = errors.New("client: segment truncated before the stream's head was published")

// readRetriable reports whether a read's failure may pass by itself.
func readRetriable(err error) bool {
	switch {
	case errors.Is(err, ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, errNoHeadCut):
		return false
	case NeedsRelocate(err), errors.Is(err, errScaleUnpublished), errors.Is(err, errHeadUnpublished):
		return true
	case errors.Is(err, ctlclient.ErrUnavailable), errors.Is(err, ctlclient.ErrUnreachable):
		return true
	}
	var pe *protocol.Error
	if errors.As(err, &pe) || errors.Is(err, ctlclient.ErrNotFound) || errors.Is(err, ctlclient.ErrInvalid) {
		return false // the node or the controller said no
	}
	return true // a dial failure, a timeout: the server may come back
}

// Position returns the reader's position: the stream cut just after the
// last event ReadNext returned (every segment the reader holds at the
// offset of its next event, 0 for successors not started). A new Reader
// FromCut(Position()) continues with the next event: nothing lost, nothing
// twice.
func (r *Reader) Position() api.StreamCut {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.tracker.cut()
}

func (r *Reader) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.closed
}

// Close stops the reader's reads and waits for its goroutines, which stop
// at once (their calls run on a context Close cancels), also when a node
// does not answer. A running ReadNext returns ErrClosed. Closing twice is
// not an error. It does not close the Client.
func (r *Reader) Close() error {
	r.mu.Lock()
	r.mu.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}

// Retries of a fetch wait from fetchRetryMin growing up to fetchRetryMax,
// jittered (retry.NewJittered).
const (
	fetchRetryMin = 20 * time.Millisecond
	fetchRetryMax = 2 * time.Second
)
