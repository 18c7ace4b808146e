package tiering

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// After a tier-2 failure the next pass waits minBackoff, doubling up to
// maxBackoff while passes keep failing.
const (
	minBackoff = time.Second
	maxBackoff = 10 * time.Second
)

// Config configures a container's storage writer.
type Config struct {
	Container *container.Container
	Store     tier2.Storage
	Policy    Policy
	// Compression of the chunks (seqfile.None by default; seqfile.Block
	// for zlib blocks).
	Compression seqfile.Compression
	// PartBytes: an uncompressed chunk is recorded with a mark (a record
	// boundary, container.ChunkMark) after about every PartBytes of
	// events, so that reads load a part of it, not the whole file
	// (default DefaultPartBytes).
	PartBytes int64
	// Logger receives the writer's failures (discarded if nil).
	Logger logrus.FieldLogger
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Tick is the time between passes (default: MaxLag/8, at most 1 s).
	Tick time.Duration
	// NoRecoveryRecords: write no recovery records (recovery.go). Only
	// for measuring what they cost: without them, a node that loses its
	// disk loses its containers.
	NoRecoveryRecords bool
	// CheckpointEvery bounds how often a pass that tiered something takes
	// a container checkpoint, which lets the log drop what was tiered
	// (default 5 s; Flush always takes one).
	CheckpointEvery time.Duration
}

// Stats are a storage writer's counters.
type Stats struct {
	TieredBytes int64  // bytes put in tier 2 by this writer
	Chunks      int64  // chunks written
	Errors      int64  // tier-2 failures
	LastError   string // the latest failure, "" once a pass succeeds
	Stalled     bool   // the latest pass failed: tiering waits for tier 2
	Untiered    int64  // the container's bytes not yet in tier 2
	// Lag is the age of the oldest event not yet in tier 2.
	Lag time.Duration
}

// Writer is a container's storage writer: a goroutine that runs passes
// (Pass) on a timer and when kicked.
type Writer struct {
	cfg  Config
	c    *container.Container
	l    logrus.FieldLogger
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	passMu sync.Mutex // one pass at a time
	// removeBudget: a pass's time for removing deleted segments' files
	// (removal.go).
	removeBudget time.Duration
	known        map[string][]int64 // chunks of each segment as of the last pass
	lastCkpt     time.Time
	// The recovery records this writer wrote (recovery.go): whether any,
	// the sequence number of the last one and the container's MetaChanges
	// it held.
	recorded   bool
	recSeq     uint64
	recChanges uint64
	recListed  bool // tier 2's records were listed (the first record)
	// handoverGone: the hand-over of this epoch, if tier 2 has one, was
	// removed after this writer's first record (record).
	handoverGone bool
	recOlder     []string // records kept in tier 2, oldest first; the newest is this writer's last

	mu struct {
		sync.Mutex
		stats Stats
	}
}

// New makes a storage writer; Start runs it.
func New(cfg Config) *Writer {
	cfg.Policy = cfg.Policy.WithDefaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tick <= 0 {
		cfg.Tick = min(time.Second, cfg.Policy.MaxLag/8)
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = 5 * time.Second
	}
	if cfg.PartBytes <= 0 {
		cfg.PartBytes = DefaultPartBytes
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	return &Writer{
		cfg: cfg, c: cfg.Container, l: cfg.Logger.WithField("container", cfg.Container.ID()),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		removeBudget: removeBudget(cfg.Tick),
	}
}

// Start runs passes until Stop: first a reconcile of tier 2 with the
// container's records, then a pass every Tick or Kick.
func (w *Writer) Start() {
	go w.loop()
}

// Stop ends the goroutine and waits for a pass in progress.
func (w *Writer) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Kick asks for a pass now.
func (w *Writer) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-w.stop
		cancel()
	}()
	wait := time.Duration(0)
	bo := retry.NewBackoff(minBackoff, maxBackoff)
	for {
		t := time.NewTimer(wait)
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-w.kick:
			t.Stop()
		case <-t.C:
		}
		if err := w.Pass(ctx); err != nil && ctx.Err() == nil {
			wait = bo.NextBackOff()
			continue
		}
		wait = w.cfg.Tick
		bo.Reset()
	}
}

// Pass reconciles tier 2 with the container's records (on the first
// pass), removes the chunks of deleted and truncated segments, and tiers
// the segments the policy picks. It stops at the first tier-2 failure,
// which it records in Stats and returns.
func (w *Writer) Pass(ctx context.Context) error {
	w.passMu.Lock()
	defer w.passMu.Unlock()
	err := w.pass(ctx, false)
	w.note(err)
	return err
}

