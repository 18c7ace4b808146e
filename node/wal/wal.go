package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
)

// Errors returned by the log. Match them with errors.Is.
var (
	// ErrCorrupt means a file holds damage that recovery may not repair
	// silently (see "Recovery" in doc.go): a bad record that a later
	// record or the caller's checkpoint proves had been durable, a bad
	// record in a file that is not the last, a bad file header, or a gap
	// in the sequence of files or records. Open returns it as a
	// *CorruptError naming the file and offset; ReadAt wraps it.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrFailed wraps the first write, fsync or roll error. It is sticky:
	// once the log has failed, every later append returns it.
	ErrFailed = errors.New("wal: log failed and accepts no more writes")
	// ErrClosed is returned by appends after Close.
	ErrClosed = errors.New("wal: closed")
	// ErrTooLarge is returned for a payload over MaxPayloadSize.
	ErrTooLarge = errors.New("wal: record too large")
	// ErrNotFound is returned by ReadAt for an address outside the log.
	ErrNotFound = errors.New("wal: no record at address")
)

// CorruptError is the refusal of recovery: damage that is not a torn
// tail. It matches ErrCorrupt with errors.Is.
type CorruptError struct {
	File   string // path of the damaged file
	Offset int64  // where in it the damage starts
	Found  string // what is there
	Why    string // why recovery may not repair it
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%v: %s offset %d: %s; %s", ErrCorrupt, e.File, e.Offset, e.Found, e.Why)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// DefaultFileSize is the size at which the log rolls to a new file.
const DefaultFileSize = 64 << 20

// Options configure a log.
type Options struct {
	// Dir holds the log's files. It is created if missing.
	Dir string
	// FS is the filesystem; vfs.Default if nil.
	FS vfs.FS
	// FileSize is the roll threshold: a record that would take a file past
	// it goes to a new file (a single record larger than FileSize gets a
	// file of its own). DefaultFileSize if zero.
	FileSize int64
	// Preallocate keeps a zero-filled file of FileSize ready (".spare",
	// made by a background goroutine) for the next roll. Writes into a
	// preallocated file do not change its size, so they are made durable
	// with fdatasync, which skips the filesystem's journal commit: on the
	// disks measured here about 40% faster than fsync of a growing file.
	// Without a ready spare, a roll makes a file that grows as it is
	// written, synced with fsync.
	Preallocate bool
	// Logger receives recovery and failure messages (discarded if nil).
	Logger logrus.FieldLogger
	// Reclaim, if set, frees the files RemoveBefore removes in the
	// background, a MiB at a time (package reclaim), through the
	// trash directory Dir/trash, which Open hands it again after a crash.
	// Without it RemoveBefore unlinks them, and Open empties the trash.
	Reclaim *reclaim.Reclaimer

	// alwaysSpare, for tests, asks for a spare after every roll however
	// fast the file filled.
	alwaysSpare bool
}

// Addr is where a record starts: the file's sequence number and the byte
// offset of the record header in that file.
type Addr struct {
	File   uint64
	Offset int64
}

// Record is one entry of the log.
type Record struct {
	LSN     uint64
	Type    RecordType
	Payload []byte
	Addr    Addr
}

// Repair describes a torn tail that Open cut off.
type Repair struct {
	File    string // path of the repaired file
	Offset  int64  // where the log now ends in it
	Dropped int64  // bytes zeroed from there: up to the last non-zero byte of the file
}

// Stats are cumulative counters, for tests and benchmarks.
type Stats struct {
	Records    uint64 // records written
	Syncs      uint64 // fsyncs of log files (one per group commit)
	Bytes      uint64 // bytes written, headers included
	Files      int    // files in the log now
	Rolls      uint64 // files started after the first
	SpareRolls uint64 // of those, preallocated ones
	EarlyRolls uint64 // of those, rolls out of a growing file into a spare before it was full
	GrowSyncs  uint64 // of Syncs, fsyncs of a file that grew (the rest are fdatasyncs)
}

// WAL is a segment container's write-ahead log: an append-only sequence of
// checksummed records in numbered files, made durable by group commit.
//
// Append assigns the next LSN and the record's address at once, in call
// order; a single flusher goroutine writes every record that queued while
// the previous fsync ran and covers them with one fsync. A Pending
// completes only after the fsync that covers its record returns.
type WAL struct {
	opts Options
	fs   vfs.FS

	mu struct {
		sync.Mutex
		wake     *sync.Cond // signals the flusher
		pending  *batch     // records queued, not yet being written
		inflight []*batch   // batches written or being written, not yet complete, oldest first
		nextLSN  uint64
		durable  uint64 // every LSN <= durable is on stable storage
		tailSeq  uint64 // file the next record goes to
		tailSize int64  // size of that file once everything queued is written
		files    []fileHeader
		spare    [][]byte // recycled slabs
		// growingSeq is the file the flusher writes to when that file
		// grows as it is written (no spare was ready for it), else 0:
		// while the next record would go to it and a spare is ready,
		// Append rolls early (see rollEarlyLocked).
		growingSeq uint64
		earlySeq   uint64 // the last file Append rolled to early
		err        error  // sticky failure
		closed     bool
	}

	// Owned by the flusher goroutine.
	file      vfs.File
	fileSeq   uint64
	fileOff   int64 // where the next write to file goes
	fileAlloc int64 // the file's size on disk: writes below it need only fdatasync

	spare struct {
		sync.Mutex
		ready   bool          // .spare exists, zero-filled to FileSize and durable
		asked   bool          // a spare was asked for and is not made yet
		retryAt time.Time     // the rate window asks for no spare before this (after a failure)
		took    time.Duration // disk time the last spare took (writes and syncs)
		budget  time.Duration // how long the next one may take
	}
	fileStart time.Time      // when the flusher started the current file
	rate      rateWindow     // the log's recent write rate, owned by the flusher
	spareOK   atomic.Bool    // spare.ready, for Append (which holds mu, not spare)
	lastWrite atomic.Int64   // when the flusher last wrote a batch, since clockBase (0: never)
	syncSem   chan struct{}  // bounds the syncs in flight (maxSyncsInFlight)
	syncs     sync.WaitGroup // the sync goroutines
	kickSpare chan struct{}
	stopSpare chan struct{}
	spareDone chan struct{}

	readers struct {
		sync.Mutex
		files map[uint64]vfs.File
	}

	repair  *Repair
	stats   struct{ records, syncs, bytes, rolls, spareRolls, earlyRolls, growSyncs atomic.Uint64 }
	stopped chan struct{}
}

// slabSize is the size of the buffers records are copied into while they
// wait for the flusher. Fixed-size slabs mean a large batch never
// re-allocates and copies its buffer as it grows; they are written one
// write call each.
const slabSize = 1 << 20

// maxSpareSlabs bounds the slabs kept for reuse: a log's idle slabs are
// memory outside the node's cache, four logs a node. With 32 they held
// 40 MB of a standalone's heap after a burst (a third of its margin over
// the cache); a batch larger than the spares allocates the rest, which
// the garbage collector takes back.
const maxSpareSlabs = 4

// chunk is the part of a batch that goes to one file.
type chunk struct {
	seq      uint64
	firstLSN uint64
	slabs    [][]byte // each of capacity slabSize; all full but the last
}

// write copies p to the end of the chunk, taking slabs from get.
func (c *chunk) write(p []byte, get func() []byte) {
	for len(p) > 0 {
		n := len(c.slabs)
		if n == 0 || len(c.slabs[n-1]) == cap(c.slabs[n-1]) {
			c.slabs = append(c.slabs, get())
			n++
		}
		last := c.slabs[n-1]
		k := copy(last[len(last):cap(last)], p)
		c.slabs[n-1] = last[:len(last)+k]
		p = p[k:]
	}
}

type batch struct {
	bytes   int // record bytes in the batch
	chunks  []chunk
	synced  uint64 // every LSN <= synced was durable when the batch was formed
	lastLSN uint64
	done    chan struct{}
	err     error // set before done is closed
}

// Pending is a queued record. Wait blocks until it is durable.
type Pending struct {
	LSN  uint64
	Addr Addr
	b    *batch
}

// Done is closed once the record is durable or the log has failed.
func (p Pending) Done() <-chan struct{} { return p.b.done }

// Wait blocks until the record is durable, or returns the failure that
// prevented it.
func (p Pending) Wait() error {
	<-p.b.done
	return p.b.err
}

// Open recovers the log in opts.Dir and makes it ready for appends. It calls
// replay, in LSN order, for every record with LSN >= from; the payload is
// valid only during the call. An error from replay stops Open and is
// returned.
//
// The caller vouches that every record with LSN < from had been made
// durable (it checkpointed past them): damage to one of them, or a log
// that ends before from-1, is never taken for a torn tail.
//
// Open scans the log and decides before it changes any file. A torn tail
// (damage in the last file that nothing proves had been durable, as a
// crash in the middle of a write leaves) is zeroed in place. Any other
// damage makes Open fail with a *CorruptError (matching ErrCorrupt) that
// names the file, the offset and what is there, and leaves every file
// untouched. replay may have been called for the records before the
// damage when Open fails.
func Open(opts Options, from uint64, replay func(Record) error) (*WAL, error) {
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.FileSize <= 0 {
		opts.FileSize = DefaultFileSize
	}
	opts.Logger = logs.OrDiscard(opts.Logger)
	w := &WAL{opts: opts, fs: opts.FS, stopped: make(chan struct{}),
		syncSem: make(chan struct{}, maxSyncsInFlight), kickSpare: make(chan struct{}, 1), stopSpare: make(chan struct{}), spareDone: make(chan struct{})}
	w.mu.wake = sync.NewCond(&w.mu.Mutex)
	w.readers.files = make(map[uint64]vfs.File)
	if err := w.fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", opts.Dir, err)
	}
	w.resumeTrash()
	if err := w.recover(from, replay); err != nil {
		w.closeReaders()
		if w.file != nil {
			w.file.Close()
		}
		return nil, err
	}
	w.initSpare()
	go w.flushLoop()
	go w.spareLoop()
	return w, nil
}

