package reclaim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node/vfs"
)

// Defaults of Config.
const (
	// DefaultRate is what a node frees per second while the backlog is
	// within MaxBacklog: the 4 GiB a deleted 2 GiB burst leaves (its log
	// files and its chunks) in about a minute, the device's discards
	// taking a few percent of its time meanwhile.
	DefaultRate = 64 << 20
	// DefaultStep is the bytes one truncate-and-sync frees: the discard
	// of a MiB held the syncs beside it for under a millisecond on the
	// virtual disk measured, where 4 MiB steps held them for 3 ms and
	// unlinking whole files for 10-30 ms (docs/BENCHMARKS.md).
	DefaultStep = 1 << 20
	// DefaultMaxBacklog is the most a Reclaimer keeps waiting before it
	// frees without pauses.
	DefaultMaxBacklog = 4 << 30
	// DefaultMinFree is the free space below which a Reclaimer frees
	// without pauses and without waiting out grace periods.
	DefaultMinFree = 1 << 30
)

// Config configures a Reclaimer.
type Config struct {
	// FS is the filesystem of the files handed to the Reclaimer
	// (vfs.Default if nil).
	FS vfs.FS
	// Rate is the bytes freed per second while the backlog is within
	// MaxBacklog; zero or less frees without pauses.
	Rate int64
	// Step is the bytes freed by one truncate and sync (DefaultStep if
	// zero or less).
	Step int64
	// MaxBacklog: while more bytes than this wait, files are freed
	// without pauses (DefaultMaxBacklog if zero or less).
	MaxBacklog int64
	// MinFree: while the filesystem of the file being freed has less
	// space free than this (when the FS can tell, vfs.FreeSpacer), files
	// are freed without pauses and grace periods are not waited out
	// (DefaultMinFree if zero or less).
	MinFree int64
	// Logger receives what could not be reclaimed (discarded if nil).
	Logger logrus.FieldLogger
}

// Reclaimer frees removed files' space in the background (see the package
// documentation). Its methods are safe for concurrent use; a nil
// *Reclaimer removes at once.
type Reclaimer struct {
	cfg  Config
	wake chan struct{} // a file was queued (capacity 1)
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the goroutine has returned
	seq  atomic.Uint64 // makes trash names unique within the process

	mu struct {
		sync.Mutex
		queue   []entry
		queued  map[string]bool // the paths in queue or being freed, so that Resume adds none twice
		busy    bool            // an entry taken from queue is being freed
		backlog int64           // bytes of the queued files not freed yet
		idle    []chan struct{} // closed once queue is empty and nothing is busy
		closed  bool
	}
	freed atomic.Int64 // bytes freed since New
}

// entry is a path in a trash directory: a file to cut down and unlink,
// or a directory to remove once the files queued before it are gone.
type entry struct {
	path string
	size int64
	dir  bool
	due  time.Time // not freed before (RemoveAfter's grace)
}

// New starts a Reclaimer; Close stops it.
func New(cfg Config) *Reclaimer {
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.Step <= 0 {
		cfg.Step = DefaultStep
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = DefaultMaxBacklog
	}
	if cfg.MinFree <= 0 {
		cfg.MinFree = DefaultMinFree
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	r := &Reclaimer{cfg: cfg, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.mu.queued = map[string]bool{}
	go r.run()
	return r
}

// Remove removes path, a file or a directory with everything under it,
// from the caller's point of view at once: it is renamed into trash, a
// directory on the same filesystem (made if missing), and freed in the
// background. The rename is not synced; a caller that needs the removal
// durable syncs path's directory, as after an unlink. Where the trash
// cannot take it (no space for the trash directory, another filesystem
// under a link) path is unlinked at once. A missing path is an error that
// matches os.ErrNotExist, as from os.Remove.
func (r *Reclaimer) Remove(path, trash string) error { return r.RemoveAfter(path, trash, 0) }

// RemoveAfter is Remove, with the freeing held off for grace: a reader
// that opened one of the files before it was removed reads it whole for
// that long, as it would after an unlink (for ever, then). The grace is
// not waited out while the disk is short of space (Config.MinFree).
func (r *Reclaimer) RemoveAfter(path, trash string, grace time.Duration) error {
	if r == nil {
		return removeNow(vfs.Default, path)
	}
	st, err := r.lstat(path)
	if err != nil {
		return err
	}
	to := filepath.Join(trash, fmt.Sprintf("%d-%d-%s", time.Now().UnixNano(), r.seq.Add(1), filepath.Base(path)))
	if err := r.cfg.FS.MkdirAll(trash, 0o755); err != nil {
		r.cfg.Logger.WithError(err).WithField("path", path).Warn("reclaim: no trash directory; removing at once")
		return removeNow(r.cfg.FS, path)
	}
	if err := r.cfg.FS.Rename(path, to); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return err
		}
		r.cfg.Logger.WithError(err).WithField("path", path).Warn("reclaim: cannot move into the trash; removing at once")
		return removeNow(r.cfg.FS, path)
	}
	due := time.Now().Add(grace)
	if !st.IsDir() {
		r.queue(entry{path: to, size: st.Size(), due: due})
		return nil
	}
	// Removed as far as the caller is concerned: what cannot be queued
	// now waits in the trash for the next Resume.
	if err := r.queueTree(to, due); err != nil {
		r.cfg.Logger.WithError(err).WithField("dir", to).Warn("reclaim: part of a removed directory left in the trash")
	}
	return nil
}