// Flush tiers every durable byte of every segment now (transactions
// excepted) and takes a checkpoint, so the log can drop all of it.
func (w *Writer) Flush(ctx context.Context) error {
	w.passMu.Lock()
	defer w.passMu.Unlock()
	err := w.pass(ctx, true)
	if err == nil {
		err = w.c.Checkpoint()
		w.lastCkpt = w.cfg.Now()
	}
	w.note(err)
	return err
}

func (w *Writer) note(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.mu.stats.Errors++
		if !w.mu.stats.Stalled {
			w.l.WithError(err).Warn("tiering: tier 2 failed; appends go on into the log until its bound, tiering retries")
		}
		w.mu.stats.LastError, w.mu.stats.Stalled = err.Error(), true
		return
	}
	if w.mu.stats.Stalled {
		w.l.Info("tiering: tier 2 is back; catching up")
	}
	w.mu.stats.LastError, w.mu.stats.Stalled = "", false
}

func (w *Writer) pass(ctx context.Context, all bool) error {
	// What this pass removes from tier 2 is decided from the container as
	// it is before the pass's first record: that record, a later
	// snapshot, then names nothing removed, whatever is deleted or
	// truncated while it is written (only this writer adds chunks).
	var lists map[string][]int64
	if w.known == nil {
		var err error
		if lists, err = w.chunkLists(); err != nil {
			return err
		}
	}
	gone, states := w.c.Gone(), w.c.TierStates()
	if err := w.record(); err != nil {
		return err
	}
	if lists != nil {
		if err := w.reconcile(lists); err != nil {
			return err
		}
	}
	// Deleted segments' chunks go first, paced (removal.go). A segment
	// whose removal is not finished is neither tiered nor trimmed in this
	// pass: a segment made again under its name would write its chunks
	// into the directory being emptied.
	rm := w.newRemoval(ctx, all)
	var pending map[string]bool
	for _, name := range gone {
		done, err := w.removeSegment(name, rm)
		if err != nil {
			return err
		}
		if !done {
			if pending == nil {
				pending = map[string]bool{}
			}
			pending[name] = true
		}
	}
	if pending != nil {
		states = slices.DeleteFunc(states, func(ts container.TierState) bool { return pending[ts.Name] })
	}
	if err := w.removeDropped(states); err != nil {
		return err
	}
	var todo []Decision
	if all {
		for _, ts := range states {
			if !ts.Transaction && ts.Untiered > 0 {
				todo = append(todo, Decision{ts.Name, ReasonFlush})
			}
		}
	} else {
		todo = Decide(w.cfg.Now(), w.cfg.Policy, states, w.c.Untiered())
	}
	tiered := false
	for _, d := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := w.tierSegment(d.Segment, all)
		if err != nil {
			return err
		}
		tiered = tiered || n > 0
	}
	if err := w.record(); err != nil {
		return err
	}
	if tiered && !all && w.cfg.Now().Sub(w.lastCkpt) >= w.cfg.CheckpointEvery {
		w.lastCkpt = w.cfg.Now()
		if err := w.c.Checkpoint(); err != nil {
			return err
		}
	}
	return nil
}

// tierSegment moves the segment's durable untiered bytes, as they are
// now, into chunks of at most ChunkBytes: paced by the backend (see
// tier2.Paced) unless all (Flush) or the segment is behind its lag bound.
func (w *Writer) tierSegment(name string, all bool) (int64, error) {
	ts, err := w.c.TierState(name)
	if errors.Is(err, protocol.ErrNoSuchSegment) {
		return 0, nil // deleted meanwhile
	}
	if err != nil {
		return 0, err
	}
	unpaced := all || w.behind(ts)
	var done int64
	for done < ts.Untiered {
		n, err := w.writeChunk(name, unpaced)
		if err != nil || n == 0 {
			return done, err
		}
		done += n
	}
	return done, nil
}

// A segment deleted while its chunk is written gives the chunk up: the
// writer looks the segment up again after every goneCheckBytes it took,
// and a chunk of a deleted segment is abandoned (tier2.Abort, then
// removed) rather than finished. A stream deleted right after a burst
// otherwise had each container finish a chunk of up to ChunkBytes,
// unpaced (its segments behind their bound) and fsynced, of data nobody
// would read: about 200 ms in which the log's syncs took 3-16 ms, against
// 1.5-2 ms after (a server trace; docs/BENCHMARKS.md).
const goneCheckBytes = 1 << 20

// errSegmentGone: the segment was deleted while its chunk was written.
var errSegmentGone = errors.New("tiering: the segment was deleted")