func (w *WAL) path(seq uint64) string { return filepath.Join(w.opts.Dir, fileName(seq)) }

// trashDirName is the directory, in Dir, where removed files wait for
// Options.Reclaim.
const trashDirName = "trash"

// trashDir is where removed files wait for Options.Reclaim.
func (w *WAL) trashDir() string { return filepath.Join(w.opts.Dir, trashDirName) }

// resumeTrash hands the files a crash left in the trash to the reclaimer,
// or removes them when there is none. What cannot be is logged and left:
// the log's records are not there, so it does not keep the log shut.
func (w *WAL) resumeTrash() {
	var err error
	if w.opts.Reclaim != nil {
		err = w.opts.Reclaim.Resume(w.trashDir())
	} else {
		err = vfs.RemoveAll(w.fs, w.trashDir())
	}
	if err != nil {
		w.opts.Logger.WithError(err).WithField("trash", w.trashDir()).Warn("wal: removed files left in the trash")
	}
}

// remove removes a file the log no longer needs.
func (w *WAL) remove(name string) error {
	if w.opts.Reclaim != nil {
		return w.opts.Reclaim.Remove(name, w.trashDir())
	}
	return w.fs.Remove(name)
}

// recover reads the files, replays records and opens the tail for appends.
// It scans and decides first and modifies only then: every refusal leaves
// every file as it found it (see "Recovery" in doc.go for the rules).
func (w *WAL) recover(from uint64, replay func(Record) error) error {
	names, err := w.fs.List(w.opts.Dir)
	if err != nil {
		return fmt.Errorf("wal: list %s: %w", w.opts.Dir, err)
	}
	var seqs []uint64
	for _, n := range names {
		if seq, ok := parseFileName(n); ok {
			seqs = append(seqs, seq)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	if len(seqs) == 0 {
		if from > 1 {
			return &CorruptError{File: w.opts.Dir, Found: "no log files",
				Why: fmt.Sprintf("records up to LSN %d were made durable (replay starts at LSN %d)", from-1, from)}
		}
		// The first file grows as it is written (a node does not wait
		// for its logs to zero-fill files before it starts); with
		// preallocation, Open asks for a spare at once and the first
		// appends roll early into it once it is ready.
		h := fileHeader{seq: 1, firstLSN: 1}
		if err := w.createFile(h); err != nil {
			return fmt.Errorf("wal: create first file: %w", err)
		}
		w.mu.files = []fileHeader{h}
		return w.openTail(h, FileHeaderSize, 1)
	}
	headers := make([]fileHeader, len(seqs))
	for i, seq := range seqs {
		if i > 0 && seq != seqs[i-1]+1 {
			return &CorruptError{File: w.path(seqs[i-1] + 1), Found: fmt.Sprintf("no such file (the next one is %s)", w.path(seq)),
				Why: "files are only removed oldest first, so one is missing from the middle of the log"}
		}
		h, err := w.readHeader(seq)
		if err != nil {
			return err
		}
		if i > 0 && h.firstLSN < headers[i-1].firstLSN {
			return &CorruptError{File: w.path(seq), Found: fmt.Sprintf("a header whose first LSN is %d", h.firstLSN),
				Why: fmt.Sprintf("the file before it starts at LSN %d, later", headers[i-1].firstLSN)}
		}
		headers[i] = h
	}
	w.mu.files = headers
	if from > 0 && from < headers[0].firstLSN {
		return &CorruptError{File: w.path(headers[0].seq), Found: fmt.Sprintf("a header whose first LSN is %d", headers[0].firstLSN),
			Why: fmt.Sprintf("records from LSN %d are needed and this is the oldest file", from)}
	}
	// Skip files that end before from: file i ends before file i+1 starts.
	start := 0
	for start+1 < len(headers) && headers[start+1].firstLSN <= from {
		start++
	}
	want := headers[start].firstLSN
	var tail scanned
	for i := start; i < len(headers); i++ {
		h := headers[i]
		if h.firstLSN != want {
			prev := headers[i-1]
			return &CorruptError{File: w.path(prev.seq), Offset: tail.end,
				Found: fmt.Sprintf("the end of the records, where LSN %d was expected", want),
				Why:   fmt.Sprintf("the next file %s starts at LSN %d", w.path(h.seq), h.firstLSN)}
		}
		var nextFirst uint64 // 0 for the last file
		if i+1 < len(headers) {
			nextFirst = headers[i+1].firstLSN
		}
		if tail, err = w.scanFile(h, want, from, nextFirst, replay); err != nil {
			return err
		}
		want = tail.next
	}
	h := headers[len(headers)-1]
	if from > want {
		return &CorruptError{File: w.path(h.seq), Offset: tail.end,
			Found: fmt.Sprintf("the end of the log, where LSN %d was expected", want),
			Why:   fmt.Sprintf("records up to LSN %d were made durable (replay starts at LSN %d)", from-1, from)}
	}
	// Decided: the log is sound up to tail.end. Only now change a file.
	if tail.torn > 0 {
		if err := w.cutTornTail(w.path(h.seq), tail.end, tail.torn, tail.found); err != nil {
			return err
		}
	}
	return w.openTail(h, tail.end, want)
}

func (w *WAL) readHeader(seq uint64) (fileHeader, error) {
	f, err := w.fs.OpenFile(w.path(seq), os.O_RDONLY, 0)
	if err != nil {
		return fileHeader{}, fmt.Errorf("wal: open %s: %w", w.path(seq), err)
	}
	defer f.Close()
	b := make([]byte, FileHeaderSize)
	n, _ := f.ReadAt(b, 0)
	h, err := decodeFileHeader(b[:n])
	if err != nil {
		return fileHeader{}, &CorruptError{File: w.path(seq), Found: fmt.Sprintf("%v (%d bytes: %x)", err, n, b[:n]),
			Why: "a file appears whole, header first, so a bad header is not an interrupted write"}
	}
	if h.seq != seq {
		return fileHeader{}, &CorruptError{File: w.path(seq), Found: fmt.Sprintf("a header that names file %d", h.seq),
			Why: "a file's header names the file itself"}
	}
	return h, nil
}

// scanned is what scanning one file found.
type scanned struct {
	end   int64  // where the valid records end
	next  uint64 // the LSN after them
	torn  int64  // bytes from end to the last non-zero byte: a torn tail to zero
	found string // what the torn tail starts with, for the log
}

// scanFile replays the records of one file and decides what follows them:
// nothing or zeros (a clean end), a torn tail (only in the last file, and
// only if nothing proves the damaged record durable), or damage, which is
// a *CorruptError. nextFirst is the first LSN of the next file, 0 if this
// is the last. It never changes the file.
func (w *WAL) scanFile(h fileHeader, want, from, nextFirst uint64, replay func(Record) error) (scanned, error) {
	name := w.path(h.seq)
	data, err := vfs.ReadFile(w.fs, name)
	if err != nil {
		return scanned{}, fmt.Errorf("wal: read %s: %w", name, err)
	}
	off := FileHeaderSize
	for off < len(data) {
		typ, payload, n, err := decodeRecord(data[off:], want)
		if err != nil {
			break
		}
		if want >= from {
			rec := Record{LSN: want, Type: typ, Payload: payload, Addr: Addr{File: h.seq, Offset: int64(off)}}
			if err := replay(rec); err != nil {
				return scanned{}, err
			}
		}
		want++
		off += n
	}
	end := lastNonZero(data) + 1
	if end <= off {
		// Nothing, or only zeros (the unwritten rest of a preallocated
		// file), follows the records: a clean end.
		return scanned{end: int64(off), next: want}, nil
	}
	found := describeDamage(data, off, want)
	corrupt := func(why string) error {
		return &CorruptError{File: name, Offset: int64(off), Found: found, Why: why}
	}
	switch {
	case nextFirst == want:
		return scanned{}, corrupt(fmt.Sprintf("this is not the last file, and nothing the log writes lands after a file's last record; "+
			"no record is missing (the next file starts at LSN %d), so these bytes hold nothing of the log", want))
	case nextFirst != 0:
		return scanned{}, corrupt(fmt.Sprintf("this is not the last file, and a file is fsynced whole before the next one starts, "+
			"so this is not an interrupted write (LSN %d was expected here; replay starts at LSN %d)", want, from))
	case want < from:
		return scanned{}, corrupt(fmt.Sprintf("LSN %d had been made durable (replay starts at LSN %d), "+
			"so this is damage to acknowledged data, not an interrupted write", want, from))
	}
	if p := provenDurable(data, off, want); p >= 0 {
		_, lsn, synced, _, _, _ := decodeAnyRecord(data[p:])
		return scanned{}, corrupt(fmt.Sprintf("the valid record at offset %d (LSN %d) was written after LSN %d had been made durable "+
			"(its synced field is %d), so this is damage to acknowledged data, not an interrupted write (replay starts at LSN %d)",
			p, lsn, want, synced, from))
	}
	return scanned{end: int64(off), next: want, torn: int64(end - off), found: found}, nil
}

// cutTornTail zeroes the torn tail [off, off+n) in place and syncs the
// file. Zeroing, not truncating, keeps a preallocated file's blocks; and
// writing over blocks the file already has needs no free space, so a node
// whose disk filled up can recover once it can start at all.
func (w *WAL) cutTornTail(name string, off, n int64, found string) error {
	f, err := w.fs.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("wal: open torn file %s: %w", name, err)
	}
	defer f.Close()
	zeros := make([]byte, min(n, 1<<20))
	for done := int64(0); done < n; {
		k := min(int64(len(zeros)), n-done)
		if _, err := f.WriteAt(zeros[:k], off+done); err != nil {
			return fmt.Errorf("wal: zero torn tail of %s at %d: %w", name, off+done, err)
		}
		done += k
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: sync torn file %s: %w", name, err)
	}
	w.repair = &Repair{File: name, Offset: off, Dropped: n}
	w.opts.Logger.WithFields(logrus.Fields{"file": name, "offset": off, "dropped": n, "found": found}).
		Warn("wal: zeroed a torn tail left by an interrupted write; nothing in it had been acknowledged")
	return nil
}

func (w *WAL) openTail(h fileHeader, size int64, next uint64) error {
	f, err := w.fs.OpenFile(w.path(h.seq), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("wal: open %s for append: %w", w.path(h.seq), err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("wal: stat %s: %w", w.path(h.seq), err)
	}
	// Every record before next counts as durable from here on, and the
	// next batch's records say so (synced). A process that stopped
	// between a write and its fsync left records that were read back
	// from the page cache, never fsynced: make them durable first.
	// (Earlier files were fsynced whole before the next one started.)
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("wal: sync %s: %w", w.path(h.seq), err)
	}
	w.file, w.fileSeq, w.fileOff, w.fileAlloc = f, h.seq, size, st.Size()
	w.fileStart = time.Now()
	w.rate.reset(w.fileStart, 0)
	w.mu.tailSeq, w.mu.tailSize = h.seq, size
	if st.Size() < w.opts.FileSize {
		w.mu.growingSeq = h.seq
	}
	w.mu.nextLSN, w.mu.durable = next, next-1
	return nil
}

// createFile makes a new file with only its header, whole or not at all.
func (w *WAL) createFile(h fileHeader) error {
	return vfs.WriteFileAtomic(w.fs, w.path(h.seq), h.encode(), 0o644)
}

// Repaired reports the torn tail Open cut off, or nil.
func (w *WAL) Repaired() *Repair { return w.repair }

// Append queues a record whose payload is the concatenation of parts (so a
// caller can add a header to a payload without copying it first) and
// returns at once with its LSN and address. The parts are copied before
// Append returns. The record is durable once the returned Pending completes. Records are
// written in the order Append is called; callers that need the log's order
// to match their own state must call Append under their own lock.
func (w *WAL) Append(typ RecordType, parts ...[]byte) (Pending, error) {
	if typ == 0 {
		return Pending{}, fmt.Errorf("wal: record type 0 is reserved")
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxPayloadSize {
		return Pending{}, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, MaxPayloadSize)
	}
	size := int64(RecordHeaderSize + n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.err != nil {
		return Pending{}, w.mu.err
	}
	if w.mu.closed {
		return Pending{}, ErrClosed
	}
	lsn := w.mu.nextLSN
	if full := w.mu.tailSize+size > w.opts.FileSize && w.mu.tailSize > FileHeaderSize; full || w.rollEarlyLocked() {
		w.mu.tailSeq++
		w.mu.tailSize = FileHeaderSize
		if !full {
			w.mu.earlySeq = w.mu.tailSeq
		}
	}
	b := w.mu.pending
	if b == nil {
		// What is durable now. Not lsn-1: with pipelined syncs the batch
		// before this one may still be syncing when this one is written,
		// and a torn crash may keep this batch's pages and lose its.
		b = &batch{done: make(chan struct{}), synced: w.mu.durable}
		w.mu.pending = b
	}
	if len(b.chunks) == 0 || b.chunks[len(b.chunks)-1].seq != w.mu.tailSeq {
		b.chunks = append(b.chunks, chunk{seq: w.mu.tailSeq, firstLSN: lsn})
	}
	c := &b.chunks[len(b.chunks)-1]
	addr := Addr{File: w.mu.tailSeq, Offset: w.mu.tailSize}
	hdr := recordHeader(typ, lsn, b.synced, parts...)
	c.write(hdr[:], w.spareLocked)
	for _, p := range parts {
		c.write(p, w.spareLocked)
	}
	b.lastLSN = lsn
	b.bytes += int(size)
	w.mu.tailSize += size
	w.mu.nextLSN++
	w.mu.wake.Signal()
	return Pending{LSN: lsn, Addr: addr, b: b}, nil
}

func (w *WAL) spareLocked() []byte {
	if n := len(w.mu.spare); n > 0 {
		buf := w.mu.spare[n-1]
		w.mu.spare = w.mu.spare[:n-1]
		return buf[:0]
	}
	return make([]byte, 0, slabSize)
}

// WaitDurable blocks until every record with LSN <= lsn is durable, or
// returns the failure that prevented it.
func (w *WAL) WaitDurable(lsn uint64) error {
	w.mu.Lock()
	if lsn <= w.mu.durable {
		w.mu.Unlock()
		return nil
	}
	if w.mu.err != nil {
		err := w.mu.err
		w.mu.Unlock()
		return err
	}
	b := inflightFor(w.mu.inflight, lsn)
	if b == nil && w.mu.pending != nil && lsn <= w.mu.pending.lastLSN {
		b = w.mu.pending
	}
	w.mu.Unlock()
	if b == nil {
		return fmt.Errorf("wal: LSN %d was never appended", lsn)
	}
	<-b.done
	return b.err
}

// NextLSN is the LSN the next Append will get.
func (w *WAL) NextLSN() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.nextLSN
}

// DurableLSN is the highest LSN known to be on stable storage.
func (w *WAL) DurableLSN() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.durable
}