// Resume queues what trash holds (left by a crash or a Close before the
// Reclaimer got to it), skipping what is queued already. A missing trash
// directory is not an error.
func (r *Reclaimer) Resume(trash string) error { return r.ResumeAfter(trash, 0) }

// ResumeAfter is Resume with RemoveAfter's grace.
func (r *Reclaimer) ResumeAfter(trash string, grace time.Duration) error {
	if r == nil {
		return vfs.RemoveAll(vfs.Default, trash)
	}
	due := time.Now().Add(grace)
	names, err := r.cfg.FS.List(trash)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reclaim: list %s: %w", trash, err)
	}
	for _, n := range names {
		if err := r.queueTree(filepath.Join(trash, n), due); err != nil {
			return err
		}
	}
	return nil
}

// Backlog returns the bytes waiting to be freed.
func (r *Reclaimer) Backlog() int64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.backlog
}

// Freed returns the bytes freed since New.
func (r *Reclaimer) Freed() int64 {
	if r == nil {
		return 0
	}
	return r.freed.Load()
}

// WaitIdle waits until every file handed over so far is freed (or left
// in the trash after an error), or ctx ends.
func (r *Reclaimer) WaitIdle(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if len(r.mu.queue) == 0 && !r.mu.busy || r.mu.closed {
		r.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	r.mu.idle = append(r.mu.idle, ch)
	r.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the Reclaimer; what it did not free yet stays in the trash
// directories for the next Resume. It waits for the step under way.
func (r *Reclaimer) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		<-r.done
		return nil
	}
	r.mu.closed = true
	r.wakeIdleLocked()
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	return nil
}

// queueTree queues path: a file, or a directory's files (depth first)
// followed by the directory itself.
func (r *Reclaimer) queueTree(path string, due time.Time) error {
	st, err := r.lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reclaim: %w", err)
	}
	if !st.IsDir() {
		r.queue(entry{path: path, size: st.Size(), due: due})
		return nil
	}
	names, err := r.cfg.FS.List(path)
	if err != nil {
		return fmt.Errorf("reclaim: list %s: %w", path, err)
	}
	for _, n := range names {
		if err := r.queueTree(filepath.Join(path, n), due); err != nil {
			return err
		}
	}
	r.queue(entry{path: path, dir: true, due: due})
	return nil
}

