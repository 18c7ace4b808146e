package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/rates"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

// DefaultCheckpointBytes is how many bytes of log records may follow the
// last checkpoint before the next one is taken.
const DefaultCheckpointBytes = 64 << 20

// MaxAttributes and MaxWriters bound the attributes and the writers'
// event numbers kept for one segment, so that clients cannot grow a
// checkpoint without bound.
const (
	MaxAttributes = 1 << 16
	MaxWriters    = 1 << 16
)

// Config configures a container.
type Config struct {
	// ID is the container's number, used in messages and cache keys.
	ID int
	// Dir holds the container's log ("wal/") and checkpoints.
	Dir string
	// FS is the filesystem; vfs.Default if nil.
	FS vfs.FS
	// WALFileSize is the log's roll threshold (wal.DefaultFileSize if 0).
	WALFileSize int64
	// WALPreallocate makes the log zero-fill its next file ahead of time
	// and sync appends with fdatasync (wal.Options.Preallocate).
	WALPreallocate bool
	// Reclaim frees the log's removed files in the background
	// (wal.Options.Reclaim); nil unlinks them.
	Reclaim *reclaim.Reclaimer
	// CheckpointBytes: log bytes between checkpoints
	// (DefaultCheckpointBytes if 0, no automatic checkpoints if negative).
	CheckpointBytes int64
	// Cache holds recent blocks; it may be shared by containers. A cache of
	// 64 MiB is made if nil.
	Cache *cache.Cache
	// Parts is the pool of buffers tier-2 chunk parts are loaded into; it
	// may be shared by containers. A pool of its own is made if nil.
	Parts *PartPool
	// Logger receives recovery and failure messages (discarded if nil).
	Logger logrus.FieldLogger
	// Chunks serves blocks that are in tier 2 (see tier.go). Nil means
	// no tier 2: nothing is tiered, and the log keeps every block.
	Chunks ChunkSource
	// MaxUntieredBytes bounds the durable bytes waiting for tier 2: while
	// they are above it, appends are refused with
	// protocol.ErrContainerUnavailable (retriable), so a stalled tier 2
	// stops writing only after the log has taken this much. 0: no bound.
	MaxUntieredBytes int64
	// Epoch is the assignment epoch the container is opened under (see
	// fence.go): Open refuses a directory whose epoch file holds a higher
	// one and records a higher one before replaying the log. 0 (standalone)
	// writes nothing.
	Epoch int64
	// Rates, if set, measures each segment's append rates (rates.go); it
	// must not change after Open. Nil: nothing is measured.
	Rates *rates.Config
}

// Container is a shard of segments with its own log: it applies every
// change to its metadata and its log in one order, acknowledges a change
// once the log has it on stable storage, and serves reads from its cache
// or, for blocks no longer cached, from the log.
type Container struct {
	cfg    Config
	fs     vfs.FS
	log    *wal.WAL
	cache  *cache.Cache
	source BlockSource // where blocks missing from the cache come from
	l      logrus.FieldLogger
	fenced atomic.Bool // set by Fence: changes fail with protocol.ErrWrongHost
	frozen atomic.Bool // set by Freeze: clients' changes fail with protocol.ErrWrongHost; tiering goes on

	// Tier-2 chunk part loads: one load per part at a time (a reader and
	// the read-ahead share it), at most readAheadSlots read-aheads in
	// flight, and the buffers parts are loaded into.
	loadsMu   sync.Mutex
	loads     map[cache.Key]*partLoad
	readAhead chan struct{}
	parts     *PartPool

	mu struct {
		sync.Mutex
		st      state
		lastLSN uint64 // LSN of the last record appended to the log
		failed  error  // sticky: set when the log fails
		closed  bool
	}

	// Checkpointing: one at a time, by the checkpointer goroutine or Close.
	ckptMu      sync.Mutex
	ckptLSN     atomic.Uint64 // LSN of the last checkpoint written
	bytesLogged atomic.Int64  // log payload bytes since the last checkpoint
	metaChanges atomic.Uint64 // records other than appends logged by this process (recovery.go)
	kick        chan struct{}
	stop        chan struct{}
	stopped     chan struct{}
}