// Err reports the sticky failure, if any.
func (w *WAL) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

// Stats returns the log's counters.
func (w *WAL) Stats() Stats {
	w.mu.Lock()
	files := len(w.mu.files)
	w.mu.Unlock()
	return Stats{
		Records:    w.stats.records.Load(),
		Syncs:      w.stats.syncs.Load(),
		Bytes:      w.stats.bytes.Load(),
		Files:      files,
		Rolls:      w.stats.rolls.Load(),
		SpareRolls: w.stats.spareRolls.Load(),
		EarlyRolls: w.stats.earlyRolls.Load(),
		GrowSyncs:  w.stats.growSyncs.Load(),
	}
}

// inflightFor returns the first batch of bs that holds lsn, or nil.
func inflightFor(bs []*batch, lsn uint64) *batch {
	for _, b := range bs {
		if lsn <= b.lastLSN {
			return b
		}
	}
	return nil
}

// maxSyncsInFlight bounds the syncs running at once. The flusher writes a
// batch and starts its sync while the previous batch's sync still runs
// (each sync covers everything written before it), when the batch is large
// enough to be worth it (pipelineMinBytes), so under load an append that
// arrives during a sync waits for about one sync, not for the rest of that
// one and then its own. Batches still complete in order: a batch is
// durable only once its own sync and every earlier batch's have returned.
const maxSyncsInFlight = 2

