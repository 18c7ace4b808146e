package vfstest

import (
	"errors"
	"os"
	"syscall"

	"github.com/sluice-streams/sluice/node/vfs"
)

// The space model: with a limit set, every byte a file grows by is taken
// from a free-space count and every byte it loses (truncate, remove, a
// rename that replaces a file, an open with os.O_TRUNC) is given back. A
// write that does not fit writes what fits, as a full disk does, and fails
// with syscall.ENOSPC. Write (without an offset) is taken to extend the
// file, which is how the node's files use it (appends, or a file written
// front to back after os.O_TRUNC). Sizes count bytes, not blocks.

// SetFreeSpace limits how many bytes the files opened through e may grow
// by from now on; n < 0 removes the limit. Only files opened through e
// (and removals, truncations and renames through e) are counted.
func (e *ErrorFS) SetFreeSpace(n int64) {
	e.space.Lock()
	defer e.space.Unlock()
	e.space.limited = n >= 0
	e.space.free = n
}

// FreeSpace reports the bytes left under the limit, or -1 without one.
func (e *ErrorFS) FreeSpace() int64 {
	e.space.Lock()
	defer e.space.Unlock()
	if !e.space.limited {
		return -1
	}
	return e.space.free
}

// AddFreeSpace gives n more bytes to the limit, as deleting another file
// would; it has no effect without a limit.
func (e *ErrorFS) AddFreeSpace(n int64) {
	e.space.Lock()
	defer e.space.Unlock()
	e.space.free += n
}

// sizeOf is the size of the named file, 0 if it does not exist.
func (e *ErrorFS) sizeOf(name string) int64 {
	st, err := e.fs.Stat(name)
	if err != nil || st.IsDir() {
		return 0
	}
	return st.Size()
}

// release gives back n bytes, with the space lock held.
func (e *ErrorFS) releaseLocked(n int64) {
	if e.space.limited && n > 0 {
		e.space.free += n
	}
}

// spaceWrite runs a write of p at off (off < 0: at the end of the file)
// under the space limit.
func (f *errorFile) spaceWrite(p []byte, off int64, write func([]byte, int64) (int, error)) (int, error) {
	e := f.fs
	e.space.Lock()
	defer e.space.Unlock()
	if !e.space.limited {
		return write(p, off)
	}
	var size int64
	if st, err := f.File.Stat(); err == nil {
		size = st.Size()
	}
	if off < 0 {
		off = size
	}
	fits := int64(len(p))
	if end := off + fits; end > size && end-size > e.space.free {
		fits = max(0, size+e.space.free-off)
	}
	n, err := write(p[:fits], off)
	if grew := off + int64(n) - size; grew > 0 {
		e.space.free -= grew
	}
	if err == nil && fits < int64(len(p)) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

// FreeBytes reports the bytes left under the limit, or, without one,
// what the underlying FS reports (vfs.FreeSpacer).
func (e *ErrorFS) FreeBytes(dir string) (int64, error) {
	if n := e.FreeSpace(); n >= 0 {
		return n, nil
	}
	if n, ok := vfs.FreeBytes(e.fs, dir); ok {
		return n, nil
	}
	return 0, errors.ErrUnsupported
}
