package tier2test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluice-streams/sluice/tier2"
)

// Op names an operation a Faulty can fail, hold and count.
type Op int

// The operations of a Storage, its Writers and its Readers. OpClose is
// Writer.Close (a Reader's Close is neither failed nor counted).
const (
	OpCreate Op = iota
	OpWrite
	OpClose
	OpOpen
	OpReadAt
	OpStat
	OpList
	OpRename
	OpRemove
	OpRemoveAll
	numOps
)

var opNames = [...]string{"create", "write", "close", "open", "readat", "stat", "list", "rename", "remove", "removeall"}

func (o Op) String() string {
	if o < 0 || o >= numOps {
		return "unknown"
	}
	return opNames[o]
}

// ErrInjected is the error of a fault armed without one.
var ErrInjected = errors.New("tier2test: injected fault")

// Fault is what an armed operation does.
type Fault struct {
	// Err is returned, wrapped with the operation and path (ErrInjected
	// if nil). Wrap tier2.ErrUnavailable in it for a fault that may pass.
	Err error
	// Times is how many matching calls fail; 0 means every one until
	// Disarm.
	Times int
	// Match, if set, limits the fault to the paths it returns true for.
	// For Rename it is asked about from and to; either matching counts.
	// For Write, Close and ReadAt the path is the one the file was
	// created or opened with.
	Match func(path string) bool
}

// Faulty wraps a Storage and fails, holds and counts its operations as a
// test arms it. It is safe for concurrent use, arming included.
type Faulty struct {
	s     tier2.Storage
	calls [numOps]atomic.Int64

	mu struct {
		sync.Mutex
		faults [numOps]*armed
		holds  [numOps][]*Hold
	}
}

type armed struct {
	Fault
	left int // calls still to fail when Times > 0
}

var _ tier2.Storage = (*Faulty)(nil)

// NewFaulty wraps s with nothing armed.
func NewFaulty(s tier2.Storage) *Faulty { return &Faulty{s: s} }

// Arm makes op fail as f says, replacing what was armed for op.
func (f *Faulty) Arm(op Op, fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults[op] = &armed{Fault: fault, left: fault.Times}
}

// Disarm removes op's fault; calls pass again.
func (f *Faulty) Disarm(op Op) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.faults[op] = nil
}

// DisarmAll removes every fault and releases every hold.
func (f *Faulty) DisarmAll() {
	f.mu.Lock()
	f.mu.faults = [numOps]*armed{}
	var holds []*Hold
	for op := range f.mu.holds {
		holds = append(holds, f.mu.holds[op]...)
	}
	f.mu.Unlock()
	for _, h := range holds {
		h.Release()
	}
}

// Calls reports how many times op was called, failed and held calls
// included.
func (f *Faulty) Calls(op Op) int { return int(f.calls[op].Load()) }

// Hold blocks the calls of op on paths match accepts (every path if match
// is nil) until Release. A held call then goes on to the armed fault, if
// any, and to the wrapped storage.
type Hold struct {
	f       *Faulty
	op      Op
	match   func(string) bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	n       atomic.Int64
}

