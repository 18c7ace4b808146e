package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// File is an open file. Writes are appends when the file was opened with
// os.O_APPEND; ReadAt may be called concurrently with other ReadAt calls.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	// Sync flushes the file's data and metadata to stable storage (fsync).
	Sync() error
	// SyncData flushes the file's data, and only the metadata needed to
	// read it back (fdatasync). It suffices after writes that did not
	// change the file's size, such as writes into a preallocated file.
	SyncData() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Stat describes the file.
	Stat() (os.FileInfo, error)
	// Name is the path the file was opened with.
	Name() string
}

// FS is the set of filesystem operations the node's durable files use.
// Paths are ordinary OS paths.
type FS interface {
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Rename renames a file, replacing newname if it exists.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the entries of dir (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
	// Stat describes the named file.
	Stat(name string) (os.FileInfo, error)
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

type osFile struct{ *os.File }

func (f osFile) SyncData() error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error {
	return os.MkdirAll(dir, perm)
}
func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// WriteFileAtomic makes a file appear whole under name: it writes data to a
// temporary name in the same directory, fsyncs it, renames it into place and
// fsyncs the directory. A crash leaves either the old file or the new one,
// never a part of either (a stray temporary file may remain; its name starts
// with ".tmp-").
func WriteFileAtomic(fs FS, name string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(name)
	tmp := filepath.Join(dir, ".tmp-"+base)
	f, err := fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp)
		return err
	}
	if dir == "" {
		dir = "."
	}
	return fs.SyncDir(dir)
}

// ReadFile reads a whole file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// RemoveAll removes path and everything under it through fs; a missing
// path is not an error. A symbolic link is removed, not followed, when fs
// can tell (Lstater).
func RemoveAll(fs FS, path string) error {
	stat := fs.Stat
	if l, ok := fs.(Lstater); ok {
		stat = l.Lstat // a link is removed, never followed
	}
	st, err := stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		names, err := fs.List(path)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := RemoveAll(fs, filepath.Join(path, n)); err != nil {
				return err
			}
		}
	}
	if err := fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