// Open recovers the container in cfg.Dir: it loads the newest valid
// checkpoint, replays the log records after it (cutting a torn tail) and
// starts taking appends. It refuses to open, with an error naming the
// file and offset, if the log is damaged in a way a crash cannot explain.
func Open(cfg Config) (*Container, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.Cache == nil {
		cfg.Cache = cache.New(64 << 20)
	}
	if cfg.Parts == nil {
		cfg.Parts = NewPartPool(0)
	}
	if cfg.CheckpointBytes == 0 {
		cfg.CheckpointBytes = DefaultCheckpointBytes
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	c := &Container{
		cfg: cfg, fs: cfg.FS, cache: cfg.Cache,
		l:    cfg.Logger.WithField("container", cfg.ID),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{}),
		readAhead: make(chan struct{}, readAheadSlots),
		loads:     map[cache.Key]*partLoad{},
		parts:     cfg.Parts,
	}
	if err := c.fs.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("container %d: create %s: %w", cfg.ID, cfg.Dir, err)
	}
	c.removeTemporaries()
	if err := claimEpoch(c.fs, cfg.ID, cfg.Dir, cfg.Epoch); err != nil {
		return nil, err
	}
	cp, found, err := loadCheckpoint(c.fs, cfg.Dir, func(file string, err error) {
		c.l.WithError(err).WithField("file", file).Warn("container: skipping a damaged checkpoint for an older one")
	})
	if err != nil {
		return nil, err
	}
	st := newState()
	st.tiering = cfg.Chunks != nil
	if found {
		if st, err = restore(cp); err != nil {
			return nil, fmt.Errorf("container %d: %w: %s: %v", cfg.ID, ErrBadCheckpoint,
				filepath.Join(cfg.Dir, ckptName(cp.LSN)), err)
		}
		st.tiering = cfg.Chunks != nil
	}
	now := time.Now().UnixNano()
	// Blocks replayed from the log were logged after the checkpoint was
	// taken, at a time the log does not keep: count them as old as that,
	// so that the tier-2 lag bound holds across a restart (they may be
	// tiered sooner than needed, never later).
	logged := now
	if found && cp.Time > 0 {
		logged = min(now, cp.Time)
	}
	// From cp.LSN+1: wal.Open refuses a log that ends before the
	// checkpoint, naming where.
	log, err := wal.Open(wal.Options{
		Dir: filepath.Join(cfg.Dir, "wal"), FS: c.fs, FileSize: cfg.WALFileSize, Preallocate: cfg.WALPreallocate, Logger: c.l,
		Reclaim: cfg.Reclaim,
	}, cp.LSN+1, func(rec wal.Record) error {
		if err := st.replay(rec, now, logged); err != nil {
			return fmt.Errorf("%w: replaying LSN %d at %s offset %d: %v", wal.ErrCorrupt, rec.LSN,
				filepath.Join(cfg.Dir, "wal", fmt.Sprintf("%016x.wal", rec.Addr.File)), rec.Addr.Offset, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("container %d: %w", cfg.ID, err)
	}
	for _, s := range st.byID {
		s.durable, s.sealDurable = s.length, s.sealed
		for i := range s.extents {
			if s.extents[i].appended == 0 {
				s.extents[i].appended = now
			}
		}
	}
	c.mu.st = st
	c.mu.lastLSN = log.NextLSN() - 1
	c.log = log
	c.source = logSource{log}
	c.ckptLSN.Store(cp.LSN)
	go c.checkpointLoop()
	return c, nil
}

func (c *Container) removeTemporaries() {
	names, _ := c.fs.List(c.cfg.Dir)
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			c.fs.Remove(filepath.Join(c.cfg.Dir, n))
		}
	}
}

// ID is the container's number.
func (c *Container) ID() int { return c.cfg.ID }

// errorf wraps a protocol sentinel with the container and segment.
func (c *Container) errorf(sentinel error, segment, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if msg != "" {
		msg = ": " + msg
	}
	return fmt.Errorf("container %d: segment %q: %w%s", c.cfg.ID, segment, sentinel, msg)
}

