package fs

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/tier2"
)

// Modes of what a Storage creates (see package tier2).
const (
	fileMode = 0o444
	dirMode  = 0o755
)

// Storage is a tier2.Storage over the directory root. It is safe for
// concurrent use; Close is a no-op.
type Storage struct {
	root string
	// dirs are directories (storage paths) this Storage made or found,
	// whose entries in their parents were fsynced: Create skips mkdirAll
	// for them. Remove, RemoveAll and Rename forget the paths they may
	// have removed (dirs.go).
	dirs knownDirs
	// reclaim, if set (SetReclaimer), takes over removed files, freed
	// after grace.
	reclaim Reclaimer
	grace   time.Duration
}

// Reclaimer frees removed files' space in the background, a little at a
// time (the node's reclaim.Reclaimer): RemoveAfter renames path, a file or
// a directory, into the directory trash and frees it once grace has
// passed; ResumeAfter takes up what a crash left in trash.
type Reclaimer interface {
	RemoveAfter(path, trash string, grace time.Duration) error
	ResumeAfter(trash string, grace time.Duration) error
}

// TrashDir is the storage path of the directory where removed files wait
// for the Storage's Reclaimer.
const TrashDir = "_sluice/trash"

// ReadGrace is how long a node lets a removed file keep its bytes in the
// trash before its Reclaimer starts freeing them (SetReclaimer's grace): a
// reader that opened it before the removal (a head streaming the chunk, a
// catch-up read) reads it whole within that time, as it would after an
// unlink.
const ReadGrace = time.Minute

// SetReclaimer makes Remove and RemoveAll (of anything but the root) hand
// what they remove to r, through TrashDir, freed once grace has passed,
// and hands r what TrashDir already holds. Call it before the Storage is
// used.
func (s *Storage) SetReclaimer(r Reclaimer, grace time.Duration) error {
	s.reclaim, s.grace = r, grace
	if err := r.ResumeAfter(filepath.Join(s.root, TrashDir), grace); err != nil {
		return fmt.Errorf("fs: %w", err)
	}
	return nil
}

// removeName removes the file or directory tree at name, the full path of
// a storage path: through the Reclaimer if there is one. Directories
// removed alone have no blocks to free and go at once (Remove refuses a
// full one, as rmdir does).
func (s *Storage) removeName(name string, tree bool) error {
	if s.reclaim != nil && (tree || !isDir(name)) {
		err := s.reclaim.RemoveAfter(name, filepath.Join(s.root, TrashDir), s.grace)
		if tree && errors.Is(err, os.ErrNotExist) {
			return nil // as os.RemoveAll
		}
		return err
	}
	if tree {
		return os.RemoveAll(name)
	}
	return os.Remove(name)
}

func isDir(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.IsDir()
}

var (
	_ tier2.Storage = (*Storage)(nil)
	_ tier2.Paced   = (*writer)(nil)
)

