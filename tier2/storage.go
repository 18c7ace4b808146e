package tier2

import (
	"errors"
	"io"
	"io/fs"
	"time"
)

// Errors shared by every backend; classify with errors.Is. A backend wraps
// them with the path and its own detail.
var (
	// ErrNotExist: no file or directory at the path (the same value as
	// io/fs.ErrNotExist, so os and HDFS errors match it too).
	ErrNotExist = fs.ErrNotExist
	// ErrExist: Create found a file already at the path.
	ErrExist = fs.ErrExist
	// ErrInvalidPath: the path is absolute, empty, or has ".", ".." or
	// empty elements.
	ErrInvalidPath = errors.New("tier2: invalid path")
	// ErrUnavailable: the backend cannot be reached or refused the call
	// for a reason that may pass (a NameNode down, a full disk). The
	// caller retries later; nothing acknowledged depends on it.
	ErrUnavailable = errors.New("tier2: storage unavailable")
)

// FileInfo describes one entry of a directory.
type FileInfo struct {
	// Name is the entry's base name.
	Name    string
	Size    int64
	IsDir   bool
	ModTime time.Time
}

// Storage is chunk storage: a tree of files under one root. Methods are
// safe for concurrent use. Paths are relative to the root (see the
// package doc); a bad path fails with ErrInvalidPath and touches nothing.
type Storage interface {
	// Create makes a new, empty file at path for writing, creating its
	// parent directories. It fails with ErrExist if the path is taken.
	Create(path string) (Writer, error)
	// Open opens the file at path for reading.
	Open(path string) (Reader, error)
	// Stat describes the file or directory at path.
	Stat(path string) (FileInfo, error)
	// List returns the entries of the directory at dir ("" is the root),
	// sorted by name. A missing directory is ErrNotExist.
	List(dir string) ([]FileInfo, error)
	// Rename moves the file at from to to, replacing a file already at
	// to, atomically, and makes the move durable before it returns. The
	// parent directory of to must exist (Create made it).
	Rename(from, to string) error
	// Remove deletes the file or empty directory at path; a missing path
	// is ErrNotExist.
	Remove(path string) error
	// RemoveAll deletes path and everything under it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// Close releases the backend's connections.
	Close() error
}

// Writer writes a new file. Close makes what was written durable (fsync
// on a filesystem, the file completed on its DataNodes in HDFS) and
// reports any error that kept it from being so; a file whose Close failed
// must not be renamed into place.
type Writer interface {
	io.Writer
	Close() error
}

// Aborter is implemented by a Writer that can be given up without making
// what was written durable (tier2/fs: closed without an fsync). The caller
// removes the file after.
type Aborter interface {
	Abort() error
}

// Abort gives up w, a file that will be removed: w.Abort if w is an
// Aborter, else w.Close.
func Abort(w Writer) error {
	if a, ok := w.(Aborter); ok {
		return a.Abort()
	}
	return w.Close()
}

// Reader reads a file at any offset; it is safe for concurrent ReadAt.
type Reader interface {
	io.ReaderAt
	// Size is the file's length when it was opened.
	Size() int64
	Close() error
}

// Paced is implemented by a Writer that paces its writes to leave the
// disk to others (tier2/fs: it pauses after each range it waited for).
// Unpaced turns that off for the rest of the file, for a writer that is
// behind its deadline. Call it before the first Write.
type Paced interface {
	Unpaced()
}