// Hold starts holding op's calls on the paths match accepts.
func (f *Faulty) Hold(op Op, match func(path string) bool) *Hold {
	h := &Hold{f: f, op: op, match: match, entered: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	f.mu.holds[op] = append(f.mu.holds[op], h)
	f.mu.Unlock()
	return h
}

// Entered is closed once a call is blocked on the hold.
func (h *Hold) Entered() <-chan struct{} { return h.entered }

// Held reports how many calls have blocked on the hold so far.
func (h *Hold) Held() int { return int(h.n.Load()) }

// Release lets the held calls go on and stops holding; calling it again
// does nothing.
func (h *Hold) Release() {
	h.once.Do(func() {
		f := h.f
		f.mu.Lock()
		hs := f.mu.holds[h.op]
		for i, x := range hs {
			if x == h {
				f.mu.holds[h.op] = append(hs[:i:i], hs[i+1:]...)
				break
			}
		}
		f.mu.Unlock()
		close(h.release)
	})
}

// check counts a call of op on paths, waits out the holds that match and
// returns the injected error, if any.
func (f *Faulty) check(op Op, paths ...string) error {
	f.calls[op].Add(1)
	matches := func(match func(string) bool) bool {
		if match == nil {
			return true
		}
		for _, p := range paths {
			if match(p) {
				return true
			}
		}
		return false
	}
	f.mu.Lock()
	var wait []*Hold
	for _, h := range f.mu.holds[op] {
		if matches(h.match) {
			wait = append(wait, h)
		}
	}
	f.mu.Unlock()
	for _, h := range wait {
		if h.n.Add(1) == 1 {
			close(h.entered)
		}
		<-h.release
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.mu.faults[op]
	if a == nil || !matches(a.Match) {
		return nil
	}
	if a.Times > 0 {
		a.left--
		if a.left == 0 {
			f.mu.faults[op] = nil
		}
	}
	err := a.Err
	if err == nil {
		err = ErrInjected
	}
	if len(paths) == 2 {
		return fmt.Errorf("tier2test: %s %q to %q: %w", op, paths[0], paths[1], err)
	}
	return fmt.Errorf("tier2test: %s %q: %w", op, paths[0], err)
}

// Create implements tier2.Storage.
func (f *Faulty) Create(path string) (tier2.Writer, error) {
	if err := f.check(OpCreate, path); err != nil {
		return nil, err
	}
	w, err := f.s.Create(path)
	if err != nil {
		return nil, err
	}
	return &faultyWriter{w: w, f: f, path: path}, nil
}

// Open implements tier2.Storage.
func (f *Faulty) Open(path string) (tier2.Reader, error) {
	if err := f.check(OpOpen, path); err != nil {
		return nil, err
	}
	r, err := f.s.Open(path)
	if err != nil {
		return nil, err
	}
	return &faultyReader{Reader: r, f: f, path: path}, nil
}

// Stat implements tier2.Storage.
func (f *Faulty) Stat(path string) (tier2.FileInfo, error) {
	if err := f.check(OpStat, path); err != nil {
		return tier2.FileInfo{}, err
	}
	return f.s.Stat(path)
}

// List implements tier2.Storage.
func (f *Faulty) List(dir string) ([]tier2.FileInfo, error) {
	if err := f.check(OpList, dir); err != nil {
		return nil, err
	}
	return f.s.List(dir)
}

// Rename implements tier2.Storage.
func (f *Faulty) Rename(from, to string) error {
	if err := f.check(OpRename, from, to); err != nil {
		return err
	}
	return f.s.Rename(from, to)
}

// Remove implements tier2.Storage.
func (f *Faulty) Remove(path string) error {
	if err := f.check(OpRemove, path); err != nil {
		return err
	}
	return f.s.Remove(path)
}

// RemoveAll implements tier2.Storage.
func (f *Faulty) RemoveAll(path string) error {
	if err := f.check(OpRemoveAll, path); err != nil {
		return err
	}
	return f.s.RemoveAll(path)
}

// Close implements tier2.Storage; it closes the wrapped storage and
// releases every hold.
func (f *Faulty) Close() error {
	f.DisarmAll()
	return f.s.Close()
}

type faultyWriter struct {
	w    tier2.Writer
	f    *Faulty
	path string
}

// Write fails whole when a fault hits it: nothing reaches the file.
func (w *faultyWriter) Write(b []byte) (int, error) {
	if err := w.f.check(OpWrite, w.path); err != nil {
		return 0, err
	}
	return w.w.Write(b)
}

// Close closes the wrapped writer even when a fault hits it, as a failed
// fsync still releases the file, and then reports the fault.
func (w *faultyWriter) Close() error {
	ferr := w.f.check(OpClose, w.path)
	err := w.w.Close()
	if ferr != nil {
		return ferr
	}
	return err
}

type faultyReader struct {
	tier2.Reader
	f    *Faulty
	path string
}

func (r *faultyReader) ReadAt(b []byte, off int64) (int, error) {
	if err := r.f.check(OpReadAt, r.path); err != nil {
		return 0, err
	}
	return r.Reader.ReadAt(b, off)
}