// New returns a Storage over root, creating the directory (and its
// parents) if it is missing.
func New(root string) (*Storage, error) {
	if root == "" {
		return nil, errors.New("fs: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fs: root %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, dirMode); err != nil {
		return nil, fmt.Errorf("fs: root %q: %w", root, classify(err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("fs: root %q: %w", root, classify(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("fs: root %q is not a directory", root)
	}
	return &Storage{root: abs}, nil
}

// Root is the absolute directory the storage lives in.
func (s *Storage) Root() string { return s.root }

// full checks p and returns where it lives on disk. The root itself ("")
// is accepted only when allowRoot is set.
func (s *Storage) full(p string, allowRoot bool) (string, error) {
	if err := tier2.CheckPath(p); err != nil {
		return "", fmt.Errorf("fs: %w", err)
	}
	if p == "" {
		if !allowRoot {
			return "", fmt.Errorf("fs: %w: empty path", tier2.ErrInvalidPath)
		}
		return s.root, nil
	}
	return filepath.Join(s.root, filepath.FromSlash(p)), nil
}

// Create implements tier2.Storage.
func (s *Storage) Create(p string) (tier2.Writer, error) {
	name, err := s.full(p, false)
	if err != nil {
		return nil, err
	}
	var f *os.File
	err = s.mkdirAll(path.Dir(p))
	if err == nil {
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	}
	if errors.Is(err, iofs.ErrNotExist) {
		// A directory remembered as made (or just found) was removed by
		// someone else: another container emptying the stream's
		// directory, a head serving tier 2, an operator. Forget all under
		// the path's top directory and make what is missing again, once.
		s.dirs.forget(topDir(p))
		if err = s.mkdirAll(path.Dir(p)); err == nil {
			f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		}
	}
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	// The umask may have taken bits off; the mode is part of the layout.
	if err := f.Chmod(fileMode); err != nil {
		_ = f.Close()
		_ = os.Remove(name)
		return nil, pathErr("create", p, err)
	}
	return &writer{f: f, path: p, wb: writeback{fd: int(f.Fd()), pace: pace}}, nil
}

// mkdirAll makes the directory dir (a checked storage path, "." for the
// root) and its missing parents, fsyncing the parent of each one it
// makes. Concurrent calls making the same directories are fine. A
// directory this Storage already made or found costs nothing.
func (s *Storage) mkdirAll(dir string) error {
	if dir == "." || s.dirs.has(dir) {
		return nil
	}
	name := filepath.Join(s.root, filepath.FromSlash(dir))
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		s.dirs.add(dir) // found: made by this root's earlier owner, as before
		return nil
	}
	if err := s.mkdirAll(path.Dir(dir)); err != nil {
		return err
	}
	err := os.Mkdir(name, dirMode)
	if errors.Is(err, iofs.ErrExist) {
		return nil // made by someone else meanwhile, or a file (Create then fails)
	}
	if err != nil {
		return err
	}
	if err := os.Chmod(name, dirMode); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(name)); err != nil {
		return err
	}
	s.dirs.add(dir)
	return nil
}

// Open implements tier2.Storage.
func (s *Storage) Open(p string) (tier2.Reader, error) {
	name, err := s.full(p, false)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, pathErr("open", p, err)
	}
	if fi.IsDir() {
		_ = f.Close()
		return nil, pathErr("open", p, unix.EISDIR)
	}
	return &reader{f: f, path: p, size: fi.Size()}, nil
}

// Stat implements tier2.Storage. The root's Name is "".
func (s *Storage) Stat(p string) (tier2.FileInfo, error) {
	name, err := s.full(p, true)
	if err != nil {
		return tier2.FileInfo{}, err
	}
	fi, err := os.Stat(name)
	if err != nil {
		return tier2.FileInfo{}, pathErr("stat", p, err)
	}
	info := fileInfo(fi)
	info.Name = path.Base(p)
	if p == "" {
		info.Name = ""
	}
	return info, nil
}

func fileInfo(fi iofs.FileInfo) tier2.FileInfo {
	info := tier2.FileInfo{Name: fi.Name(), Size: fi.Size(), IsDir: fi.IsDir(), ModTime: fi.ModTime()}
	if info.IsDir {
		info.Size = 0 // as in HDFS; a directory's size on disk means nothing here
	}
	return info
}

// List implements tier2.Storage. An entry removed while the directory is
// read is left out.
func (s *Storage) List(dir string) ([]tier2.FileInfo, error) {
	name, err := s.full(dir, true)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(name) // sorted by name
	if err != nil {
		return nil, pathErr("list", dir, err)
	}
	out := make([]tier2.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, pathErr("list", path.Join(dir, e.Name()), err)
		}
		out = append(out, fileInfo(fi))
	}
	return out, nil
}

// Rename implements tier2.Storage.
func (s *Storage) Rename(from, to string) error {
	src, err := s.full(from, false)
	if err != nil {
		return err
	}
	dst, err := s.full(to, false)
	if err != nil {
		return err
	}
	// A directory renamed away is not there any more; one replaced is
	// gone with its children.
	defer s.dirs.forget(to)
	defer s.dirs.forget(from)
	if err := os.Rename(src, dst); err != nil {
		return renameErr(from, to, err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return renameErr(from, to, err)
	}
	if filepath.Dir(src) != filepath.Dir(dst) {
		if err := syncDir(filepath.Dir(src)); err != nil {
			return renameErr(from, to, err)
		}
	}
	return nil
}

// Remove implements tier2.Storage.
func (s *Storage) Remove(p string) error {
	name, err := s.full(p, false)
	if err != nil {
		return err
	}
	if err := s.removeName(name, false); err != nil {
		return pathErr("remove", p, err)
	}
	s.dirs.forget(p)
	return nil
}

// RemoveAll implements tier2.Storage. RemoveAll("") empties the root and
// keeps the root directory itself.
func (s *Storage) RemoveAll(p string) error {
	name, err := s.full(p, true)
	if err != nil {
		return err
	}
	defer s.dirs.forget(p) // whatever of it was removed
	if p != "" {
		if err := s.removeName(name, true); err != nil {
			return pathErr("removeall", p, err)
		}
		return nil
	}
	entries, err := os.ReadDir(name)
	if err != nil {
		return pathErr("removeall", p, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(name, e.Name())); err != nil {
			return pathErr("removeall", e.Name(), err)
		}
	}
	return nil
}

// Close implements tier2.Storage; there is nothing to release.
func (s *Storage) Close() error { return nil }

// writer is a file being written. A failed write is sticky: later writes
// and Close report it. Not safe for concurrent use (an io.Writer).
type writer struct {
	f      *os.File
	path   string
	werr   error
	closed bool
	size   int64     // bytes written
	wb     writeback // keeps the file's dirty pages few (writeback.go)
}

func (w *writer) Write(b []byte) (int, error) {
	if w.closed {
		return 0, fmt.Errorf("fs: write %q: %w", w.path, iofs.ErrClosed)
	}
	if w.werr != nil {
		return 0, w.werr
	}
	// In pieces of at most WritebackBytes, each followed by its
	// write-back step: a caller's large buffer (the storage writer's is
	// up to 1 MiB) must not make the ranges larger.
	written := 0
	for written < len(b) {
		n, err := w.f.Write(b[written:min(len(b), written+WritebackBytes)])
		w.size += int64(n)
		written += n
		if err != nil {
			w.werr = pathErr("write", w.path, err)
			return written, w.werr
		}
		if err := w.wb.wrote(w.size); err != nil {
			w.werr = pathErr("write back", w.path, err)
			return written, w.werr
		}
	}
	return written, nil
}

// Unpaced implements tier2.Paced: no pauses after write-back ranges.
func (w *writer) Unpaced() { w.wb.pace = false }

// Abort implements tier2.Aborter: it closes the file without the fsync
// Close makes, for a file that will be removed.
func (w *writer) Abort() error {
	if w.closed {
		return fmt.Errorf("fs: abort %q: %w", w.path, iofs.ErrClosed)
	}
	w.closed = true
	if err := w.f.Close(); err != nil {
		return pathErr("close", w.path, err)
	}
	return nil
}

// Close fsyncs and closes the file. It reports an earlier write error.
func (w *writer) Close() error {
	if w.closed {
		return fmt.Errorf("fs: close %q: %w", w.path, iofs.ErrClosed)
	}
	w.closed = true
	err := w.werr
	if err == nil {
		if serr := w.f.Sync(); serr != nil {
			err = pathErr("sync", w.path, serr)
		}
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = pathErr("close", w.path, cerr)
	}
	return err
}

// reader reads through pread, so concurrent ReadAt calls are safe.
type reader struct {
	f    *os.File
	path string
	size int64
}

func (r *reader) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return n, pathErr("read", r.path, err)
	}
	return n, err
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) Close() error {
	if err := r.f.Close(); err != nil {
		return pathErr("close", r.path, err)
	}
	return nil
}

// pathErr wraps err from op on the storage path p, dropping the on-disk
// name the os package put in it.
func pathErr(op, p string, err error) error {
	return fmt.Errorf("fs: %s %q: %w", op, p, classify(err))
}

func renameErr(from, to string, err error) error {
	return fmt.Errorf("fs: rename %q to %q: %w", from, to, classify(err))
}

// classify strips the os package's wrapping (it names the path on disk)
// and adds tier2.ErrUnavailable to errors that may pass.
func classify(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	if transient(err) {
		return fmt.Errorf("%w: %w", tier2.ErrUnavailable, err)
	}
	return err
}

// transientErrnos may pass without anyone touching the data: space freed,
// a mount back, a server answering again.
var transientErrnos = []unix.Errno{
	unix.ENOSPC, unix.EDQUOT, unix.EIO, unix.EROFS, unix.ESTALE,
	unix.ETIMEDOUT, unix.EAGAIN, unix.EINTR, unix.ENOLCK,
}

func transient(err error) bool {
	for _, e := range transientErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// syncDir fsyncs a directory so the entries made or renamed in it last.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