// pipelineMinBytes is the least a batch holds before it gets a sync of its
// own while another sync runs. A sync started beside another is slower
// than one alone (measured: p99 ~470 us against ~230 us), so a small
// batch waits for the running sync to end instead: at light load an
// append waits for at most the rest of one sync and its own, alone. Under
// load, batches grow past this during a sync and the syncs overlap.
const pipelineMinBytes = 32 << 10

func (w *WAL) flushLoop() {
	defer close(w.stopped)
	defer w.syncs.Wait()
	var lastDone chan struct{} // done of the last batch handed to a sync
	for {
		// A sync slot first: while every slot is busy, appends gather in
		// one pending batch, covered by one sync once a slot frees up.
		w.syncSem <- struct{}{}
		w.mu.Lock()
		for !w.mu.closed && (w.mu.pending == nil || len(w.mu.inflight) > 0 && w.mu.pending.bytes < pipelineMinBytes) {
			w.mu.wake.Wait()
		}
		b := w.mu.pending
		if b == nil {
			w.mu.Unlock()
			<-w.syncSem
			return
		}
		w.mu.pending = nil
		w.mu.inflight = append(w.mu.inflight, b)
		failed := w.mu.err
		w.mu.Unlock()

		err := failed
		var syncFn func() error
		if err == nil {
			var werr error
			if syncFn, werr = w.writeBatch(b); werr != nil {
				err = werr
			} else {
				logWrites.Add(1)
				now := time.Now()
				w.lastWrite.Store(int64(now.Sub(clockBase)))
				w.watchRate(now)
			}
		}
		w.mu.Lock()
		for _, c := range b.chunks { // written: the slabs can be reused
			for _, slab := range c.slabs {
				if len(w.mu.spare) < maxSpareSlabs {
					w.mu.spare = append(w.mu.spare, slab)
				}
			}
		}
		w.mu.Unlock()

		prev := lastDone
		lastDone = b.done
		w.syncs.Add(1)
		go func() {
			defer w.syncs.Done()
			if err == nil {
				if err = syncFn(); err == nil {
					w.stats.syncs.Add(1)
					w.stats.records.Add(b.lastLSN - b.chunks[0].firstLSN + 1)
				}
			}
			<-w.syncSem
			if prev != nil {
				<-prev
			}
			w.complete(b, err)
		}()
	}
}

