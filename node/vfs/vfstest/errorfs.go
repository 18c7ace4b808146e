package vfstest

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sluice-streams/sluice/node/vfs"
)

// Op names the filesystem operation an Injector is asked about.
type Op int

// The operations an ErrorFS can fail.
const (
	OpOpen Op = iota
	OpWrite
	OpSync
	OpRead
	OpTruncate
	OpRename
	OpRemove
	OpSyncDir
	OpMkdir
	OpSyncData
	numOps
)

var opNames = [...]string{"open", "write", "sync", "read", "truncate", "rename", "remove", "syncdir", "mkdir", "syncdata"}

func (o Op) String() string {
	if o < 0 || o >= numOps {
		return "unknown"
	}
	return opNames[o]
}

// ErrInjected is the error an injector returns when it has nothing more
// specific to say.
var ErrInjected = errors.New("vfstest: injected fault")

// Injector decides the fate of one operation on path: nil lets it run,
// an error fails it. An injector may block to hold an operation until the
// test releases it.
type Injector func(op Op, path string) error

// ErrorFS wraps an FS and consults an Injector before every operation.
// With TornWrites set, a failed write first writes half of its buffer, as a
// crash in the middle of a write leaves it. With SetFreeSpace, it also
// models a disk of limited size (see space.go).
type ErrorFS struct {
	fs         vfs.FS
	inject     atomic.Pointer[Injector]
	TornWrites bool

	mu     sync.Mutex
	counts [numOps]int

	space struct {
		sync.Mutex
		limited bool
		free    int64
	}
}

// New wraps fs.
func New(fs vfs.FS) *ErrorFS { return &ErrorFS{fs: fs} }

// SetInjector replaces the injector; nil removes it.
func (e *ErrorFS) SetInjector(fn Injector) {
	if fn == nil {
		e.inject.Store(nil)
		return
	}
	e.inject.Store(&fn)
}

// Count reports how many times op has been attempted.
func (e *ErrorFS) Count(op Op) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[op]
}

func (e *ErrorFS) check(op Op, path string) error {
	e.mu.Lock()
	e.counts[op]++
	e.mu.Unlock()
	if fn := e.inject.Load(); fn != nil {
		return (*fn)(op, path)
	}
	return nil
}

// OpenFile implements vfs.FS.
func (e *ErrorFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if err := e.check(OpOpen, name); err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	e.space.Lock()
	defer e.space.Unlock()
	var before int64
	if flag&os.O_TRUNC != 0 {
		before = e.sizeOf(name)
	}
	f, err := e.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	e.releaseLocked(before)
	return &errorFile{File: f, fs: e}, nil
}

// Rename implements vfs.FS.
func (e *ErrorFS) Rename(oldname, newname string) error {
	if err := e.check(OpRename, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	e.space.Lock()
	defer e.space.Unlock()
	replaced := e.sizeOf(newname)
	if err := e.fs.Rename(oldname, newname); err != nil {
		return err
	}
	e.releaseLocked(replaced)
	return nil
}

// Remove implements vfs.FS.
func (e *ErrorFS) Remove(name string) error {
	if err := e.check(OpRemove, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	e.space.Lock()
	defer e.space.Unlock()
	size := e.sizeOf(name)
	if err := e.fs.Remove(name); err != nil {
		return err
	}
	e.releaseLocked(size)
	return nil
}

// MkdirAll implements vfs.FS.
func (e *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.check(OpMkdir, dir); err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return e.fs.MkdirAll(dir, perm)
}

// List implements vfs.FS.
func (e *ErrorFS) List(dir string) ([]string, error) { return e.fs.List(dir) }

// Stat implements vfs.FS.
func (e *ErrorFS) Stat(name string) (os.FileInfo, error) { return e.fs.Stat(name) }

// SyncDir implements vfs.FS.
func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.check(OpSyncDir, dir); err != nil {
		return &os.PathError{Op: "syncdir", Path: dir, Err: err}
	}
	return e.fs.SyncDir(dir)
}

type errorFile struct {
	vfs.File
	fs *ErrorFS
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.Name()); err != nil {
		n := 0
		if f.fs.TornWrites && len(p) > 1 {
			n, _ = f.File.Write(p[:len(p)/2])
		}
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.spaceWrite(p, -1, func(p []byte, _ int64) (int, error) { return f.File.Write(p) })
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpWrite, f.Name()); err != nil {
		n := 0
		if f.fs.TornWrites && len(p) > 1 {
			n, _ = f.File.WriteAt(p[:len(p)/2], off)
		}
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.spaceWrite(p, off, f.File.WriteAt)
}

func (f *errorFile) SyncData() error {
	if err := f.fs.check(OpSyncData, f.Name()); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return f.File.SyncData()
}

func (f *errorFile) Sync() error {
	if err := f.fs.check(OpSync, f.Name()); err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return f.File.Sync()
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpRead, f.Name()); err != nil {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return f.File.ReadAt(p, off)
}

func (f *errorFile) Read(p []byte) (int, error) {
	if err := f.fs.check(OpRead, f.Name()); err != nil {
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return f.File.Read(p)
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.check(OpTruncate, f.Name()); err != nil {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: err}
	}
	e := f.fs
	e.space.Lock()
	defer e.space.Unlock()
	var before int64
	if st, err := f.File.Stat(); err == nil {
		before = st.Size()
	}
	if e.space.limited && size-before > e.space.free {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: syscall.ENOSPC}
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	if e.space.limited {
		e.space.free += before - size
	}
	return nil
}
