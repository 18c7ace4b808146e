package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/node/vfs"
)

// The spare is the next log file, zero-filled to FileSize ahead of time by
// a background goroutine, so that a roll costs a header write and a rename
// instead of growing a file under the appends, and the appends into it can
// be made durable with fdatasync.
const (
	spareName    = ".spare"
	spareTmpName = ".spare.tmp"
)

func (w *WAL) sparePath() string { return filepath.Join(w.opts.Dir, spareName) }

// initSpare adopts a complete spare left by an earlier run (it is renamed
// into place only when whole) and removes a partial one. If there is none
// and the last file grows (a new log's first file, or one a fast fill
// rolled to), it asks for one at once: the appends that come go to a file
// synced with fsync until the log can roll early into a spare, and a node
// that has just started is idle, so its spares are made at the disk's
// speed (see spareChunk). Otherwise the next spare is asked for once the
// log is written (watchRate) or at a roll (maybeKickSpare).
func (w *WAL) initSpare() {
	w.fs.Remove(filepath.Join(w.opts.Dir, spareTmpName))
	if !w.opts.Preallocate {
		return
	}
	if st, err := w.fs.Stat(w.sparePath()); err == nil && st.Size() == w.opts.FileSize {
		w.spare.Lock()
		w.spare.ready = true
		w.spareOK.Store(true)
		w.spare.Unlock()
		return
	}
	w.fs.Remove(w.sparePath())
	if w.fileAlloc < w.opts.FileSize {
		w.askSpare(0)
	}
}

// maybeKickSpare asks for the next spare after a roll, unless the file
// just finished filled up in less than twice the disk time the last spare
// took (its writes and syncs, not its rests): then the log is writing
// faster than spares can be made, they
// would rarely be ready and would only take disk time from the appends,
// so rolls go to growing files until the log slows down.
func (w *WAL) maybeKickSpare() {
	if !w.opts.Preallocate {
		return
	}
	w.spare.Lock()
	took := w.spare.took
	w.spare.Unlock()
	fill := time.Since(w.fileStart)
	if fill < 2*took && !w.opts.alwaysSpare {
		return
	}
	w.spare.Lock()
	w.spare.budget = fill / 2
	w.spare.asked = true
	w.spare.Unlock()
	w.kick()
}

// kick asks the spare goroutine for a new spare, without waiting.
func (w *WAL) kick() {
	select {
	case w.kickSpare <- struct{}{}:
	default:
	}
}

// spareRetry is how long after a failed spare (a full disk, say) the rate
// window waits before it asks again; a roll still asks at once.
const spareRetry = 10 * time.Second

// spareLoop makes a new spare whenever it is asked to, until Close.
func (w *WAL) spareLoop() {
	defer close(w.spareDone)
	for {
		select {
		case <-w.stopSpare:
			return
		case <-w.kickSpare:
			err := w.makeSpare()
			if err != nil && !errors.Is(err, errStopped) {
				w.opts.Logger.WithError(err).Warn("wal: could not preallocate the next log file; the next roll makes a growing file")
			}
			w.spare.Lock()
			w.spare.asked = false
			if err != nil {
				w.spare.retryAt = time.Now().Add(spareRetry)
			}
			w.spare.Unlock()
		}
	}
}

var errStopped = errors.New("wal: stopped")

// errNoRoom: the disk has too little room for a spare beside the log.
var errNoRoom = errors.New("wal: too little free space for a spare")

// Zero-filling competes with the appends for the disk, so it is done in
// pieces (spareChunk, each written back to the disk before the next, so no
// large flush builds up), spread over half the time the previous file took
// to fill (the budget), and never faster than a quarter of the disk's time
// (spareIdle) while any log of the process takes appends: a piece this
// small holds an append's fdatasync for about a write of its own size.
// While no log has written since the last piece, the next one follows at
// once: an idle node makes its spares at the disk's speed.
//
// Each piece is written back with sync_file_range (writeback), not
// fdatasync: the spare grows as it is filled, so each fdatasync of it
// committed the filesystem's journal, waiting for and delaying the log's
// own syncs, and a 64 MiB spare took 2048 of them (measured on a loaded
// machine: 35-42 s for a spare in 32 KiB pieces with fdatasync, 16-20 s
// with sync_file_range, 2.5-4.5 s in 256 KiB pieces).
//
// While the log itself writes into a growing file, its spare is what ends
// the fsyncs, which cost more than the zero-filling's share of the disk
// (measured in process at 10 MB/s: 4.0 s in fsync for as many syncs as
// took 1.85 s in fdatasync, against 0.96 s of writeback for the whole
// spare), so it rests only as long as each piece took (spareUrgentIdle).
const (
	spareChunk      = 128 << 10
	spareIdle       = 3
	spareUrgentIdle = 1
)