// usableLocked reports why the container takes no changes from clients,
// if it does not.
func (c *Container) usableLocked() error {
	if c.frozen.Load() {
		return fmt.Errorf("container %d: %w: moving to another node (hand-over)", c.cfg.ID, protocol.ErrWrongHost)
	}
	return c.internalUsableLocked()
}

// internalUsableLocked reports why the container takes no changes at all
// (the storage writer's records included), if it does not.
func (c *Container) internalUsableLocked() error {
	if err := c.fenceErr(); err != nil {
		return err
	}
	if c.mu.failed != nil {
		return c.mu.failed
	}
	if c.mu.closed {
		return fmt.Errorf("container %d: %w: closed", c.cfg.ID, protocol.ErrContainerUnavailable)
	}
	return nil
}

// fail makes a log failure the container's sticky state.
func (c *Container) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.failed == nil {
		c.mu.failed = fmt.Errorf("container %d: %w: %w", c.cfg.ID, protocol.ErrContainerUnavailable, err)
		c.l.WithError(err).Error("container: log failed; the container takes no more changes until it is reopened")
	}
	return c.mu.failed
}

func (c *Container) segmentLocked(name string) (*segment, error) {
	s, ok := c.mu.st.byName[name]
	if !ok {
		return nil, c.errorf(protocol.ErrNoSuchSegment, name, "")
	}
	return s, nil
}