// complete ends a batch, in order: durable if its write and sync worked
// and no earlier batch failed, failed (and the log with it) otherwise.
func (w *WAL) complete(b *batch, err error) {
	w.mu.Lock()
	if err != nil && !errors.Is(err, ErrFailed) {
		w.opts.Logger.WithError(err).Error("wal: write failed; the log accepts no more writes")
		err = fmt.Errorf("%w: %w", ErrFailed, err)
	}
	switch {
	case err != nil:
		if w.mu.err == nil {
			w.mu.err = err
		}
	case w.mu.err != nil:
		err = w.mu.err // an earlier batch failed: this one cannot be durable alone
	default:
		w.mu.durable = b.lastLSN
	}
	w.mu.inflight = w.mu.inflight[1:]
	if len(w.mu.inflight) == 0 {
		w.mu.wake.Signal() // a small pending batch may go now
	}
	w.mu.Unlock()
	b.err = err
	close(b.done)
}

// writeBatch writes a batch's records, rolling files where Append decided,
// and returns the sync that makes them durable.
func (w *WAL) writeBatch(b *batch) (func() error, error) {
	for _, c := range b.chunks {
		if c.seq != w.fileSeq {
			if err := w.roll(c); err != nil {
				return nil, err
			}
		}
		for _, slab := range c.slabs {
			if _, err := w.file.WriteAt(slab, w.fileOff); err != nil {
				return nil, fmt.Errorf("write %s at %d: %w", w.file.Name(), w.fileOff, err)
			}
			w.fileOff += int64(len(slab))
			w.stats.bytes.Add(uint64(len(slab)))
		}
	}
	return w.startSync(), nil
}