func (r *Reclaimer) queue(e entry) {
	r.mu.Lock()
	if r.mu.queued[e.path] {
		r.mu.Unlock()
		return
	}
	r.mu.queued[e.path] = true
	r.mu.queue = append(r.mu.queue, e)
	r.mu.backlog += e.size
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next returns the oldest queued entry that is due, waiting for one;
// false once the Reclaimer is closed. done is the entry returned before,
// finished with.
func (r *Reclaimer) next(done entry) (entry, bool) {
	r.mu.Lock()
	delete(r.mu.queued, done.path)
	r.mu.busy = false
	r.mu.Unlock()
	for {
		r.mu.Lock()
		if len(r.mu.queue) == 0 {
			r.wakeIdleLocked()
		}
		if r.mu.closed {
			r.mu.Unlock()
			return entry{}, false
		}
		now, wait := time.Now(), time.Duration(-1)
		low := -1 // lowOnSpace, asked once per pass (-1: not yet)
		for i, e := range r.mu.queue {
			if e.due.After(now) && low < 0 {
				low = 0
				if r.lowOnSpace(e.path) {
					low = 1
				}
			}
			if e.due.After(now) && low == 0 {
				if d := e.due.Sub(now); wait < 0 || d < wait {
					wait = d
				}
				continue
			}
			r.mu.queue = slices.Delete(r.mu.queue, i, i+1)
			r.mu.busy = true
			r.mu.Unlock()
			return e, true
		}
		r.mu.Unlock()
		var t *time.Timer
		var due <-chan time.Time
		if wait >= 0 {
			t = time.NewTimer(wait)
			due = t.C
		}
		select {
		case <-r.wake:
		case <-due:
		case <-r.stop:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// lowOnSpace reports whether the filesystem of path has less than
// MinFree bytes free (false when the FS cannot tell).
func (r *Reclaimer) lowOnSpace(path string) bool {
	n, ok := vfs.FreeBytes(r.cfg.FS, filepath.Dir(path))
	return ok && n < r.cfg.MinFree
}

func (r *Reclaimer) wakeIdleLocked() {
	for _, ch := range r.mu.idle {
		close(ch)
	}
	r.mu.idle = nil
}

func (r *Reclaimer) run() {
	defer close(r.done)
	var e entry
	for {
		var ok bool
		if e, ok = r.next(e); !ok {
			return
		}
		if e.dir {
			if err := r.cfg.FS.Remove(e.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				r.cfg.Logger.WithError(err).WithField("dir", e.path).Warn("reclaim: directory left in the trash")
			}
			continue
		}
		r.free(e)
	}
}

// free cuts the file at e.path down step by step and unlinks it. Bytes it
// does not get to (Close, an error) leave the backlog all the same: they
// are counted again by the next Resume.
func (r *Reclaimer) free(e entry) {
	left := e.size
	defer func() {
		r.mu.Lock()
		r.mu.backlog -= left
		r.mu.Unlock()
	}()
	f, err := r.openForTruncate(e.path)
	if err == nil {
		err = r.cutDown(f, &left)
		f.Close()
	}
	if errors.Is(err, errStopped) {
		return
	}
	if err != nil {
		r.cfg.Logger.WithError(err).WithField("file", e.path).Warn("reclaim: removing the file whole")
	}
	if err := r.cfg.FS.Remove(e.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.cfg.Logger.WithError(err).WithField("file", e.path).Warn("reclaim: file left in the trash")
		return
	}
	r.freed.Add(left)
}

var errStopped = errors.New("reclaim: closed")

// cutDown truncates f from its end, Step bytes at a time, each step synced
// and followed by the pause the rate asks for; *left is what is still
// allocated.
func (r *Reclaimer) cutDown(f vfs.File, left *int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return fmt.Errorf("reclaim: %s has %d links: its blocks are not this name's alone", f.Name(), sys.Nlink)
	}
	size := st.Size()
	for size > 0 {
		start := time.Now()
		to := max(0, size-r.cfg.Step)
		if err := f.Truncate(to); err != nil {
			return err
		}
		if err := f.SyncData(); err != nil {
			return err
		}
		freed := size - to
		size = to
		*left = max(0, *left-freed)
		r.freed.Add(freed)
		r.took(freed)
		if err := r.pace(f.Name(), freed, time.Since(start)); err != nil {
			return err
		}
	}
	return nil
}

// took takes n freed bytes off the backlog.
func (r *Reclaimer) took(n int64) {
	r.mu.Lock()
	r.mu.backlog -= n
	r.mu.Unlock()
}

// pace waits until freeing n bytes of path, which took spent, is within
// the rate, unless the backlog is over its bound or the disk short of
// space.
func (r *Reclaimer) pace(path string, n int64, spent time.Duration) error {
	select {
	case <-r.stop:
		return errStopped
	default:
	}
	// The backlog as it was before these n bytes were freed.
	if r.cfg.Rate <= 0 || r.Backlog()+n > r.cfg.MaxBacklog || r.lowOnSpace(path) {
		return nil
	}
	wait := time.Duration(n*int64(time.Second)/r.cfg.Rate) - spent
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.stop:
		return errStopped
	case <-t.C:
		return nil
	}
}

// lstat describes path itself, not what a symbolic link points to, when
// the FS can: a link handed over is unlinked, never followed into someone
// else's files.
func (r *Reclaimer) lstat(path string) (os.FileInfo, error) {
	if l, ok := r.cfg.FS.(vfs.Lstater); ok {
		return l.Lstat(path)
	}
	return r.cfg.FS.Stat(path)
}

// openForTruncate opens path for writing, never through a symbolic link;
// a read-only file (tier 2's chunks are 0444) is made writable first when
// the FS can.
func (r *Reclaimer) openForTruncate(path string) (vfs.File, error) {
	if st, err := r.lstat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reclaim: %s is not a regular file", path)
	}
	const flag = os.O_WRONLY | syscall.O_NOFOLLOW
	f, err := r.cfg.FS.OpenFile(path, flag, 0)
	if errors.Is(err, os.ErrPermission) {
		if c, ok := r.cfg.FS.(vfs.Chmoder); ok {
			if c.Chmod(path, 0o600) == nil {
				f, err = r.cfg.FS.OpenFile(path, flag, 0)
			}
		}
	}
	return f, err
}

// removeNow removes path and everything under it.
func removeNow(fs vfs.FS, path string) error {
	stat := fs.Stat
	if l, ok := fs.(vfs.Lstater); ok {
		stat = l.Lstat // a dangling link is there to remove
	}
	if _, err := stat(path); err != nil {
		return err
	}
	return vfs.RemoveAll(fs, path)
}