// writeChunk writes one chunk from the segment's first untiered offset
// and records it; it returns the bytes tiered.
func (w *Writer) writeChunk(name string, unpaced bool) (int64, error) {
	offset, blocks, err := w.c.UntieredExtents(name, w.cfg.Policy.ChunkBytes)
	if err != nil || len(blocks) == 0 {
		if errors.Is(err, protocol.ErrNoSuchSegment) {
			err = nil
		}
		return 0, err
	}
	// One block at a time, read back from the log only when it is
	// written, so that a chunk's writer holds one block, not a chunk's
	// worth; the bound is on the file: the blocks whose records would take
	// it past are left for the next chunk (fit.go).
	fit := newChunkFit(w.cfg.Policy.ChunkBytes)
	var size int64
	for _, b := range blocks {
		size += b.Length
	}
	var unchecked int64 // bytes taken since the segment was last seen
	next := func() ([]byte, error) {
		if fit.n == len(blocks) {
			return nil, nil
		}
		if unchecked >= goneCheckBytes {
			unchecked = 0
			if _, err := w.c.TierState(name); errors.Is(err, protocol.ErrNoSuchSegment) {
				return nil, errSegmentGone
			}
		}
		data, err := blocks[fit.n].Data()
		if err != nil || !fit.take(data) {
			return nil, err
		}
		unchecked += int64(len(data))
		return data, nil
	}
	q, err := protocol.ParseSegmentName(name)
	if err != nil {
		return 0, err
	}
	tmp := tier2.TempChunkPath(q.Scope, q.Stream, q.Number, offset)
	final := tier2.ChunkPath(q.Scope, q.Stream, q.Number, offset)
	f, err := w.cfg.Store.Create(tmp)
	if errors.Is(err, tier2.ErrExist) {
		// Left by a failed attempt: nothing refers to it.
		if err = w.cfg.Store.Remove(tmp); err == nil {
			f, err = w.cfg.Store.Create(tmp)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("tiering: create %s: %w", tmp, err)
	}
	if p, ok := f.(tier2.Paced); ok && unpaced {
		p.Unpaced()
	}
	length, marks, err := writeEvents(f, offset, next, size, w.cfg.Compression, w.cfg.PartBytes)
	if err != nil {
		tier2.Abort(f) // it is removed: nothing of it need be durable
	} else if cerr := f.Close(); cerr != nil {
		err = fmt.Errorf("tiering: close %s: %w", tmp, cerr)
	}
	if err != nil {
		w.cfg.Store.Remove(tmp)
		if _, serr := w.c.TierState(name); errors.Is(serr, protocol.ErrNoSuchSegment) {
			return 0, nil // deleted meanwhile: its blocks may be gone from the log
		}
		return 0, err
	}
	if err := w.cfg.Store.Rename(tmp, final); err != nil {
		return 0, fmt.Errorf("tiering: rename %s into place: %w", tmp, err)
	}
	if err := w.c.CommitChunk(name, offset, length, marks); err != nil {
		// The file is an orphan; the next reconcile removes it, or the
		// removal of the deleted segment of that name.
		if errors.Is(err, container.ErrRemovalPending) {
			return 0, nil // made again mid-pass: tiered once the removal is done
		}
		return 0, err
	}
	w.known[name] = append(w.known[name], offset)
	w.mu.Lock()
	w.mu.stats.TieredBytes += length
	w.mu.stats.Chunks++
	w.mu.Unlock()
	return length, nil
}

// writeEvents writes the blocks of framed events next returns (until it
// returns none), starting at offset, as one SequenceFile and returns the
// bytes of events written and, for an uncompressed file, its marks: the
// first record, then the first record boundary after every partBytes of
// events, then the file's end. size is about the blocks' bytes.
func writeEvents(f tier2.Writer, offset int64, next func() ([]byte, error), size int64, comp seqfile.Compression, partBytes int64) (int64, []container.ChunkMark, error) {
	// The buffer fits the chunk (up to 1 MiB): with many segments most
	// chunks are small, and a 1 MiB buffer for each made the garbage
	// collector the node's largest cost (docs/BENCHMARKS.md, "Many
	// segments").
	bw := bufio.NewWriterSize(f, int(min(size+4<<10, 1<<20)))
	sw, err := seqfile.NewWriter(bw, seqfile.WriterOptions{
		KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable, Compression: comp,
	})
	if err != nil {
		return 0, nil, err
	}
	// Only uncompressed records can be compacted in place, part by part.
	indexed := comp == seqfile.None
	var marks []container.ChunkMark
	mark := func(at int64) {
		if pos, ok := sw.Boundary(); ok {
			marks = append(marks, container.ChunkMark{Offset: at, Pos: pos})
		}
	}
	if indexed {
		mark(offset)
	}
	pos := offset
	for {
		b, err := next()
		if err != nil {
			return 0, nil, fmt.Errorf("tiering: %w", err)
		}
		if b == nil {
			break
		}
		for rest := b; len(rest) > 0; {
			ev, r, err := protocol.NextEvent(rest)
			if err != nil {
				return 0, nil, fmt.Errorf("tiering: block at offset %d: %w", pos, err)
			}
			if indexed && pos-marks[len(marks)-1].Offset >= partBytes {
				mark(pos)
			}
			if err := sw.AppendEvent(pos, ev); err != nil {
				return 0, nil, fmt.Errorf("tiering: write chunk: %w", err)
			}
			pos += int64(len(rest) - len(r))
			rest = r
		}
	}
	if err := sw.Close(); err != nil {
		return 0, nil, fmt.Errorf("tiering: write chunk: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, nil, fmt.Errorf("tiering: write chunk: %w", err)
	}
	if !indexed {
		return pos - offset, nil, nil
	}
	mark(pos)
	return pos - offset, marks, nil
}

// chunkLists returns the chunks the container records, by segment
// (transactions, which are never tiered, left out): what reconcile
// keeps.
func (w *Writer) chunkLists() (map[string][]int64, error) {
	lists := map[string][]int64{}
	for _, ts := range w.c.TierStates() {
		if ts.Transaction {
			continue
		}
		chunks, err := w.c.Chunks(ts.Name)
		if errors.Is(err, protocol.ErrNoSuchSegment) {
			continue // deleted meanwhile: Gone has it
		}
		if err != nil {
			return nil, err
		}
		lists[ts.Name] = chunks
	}
	return lists, nil
}

// reconcile makes tier 2 hold exactly the chunks of lists (chunkLists,
// taken before the pass's first record, so that no record names a chunk
// removed here): temporaries and chunks with no record (a crash between
// the rename and the record, or between a truncation and the removal)
// are removed. A recorded chunk that is missing is reported: its bytes
// are lost from tier 2 and reads of them fail.
func (w *Writer) reconcile(lists map[string][]int64) error {
	known := map[string][]int64{}
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		chunks := lists[name]
		dir, err := segmentDir(name)
		if err != nil {
			return err
		}
		entries, err := w.cfg.Store.List(dir)
		if errors.Is(err, tier2.ErrNotExist) {
			entries, err = nil, nil
		}
		if err != nil {
			return fmt.Errorf("tiering: list %s: %w", dir, err)
		}
		have := map[int64]bool{}
		for _, e := range entries {
			off, ok := tier2.ParseChunkName(e.Name)
			if ok && slices.Contains(chunks, off) {
				have[off] = true
				continue
			}
			if ok || tier2.IsTemp(e.Name) {
				if err := w.cfg.Store.Remove(path.Join(dir, e.Name)); err != nil && !errors.Is(err, tier2.ErrNotExist) {
					return fmt.Errorf("tiering: remove orphan %s/%s: %w", dir, e.Name, err)
				}
				w.l.WithField("file", dir+"/"+e.Name).Info("tiering: removed a chunk no record refers to")
			}
		}
		for _, off := range chunks {
			if !have[off] {
				w.l.WithField("file", dir+"/"+tier2.ChunkName(off)).Error("tiering: a recorded chunk is missing from tier 2")
			}
		}
		known[name] = chunks
	}
	w.known = known
	return nil
}

// removeDropped removes the files of chunks that truncation dropped: the
// known chunks below a segment's first chunk now (all of them if it has
// none left).
func (w *Writer) removeDropped(states []container.TierState) error {
	for _, ts := range states {
		prev := w.known[ts.Name]
		n := 0
		for n < len(prev) && (ts.FirstChunk < 0 || prev[n] < ts.FirstChunk) {
			p, err := chunkPath(ts.Name, prev[n])
			if err != nil {
				return err
			}
			if err := w.cfg.Store.Remove(p); err != nil && !errors.Is(err, tier2.ErrNotExist) {
				return fmt.Errorf("tiering: remove truncated chunk %s: %w", p, err)
			}
			n++
		}
		if n > 0 {
			w.known[ts.Name] = prev[n:]
		}
	}
	return nil
}

// Stats returns the writer's counters, with the container's untiered
// bytes and lag as of now.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	st := w.mu.stats
	w.mu.Unlock()
	st.Untiered = w.c.Untiered()
	now := w.cfg.Now()
	for _, ts := range w.c.TierStates() {
		if !ts.Transaction && !ts.Oldest.IsZero() {
			st.Lag = max(st.Lag, now.Sub(ts.Oldest))
		}
	}
	return st
}

// LastError is the latest tier-2 failure while tiering is stalled, "" if
// it is not.
func (w *Writer) LastError() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.stats.LastError
}