// startSync decides how to make what was written to the current file
// durable, and returns that: fdatasync if every write fell within the
// file's size on disk, fsync if the file grew (its new size is metadata
// that must be durable too).
func (w *WAL) startSync() func() error {
	f := w.file
	if w.fileOff <= w.fileAlloc {
		return func() error {
			if err := f.SyncData(); err != nil {
				return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
			}
			return nil
		}
	}
	w.fileAlloc = w.fileOff // a later batch within it completes after this one
	return func() error {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", f.Name(), err)
		}
		w.stats.growSyncs.Add(1)
		return nil
	}
}

// roll makes the current file durable and closed, and starts the next one:
// the preallocated spare if one is ready, else a file that grows.
func (w *WAL) roll(c chunk) error {
	w.syncs.Wait() // no sync may still use the file being closed
	if err := w.Err(); err != nil {
		// An earlier batch's sync of this file failed: its pages may never
		// reach the disk, so the file is not whole; start no file after it.
		return err
	}
	if err := w.startSync()(); err != nil {
		return fmt.Errorf("before roll: %w", err)
	}
	w.stats.syncs.Add(1)
	if err := w.file.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.file.Name(), err)
	}
	h := fileHeader{seq: c.seq, firstLSN: c.firstLSN}
	w.mu.Lock()
	early := w.mu.earlySeq == c.seq
	w.mu.Unlock()
	alloc, err := w.useSpare(h)
	if err != nil {
		return fmt.Errorf("roll to %s: %w", w.path(c.seq), err)
	}
	w.stats.rolls.Add(1)
	if alloc > 0 {
		w.stats.spareRolls.Add(1)
		if early {
			w.stats.earlyRolls.Add(1)
		}
	}
	if !early || w.opts.alwaysSpare {
		// An early roll says nothing of how fast files fill: the
		// flusher's rate window asks for the next spare (watchRate).
		w.maybeKickSpare()
	}
	if alloc == 0 {
		if err := w.createFile(h); err != nil {
			return fmt.Errorf("roll to %s: %w", w.path(c.seq), err)
		}
		alloc = FileHeaderSize
	}
	f, err := w.fs.OpenFile(w.path(c.seq), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", w.path(c.seq), err)
	}
	w.file, w.fileSeq, w.fileOff, w.fileAlloc = f, c.seq, FileHeaderSize, alloc
	w.fileStart = time.Now()
	w.mu.Lock()
	w.mu.files = append(w.mu.files, h)
	w.mu.growingSeq = 0
	if alloc < w.opts.FileSize {
		w.mu.growingSeq = c.seq
	}
	w.mu.Unlock()
	return nil
}