// logLocked appends a record under the container's lock, so that the log's
// order is the order of changes to the state.
func (c *Container) logLocked(typ wal.RecordType, parts ...[]byte) (wal.Pending, error) {
	p, err := c.log.Append(typ, parts...)
	if err != nil {
		if errors.Is(err, wal.ErrTooLarge) {
			return p, fmt.Errorf("container %d: %w: %v", c.cfg.ID, protocol.ErrInvalidArgument, err)
		}
		if c.mu.failed == nil {
			c.mu.failed = fmt.Errorf("container %d: %w: %w", c.cfg.ID, protocol.ErrContainerUnavailable, err)
		}
		return p, c.mu.failed
	}
	c.mu.lastLSN = p.LSN
	if typ != recAppend {
		c.metaChanges.Add(1)
	}
	n := c.bytesLogged.Add(int64(wal.RecordHeaderSize))
	for _, part := range parts {
		n = c.bytesLogged.Add(int64(len(part)))
	}
	if c.cfg.CheckpointBytes > 0 && n >= c.cfg.CheckpointBytes {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	return p, nil
}

// wait waits for a record to be durable and turns a log failure into the
// container's failure.
func (c *Container) wait(p wal.Pending) error {
	if err := p.Wait(); err != nil {
		return c.fail(err)
	}
	return nil
}

// waitDurableLocked returns a function that waits until everything logged
// so far is durable, for answers that read state which may not be.
func (c *Container) syncPointLocked() func() error {
	lsn := c.mu.lastLSN
	return func() error {
		if err := c.log.WaitDurable(lsn); err != nil {
			return c.fail(err)
		}
		return nil
	}
}

// Create makes an empty segment. Its name must be a qualified segment name
// (protocol.ParseSegmentName).
func (c *Container) Create(name string, attrs map[string]int64) error {
	if err := protocol.ValidateSegmentName(name); err != nil {
		return fmt.Errorf("container %d: %w", c.cfg.ID, err)
	}
	if len(attrs) > MaxAttributes {
		return c.errorf(protocol.ErrInvalidArgument, name, "%d attributes, limit %d", len(attrs), MaxAttributes)
	}
	return c.change(func() (durableWait, error) {
		if err := c.usableLocked(); err != nil {
			return nil, err
		}
		if _, ok := c.mu.st.byName[name]; ok {
			return nil, c.errorf(protocol.ErrSegmentExists, name, "")
		}
		r := createRecord{ID: c.mu.st.nextID, Name: name, Attrs: attrs}
		p, err := c.logLocked(recCreate, encode(r))
		if err != nil {
			return nil, err
		}
		c.mu.st.applyCreate(r, time.Now().UnixNano())
		return c.durable(p), nil
	})
}

// Info describes a segment as readers see it: only durable bytes count.
type Info struct {
	Name        string
	StartOffset int64
	Length      int64
	Sealed      bool
	Modified    time.Time
}

// Info returns what readers can see of a segment.
func (c *Container) Info(name string) (Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.segmentLocked(name)
	if err != nil {
		return Info{}, err
	}
	return Info{Name: s.name, StartOffset: s.start, Length: s.durable, Sealed: s.sealDurable,
		Modified: time.Unix(0, s.modified)}, nil
}

// Seal makes a segment read-only and returns its final length. Sealing a
// sealed segment is not an error.
func (c *Container) Seal(name string) (int64, error) {
	var length int64 // the answer: set once known
	err := c.change(func() (durableWait, error) {
		s, err := c.segmentForChangeLocked(name)
		if err != nil {
			return nil, err
		}
		if s.sealed {
			length = s.length
			return c.syncPointLocked(), nil
		}
		p, err := c.logLocked(recSeal, encode(sealRecord{ID: s.id, Length: s.length}))
		if err != nil {
			return nil, err
		}
		c.mu.st.applySeal(s, time.Now().UnixNano())
		sealed := s.length
		return c.thenLocked(c.durable(p), func() {
			s.markDurableLocked(sealed)
			s.sealDurable = true
			s.notifyLocked()
			length = sealed
		}), nil
	})
	return length, err
}

// Truncate makes the bytes below offset unreadable. Truncating below the
// current start offset is not an error and changes nothing. Above it,
// offset must be an event boundary (CheckBoundary): any other is refused
// with protocol.ErrNotEventBoundary before anything is logged. The start
// itself need not be one (a truncation an older version logged inside an
// event), so truncating at the next boundary repairs such a segment.
func (c *Container) Truncate(name string, offset int64) (int64, error) {
	id, checkErr := c.checkBoundary(name, offset, true)
	if checkErr != nil && !errors.Is(checkErr, protocol.ErrInvalidArgument) {
		return 0, checkErr
	}
	var start int64 // the answer: set once known
	err := c.change(func() (durableWait, error) {
		s, err := c.segmentForChangeLocked(name) // its refusals (fenced, no such segment) come first
		if err != nil {
			return nil, err
		}
		if s.id != id {
			return nil, c.errorf(protocol.ErrNoSuchSegment, name, "deleted while its truncation was checked")
		}
		if checkErr != nil {
			// Outside [0, length] when checked. Appends may have brought it
			// inside since, but it was never checked: refuse it as found.
			// (A segment's length never shrinks, so an offset checked in
			// range is still in range.)
			return nil, checkErr
		}
		if offset <= s.start {
			start = s.start
			return c.syncPointLocked(), nil
		}
		p, err := c.logLocked(recTruncate, encode(truncateRecord{ID: s.id, Offset: offset}))
		if err != nil {
			return nil, err
		}
		c.mu.st.applyTruncate(s, offset, time.Now().UnixNano())
		s.notifyLocked()
		start = offset
		return c.durable(p), nil
	})
	return start, err
}

// Delete removes a segment.
func (c *Container) Delete(name string) error {
	return c.change(func() (durableWait, error) {
		s, err := c.segmentForChangeLocked(name)
		if err != nil {
			return nil, err
		}
		p, err := c.logLocked(recDelete, encode(deleteRecord{ID: s.id}))
		if err != nil {
			return nil, err
		}
		c.mu.st.applyDelete(s)
		return c.durable(p), nil
	})
}

// Merge appends the whole of a sealed source segment (a transaction's
// shadow segment) to target and deletes the source, as one log record: a
// crash leaves either both segments as they were or the merged target.
// It returns the target's new length.
func (c *Container) Merge(target, source string) (int64, error) {
	var length int64 // the answer: set once durable
	err := c.change(func() (durableWait, error) {
		t, err := c.segmentForChangeLocked(target)
		if err != nil {
			return nil, err
		}
		s, err := c.segmentLocked(source)
		if err != nil {
			return nil, err
		}
		switch {
		case t == s:
			return nil, c.errorf(protocol.ErrInvalidArgument, target, "merge into itself")
		case !s.sealed:
			return nil, c.errorf(protocol.ErrSegmentNotSealed, source, "merge source must be sealed")
		case t.sealed:
			return nil, c.errorf(protocol.ErrSegmentSealed, target, "merge target is sealed")
		case s.start != 0:
			return nil, c.errorf(protocol.ErrInvalidArgument, source, "merge source is truncated")
		case len(s.chunks) > 0:
			return nil, c.errorf(protocol.ErrInvalidArgument, source, "merge source has tier-2 chunks")
		}
		p, err := c.logLocked(recMerge, encode(mergeRecord{Target: t.id, Source: s.id, Offset: t.length}))
		if err != nil {
			return nil, err
		}
		// A committed transaction's events reach the target here, not
		// through AppendAsync: count them on the target's meter (the
		// source's events appended in this process, all its bytes), so
		// a stream written through transactions is measured as loaded.
		t.events += s.events
		if c.cfg.Rates != nil {
			t.meter.Add(c.cfg.Rates, RatesNow(), s.events, s.length)
		}
		c.mu.st.applyMerge(t, s, time.Now().UnixNano())
		merged := t.length
		return c.thenLocked(c.durable(p), func() {
			t.markDurableLocked(merged)
			length = merged
		}), nil
	})
	return length, err
}

// GetAttributes returns the values of the keys that are set (all of them
// if keys is empty). Only durable values are returned.
func (c *Container) GetAttributes(name string, keys []string) (map[string]int64, error) {
	var out map[string]int64
	err := c.change(func() (durableWait, error) {
		s, err := c.segmentLocked(name)
		if err != nil {
			return nil, err
		}
		out = make(map[string]int64, len(keys))
		if len(keys) == 0 {
			for k, v := range s.attrs {
				out[k] = v
			}
		}
		for _, k := range keys {
			if v, ok := s.attrs[k]; ok {
				out[k] = v
			}
		}
		return c.syncPointLocked(), nil
	})
	return out, err
}

// UpdateAttributes applies updates all together or not at all: if any
// condition fails, nothing changes and the error wraps
// protocol.ErrAttributeConflict.
func (c *Container) UpdateAttributes(name string, updates []protocol.AttributeUpdate) error {
	return c.change(func() (durableWait, error) {
		s, err := c.segmentForChangeLocked(name)
		if err != nil {
			return nil, err
		}
		r, err := c.attributesRecordLocked(name, s, updates)
		if err != nil {
			return nil, err
		}
		p, err := c.logLocked(recAttributes, encode(r))
		if err != nil {
			return nil, err
		}
		c.mu.st.applyAttributes(s, r, time.Now().UnixNano())
		return c.durable(p), nil
	})
}

// attributesRecordLocked checks updates against the attributes of s
// (segment name) and returns the record that applies them all, or why
// they cannot apply.
func (c *Container) attributesRecordLocked(name string, s *segment, updates []protocol.AttributeUpdate) (attributesRecord, error) {
	r := attributesRecord{ID: s.id, Set: map[string]int64{}}
	view := func(k string) (int64, bool) {
		if v, ok := r.Set[k]; ok {
			return v, true
		}
		for _, rk := range r.Remove {
			if rk == k {
				return 0, false
			}
		}
		v, ok := s.attrs[k]
		return v, ok
	}
	for _, u := range updates {
		cur, ok := view(u.Key)
		switch u.Kind {
		case protocol.Replace:
		case protocol.ReplaceIfEquals:
			if (u.Expected == protocol.NoValue && ok) || (u.Expected != protocol.NoValue && (!ok || cur != u.Expected)) {
				return r, c.errorf(protocol.ErrAttributeConflict, name, "%q is %s, expected %s", u.Key, showValue(cur, ok), showValue(u.Expected, u.Expected != protocol.NoValue))
			}
		case protocol.ReplaceIfGreater:
			if ok && u.Value <= cur {
				return r, c.errorf(protocol.ErrAttributeConflict, name, "%q is %d, not less than %d", u.Key, cur, u.Value)
			}
		case protocol.Remove:
			delete(r.Set, u.Key)
			r.Remove = append(r.Remove, u.Key)
			continue
		default:
			return r, c.errorf(protocol.ErrInvalidArgument, name, "unknown attribute update kind %d", u.Kind)
		}
		r.Set[u.Key] = u.Value
	}
	if len(s.attrs)+len(r.Set) > MaxAttributes {
		return r, c.errorf(protocol.ErrInvalidArgument, name, "more than %d attributes", MaxAttributes)
	}
	return r, nil
}

func showValue(v int64, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprint(v)
}

// SetupAppend returns the last event number the segment holds for writer
// (protocol.NoEventNumber if none): the writer resends what follows it.
// It answers for a sealed segment too, so a writer learns which of its
// events the segment kept before it was sealed.
func (c *Container) SetupAppend(name, writer string) (int64, error) {
	if writer == "" {
		return 0, c.errorf(protocol.ErrInvalidArgument, name, "empty writer id")
	}
	var last int64
	err := c.change(func() (durableWait, error) {
		s, err := c.segmentForChangeLocked(name)
		if err != nil {
			return nil, err
		}
		var ok bool
		if last, ok = s.writers[writer]; !ok {
			last = protocol.NoEventNumber
		}
		return c.syncPointLocked(), nil
	})
	return last, err
}

// Checkpoint writes the container's metadata beside the log, so that a
// restart replays only what follows. It waits until everything in the
// snapshot is durable before writing it.
func (c *Container) Checkpoint() error {
	c.ckptMu.Lock()
	defer c.ckptMu.Unlock()
	cp, lsn, err := c.snapshot()
	if err != nil {
		return err
	}
	if lsn == c.ckptLSN.Load() {
		return nil // nothing logged since the last checkpoint
	}
	if err := c.log.WaitDurable(lsn); err != nil {
		return c.fail(err)
	}
	oldest, err := writeCheckpoint(c.fs, c.cfg.Dir, cp)
	if err != nil {
		c.l.WithError(err).Error("container: checkpoint failed; the log keeps everything, so nothing is lost")
		return fmt.Errorf("container %d: %w", c.cfg.ID, err)
	}
	c.ckptLSN.Store(lsn)
	if c.cfg.Chunks == nil {
		return nil // without tier 2 the log keeps every record
	}
	return c.trimLog(oldest)
}

// snapshot returns the state as of the last record logged and that
// record's LSN, or the container's failure. It resets the count of bytes
// logged since the last checkpoint, unless nothing was logged since.
func (c *Container) snapshot() (checkpoint, uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.failed != nil {
		return checkpoint{}, 0, c.mu.failed
	}
	lsn := c.mu.lastLSN
	if lsn == c.ckptLSN.Load() {
		return checkpoint{}, lsn, nil
	}
	c.bytesLogged.Store(0)
	return c.mu.st.snapshotLocked(lsn), lsn, nil
}

func (c *Container) checkpointLoop() {
	defer close(c.stopped)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			c.Checkpoint()
		}
	}
}

// Close stops taking changes, writes a last checkpoint and closes the log.
// Appends in flight complete first.
func (c *Container) Close() error {
	failed, already := c.markClosed()
	if already {
		return nil
	}
	close(c.stop)
	<-c.stopped
	for range readAheadSlots { // waits for the read-aheads in flight; no new one starts
		c.readAhead <- struct{}{}
	}
	var err error
	if failed == nil {
		err = c.Checkpoint()
	}
	if cerr := c.log.Close(); err == nil && cerr != nil && failed == nil {
		err = cerr
	}
	return err
}

// markClosed makes the container refuse changes and wakes every waiting
// read. It returns the container's failure, if any, and whether it was
// closed already.
func (c *Container) markClosed() (failed error, already bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, true
	}
	c.mu.closed = true
	for _, s := range c.mu.st.byID {
		s.notifyLocked()
	}
	return c.mu.failed, false
}

// Err reports the container's sticky failure, if any.
func (c *Container) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.failed
}

// LogStats returns the container's log counters.
func (c *Container) LogStats() wal.Stats { return c.log.Stats() }

var _ = os.ErrNotExist