// logWrites counts the batches every log of the process has written, so
// that zero-filling can tell an idle node (see spareChunk).
var logWrites atomic.Uint64

// clockBase is what WAL.lastWrite counts from (monotonic).
var clockBase = time.Now()

// spareUrgent reports whether this log needs its spare now: its appends
// go to a growing file, and it wrote within the last rateWindowLen. A log
// that grows but is idle, or writes into a preallocated file, can wait.
func (w *WAL) spareUrgent() bool {
	last := w.lastWrite.Load()
	if last == 0 || time.Since(clockBase)-time.Duration(last) >= rateWindowLen {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.growingSeq != 0
}

// makeSpare zero-fills a new spare, paced (see spareChunk).
func (w *WAL) makeSpare() error {
	w.spare.Lock()
	ready := w.spare.ready
	w.spare.Unlock()
	if ready {
		return nil
	}
	tmp := filepath.Join(w.opts.Dir, spareTmpName)
	f, err := w.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	abandon := func(err error) error {
		f.Close()
		w.fs.Remove(tmp)
		return err
	}
	if !spareTurn.acquire(w.spareUrgent, w.stopSpare) {
		return abandon(errStopped)
	}
	held := true
	defer func() {
		if held {
			spareTurn.release()
		}
	}()
	w.spare.Lock()
	budget := w.spare.budget
	w.spare.Unlock()
	chunks := (w.opts.FileSize + spareChunk - 1) / spareChunk
	var work time.Duration // time spent writing and syncing
	idleSince := logWrites.Load()
	zeros := make([]byte, min(spareChunk, w.opts.FileSize))
	for off := int64(0); off < w.opts.FileSize; off += int64(len(zeros)) {
		if off > 0 && !w.spareUrgent() && spareTurn.urgentWaiting() {
			// Another log writes into a growing file: its spare first.
			spareTurn.release()
			if held = spareTurn.acquire(w.spareUrgent, w.stopSpare); !held {
				return abandon(errStopped)
			}
			idleSince = logWrites.Load()
		}
		// The spare must not take the room the log's own appends need:
		// it goes on only while what it still needs leaves a whole file
		// free for the growing file (checked before every piece: another
		// process may fill the disk meanwhile).
		if free, ok := vfs.FreeBytes(w.fs, w.opts.Dir); ok && free < 2*w.opts.FileSize-off {
			return abandon(fmt.Errorf("%w: %d bytes free, the spare needs %d more and leaves a file's %d for the log",
				errNoRoom, free, w.opts.FileSize-off, w.opts.FileSize))
		}
		start := time.Now()
		n := min(int64(len(zeros)), w.opts.FileSize-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return abandon(err)
		}
		if err := writeback(f, off, n); err != nil {
			return abandon(err)
		}
		took := time.Since(start)
		work += took
		if writes := logWrites.Load(); writes == idleSince {
			// No log wrote during this piece: nothing to make way for.
			select {
			case <-w.stopSpare:
				return abandon(errStopped)
			default:
				continue
			}
		} else {
			idleSince = writes
		}
		idle := time.Duration(spareIdle)
		if w.spareUrgent() {
			idle, budget = spareUrgentIdle, 0
		}
		rest := time.NewTimer(max(idle*took, budget/time.Duration(chunks)-took))
		select {
		case <-w.stopSpare:
			rest.Stop()
			return abandon(errStopped)
		case <-rest.C:
		}
	}
	if err := f.Sync(); err != nil {
		return abandon(err)
	}
	if err := f.Close(); err != nil {
		w.fs.Remove(tmp)
		return err
	}
	// Outside the lock: the flusher takes it after every batch while no
	// spare is ready (watchRate), and must not wait for a directory
	// sync. No roll touches the spare meanwhile: ready is false until it
	// is whole, named and durable.
	if err := w.fs.Rename(tmp, w.sparePath()); err != nil {
		w.fs.Remove(tmp)
		return err
	}
	if err := w.fs.SyncDir(w.opts.Dir); err != nil {
		return err
	}
	w.spare.Lock()
	defer w.spare.Unlock()
	w.spare.ready = true
	w.spareOK.Store(true)
	w.spare.asked = false
	w.spare.took = work
	return nil
}

// useSpare turns the ready spare into the log file h, whole or not at all:
// the header is written into the spare and made durable before the rename.
// It returns the new file's size, or 0 if no spare was ready.
func (w *WAL) useSpare(h fileHeader) (int64, error) {
	if !w.opts.Preallocate {
		return 0, nil
	}
	w.spare.Lock()
	defer w.spare.Unlock()
	if !w.spare.ready {
		return 0, nil
	}
	w.spare.ready = false
	w.spareOK.Store(false)
	f, err := w.fs.OpenFile(w.sparePath(), os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("open spare: %w", err)
	}
	if _, err := f.WriteAt(h.encode(), 0); err != nil {
		f.Close()
		return 0, fmt.Errorf("write header into spare: %w", err)
	}
	if err := f.SyncData(); err != nil {
		f.Close()
		return 0, fmt.Errorf("sync spare: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := w.fs.Rename(w.sparePath(), w.path(h.seq)); err != nil {
		return 0, err
	}
	if err := w.fs.SyncDir(w.opts.Dir); err != nil {
		return 0, err
	}
	return w.opts.FileSize, nil
}

// A growing file is synced with fsync, which commits the filesystem's
// journal on every sync (measured in process: p50 ~330 us, p99 ~1.8 ms,
// against ~100 / 280 us for fdatasync in a preallocated file). A log
// writes into one when it is new (its first file grows) and after a fast
// fill, when rolls made growing files (maybeKickSpare). So the log does
// not wait for the next roll to ask for a spare: the flusher watches the
// write rate over windows of rateWindowLen, and asks for one as soon as
// the log is slow enough to afford it; once it is ready, the next append
// into the growing file rolls early into it (rollEarlyLocked). A short
// file is nothing new to recovery: it is fsynced whole before the next
// one starts, like any file that ended because a record did not fit.
const rateWindowLen = 250 * time.Millisecond

// rateWindow is what the flusher measures the log's write rate over.
type rateWindow struct {
	start time.Time
	bytes uint64 // the log's bytes written (stats.bytes) at start
}

func (r *rateWindow) reset(now time.Time, bytes uint64) { r.start, r.bytes = now, bytes }

// watchRate runs in the flusher after each batch. It asks for a spare
// when none is ready or asked for and the log's rate over the last window
// would fill a file in at least twice the disk time the last spare took
// (the rule maybeKickSpare applies at a roll, applied as soon as the rate
// changes). A log that has made no spare yet in this process asks at once
// if its file grows: a new log's first appends.
func (w *WAL) watchRate(now time.Time) {
	if !w.opts.Preallocate || w.spareOK.Load() {
		return
	}
	bytes := w.stats.bytes.Load()
	w.spare.Lock()
	asked, took := w.spare.asked || now.Before(w.spare.retryAt), w.spare.took
	w.spare.Unlock()
	if asked {
		w.rate.reset(now, bytes)
		return
	}
	if took == 0 && w.fileAlloc < w.opts.FileSize {
		w.askSpare(0)
		w.rate.reset(now, bytes)
		return
	}
	elapsed := now.Sub(w.rate.start)
	if elapsed < rateWindowLen {
		return
	}
	written := bytes - w.rate.bytes
	w.rate.reset(now, bytes)
	fill := time.Duration(1<<62 - 1) // nothing written: the log is idle
	if written > 0 {
		fill = time.Duration(float64(elapsed) * float64(w.opts.FileSize) / float64(written))
	}
	if fill < 2*took && !w.opts.alwaysSpare {
		return
	}
	// Spread the zero-filling over half the time a file takes to fill at
	// this rate, but no more than a few seconds: an idle log's fill time
	// is unbounded, and its spare may as well be ready soon.
	w.askSpare(min(fill/2, maxSpareBudget))
}

// maxSpareBudget bounds how long a spare asked for by watchRate is spread
// over.
const maxSpareBudget = 10 * time.Second

// askSpare asks the spare goroutine for a spare zero-filled over budget.
func (w *WAL) askSpare(budget time.Duration) {
	w.spare.Lock()
	w.spare.budget = budget
	w.spare.asked = true
	w.spare.Unlock()
	w.kick()
}

// rollEarlyLocked reports whether the next record should start a new file
// although it fits in the current one: the current file grows as it is
// written (synced with fsync) and a spare is ready (synced with
// fdatasync). An empty file is never left early.
func (w *WAL) rollEarlyLocked() bool {
	return w.mu.growingSeq != 0 && w.mu.growingSeq == w.mu.tailSeq && w.mu.tailSize > FileHeaderSize && w.spareOK.Load()
}