// ReadAt reads the durable record at addr, verifying its checksum. The
// caller must only ask for addresses of records it knows to be durable.
func (w *WAL) ReadAt(addr Addr) (Record, error) {
	f, err := w.reader(addr.File)
	if err != nil {
		return Record{}, err
	}
	var hdr [RecordHeaderSize]byte
	if _, err := f.ReadAt(hdr[:], addr.Offset); err != nil {
		return Record{}, fmt.Errorf("%w: %s offset %d: %v", ErrNotFound, f.Name(), addr.Offset, err)
	}
	length := int(uint32(hdr[4]) | uint32(hdr[5])<<8 | uint32(hdr[6])<<16 | uint32(hdr[7])<<24)
	if length > MaxPayloadSize {
		return Record{}, fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, f.Name(), addr.Offset, errBadLength)
	}
	buf := make([]byte, RecordHeaderSize+length)
	if _, err := f.ReadAt(buf, addr.Offset); err != nil {
		return Record{}, fmt.Errorf("wal: read %s offset %d: %w", f.Name(), addr.Offset, err)
	}
	typ, lsn, _, payload, _, err := decodeAnyRecord(buf)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, f.Name(), addr.Offset, err)
	}
	return Record{LSN: lsn, Type: typ, Payload: payload, Addr: addr}, nil
}

func (w *WAL) reader(seq uint64) (vfs.File, error) {
	w.readers.Lock()
	defer w.readers.Unlock()
	if f, ok := w.readers.files[seq]; ok {
		return f, nil
	}
	if w.readers.files == nil {
		return nil, ErrClosed
	}
	f, err := w.fs.OpenFile(w.path(seq), os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: file %s does not exist", ErrNotFound, w.path(seq))
		}
		return nil, fmt.Errorf("wal: open %s: %w", w.path(seq), err)
	}
	w.readers.files[seq] = f
	return f, nil
}

// RemoveBefore deletes the files all of whose records have LSN < lsn; the
// file being appended to is never removed. It is for the tiering that
// moves data out of the log; it returns how many files it removed.
func (w *WAL) RemoveBefore(lsn uint64) (int, error) {
	w.mu.Lock()
	var doomed []uint64
	for len(w.mu.files) > 1 && w.mu.files[1].firstLSN <= lsn {
		doomed = append(doomed, w.mu.files[0].seq)
		w.mu.files = w.mu.files[1:]
	}
	w.mu.Unlock()
	for i, seq := range doomed {
		w.readers.Lock()
		if f, ok := w.readers.files[seq]; ok {
			f.Close()
			delete(w.readers.files, seq)
		}
		w.readers.Unlock()
		if err := w.remove(w.path(seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return i, fmt.Errorf("wal: remove %s: %w", w.path(seq), err)
		}
	}
	if len(doomed) > 0 {
		if err := w.fs.SyncDir(w.opts.Dir); err != nil {
			return len(doomed), fmt.Errorf("wal: sync %s: %w", w.opts.Dir, err)
		}
	}
	return len(doomed), nil
}

// Close writes and syncs everything queued, stops the flusher and closes
// the files. It returns the log's failure, if it had one.
func (w *WAL) Close() error {
	w.mu.Lock()
	if w.mu.closed {
		w.mu.Unlock()
		<-w.stopped
		<-w.spareDone
		return nil
	}
	w.mu.closed = true
	w.mu.wake.Broadcast()
	w.mu.Unlock()
	<-w.stopped
	close(w.stopSpare)
	<-w.spareDone
	var err error
	if w.file != nil {
		err = w.file.Close()
	}
	w.closeReaders()
	if ferr := w.Err(); ferr != nil {
		return ferr
	}
	return err
}

func (w *WAL) closeReaders() {
	w.readers.Lock()
	defer w.readers.Unlock()
	for _, f := range w.readers.files {
		f.Close()
	}
	w.readers.files = nil
}
