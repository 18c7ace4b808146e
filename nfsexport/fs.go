package nfsexport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	billy "github.com/go-git/go-billy/v5"
	"github.com/willscott/go-nfs/file"

	"github.com/sluice-streams/sluice/tier2/view"
)

// Owner of every file and directory as NFS clients see it: nobody and
// nogroup, numbers no local account is likely to own (the view's names,
// view.Owner and view.Group, have no numbers).
const (
	UID = 65534
	GID = 65534
)

// errReadOnly is what every write-type billy call answers. go-nfs never
// reaches them (the filesystem lacks billy.WriteCapability, so its
// handlers answer NFS3ERR_ROFS first, and the gate refuses write-type
// calls before go-nfs sees them); it is the last line.
var errReadOnly = fmt.Errorf("%w: %w", ErrReadOnly, syscall.EROFS)

// roFS is a read-only billy.Filesystem over the view, rooted at root (""
// for the whole tree, "<scope>" for one scope's export). Paths given to it
// are relative to root.
type roFS struct {
	h    *handler
	root string
	err  error // if set, every call fails with it (see FromHandle)
}

var _ billy.Filesystem = (*roFS)(nil)
var _ billy.Capable = (*roFS)(nil)

// full returns the view path of p, relative to the fs's root.
func (f *roFS) full(p string) string {
	return strings.Trim(path.Join(f.root, path.Clean("/"+p)), "/")
}

func (f *roFS) Capabilities() billy.Capability {
	return billy.ReadCapability | billy.SeekCapability
}

func (f *roFS) Stat(p string) (os.FileInfo, error) {
	if f.err != nil {
		return nil, pathErr("stat", p, f.err)
	}
	if err := f.h.ops.enter(); err != nil {
		return nil, err
	}
	defer f.h.ops.exit()
	e, err := f.h.v.Stat(f.h.ctx, f.full(p))
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return fileInfo{e}, nil
}

func (f *roFS) Lstat(p string) (os.FileInfo, error) { return f.Stat(p) }

func (f *roFS) ReadDir(p string) ([]os.FileInfo, error) {
	if f.err != nil {
		return nil, pathErr("readdir", p, f.err)
	}
	if err := f.h.ops.enter(); err != nil {
		return nil, err
	}
	defer f.h.ops.exit()
	es, err := f.h.v.List(f.h.ctx, f.full(p))
	if err != nil {
		return nil, pathErr("readdir", p, err)
	}
	out := make([]os.FileInfo, len(es))
	for i, e := range es {
		out[i] = fileInfo{e}
	}
	return out, nil
}

func (f *roFS) Open(p string) (billy.File, error) {
	if f.err != nil {
		return nil, pathErr("open", p, f.err)
	}
	if err := f.h.ops.enter(); err != nil {
		return nil, err
	}
	defer f.h.ops.exit()
	r, err := f.h.v.Open(f.h.ctx, f.full(p))
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return &roFile{h: f.h, name: p, r: r}, nil
}

func (f *roFS) OpenFile(p string, flag int, _ os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, pathErr("open", p, errReadOnly)
	}
	return f.Open(p)
}

func (f *roFS) Join(elem ...string) string { return path.Join(elem...) }
func (f *roFS) Root() string               { return "/" + f.root }

func (f *roFS) Chroot(p string) (billy.Filesystem, error) {
	return &roFS{h: f.h, root: f.full(p), err: f.err}, nil
}

func (f *roFS) Readlink(p string) (string, error) {
	return "", pathErr("readlink", p, fs.ErrInvalid)
}

func (f *roFS) Create(p string) (billy.File, error) { return nil, pathErr("create", p, errReadOnly) }
func (f *roFS) Rename(from, _ string) error         { return pathErr("rename", from, errReadOnly) }
func (f *roFS) Remove(p string) error               { return pathErr("remove", p, errReadOnly) }
func (f *roFS) MkdirAll(p string, _ os.FileMode) error {
	return pathErr("mkdir", p, errReadOnly)
}
func (f *roFS) Symlink(_, link string) error { return pathErr("symlink", link, errReadOnly) }
func (f *roFS) TempFile(dir, _ string) (billy.File, error) {
	return nil, pathErr("create", dir, errReadOnly)
}

// pathErr wraps a view or read-only error as the *fs.PathError go-nfs
// classifies with os.IsNotExist and os.IsPermission.
func pathErr(op, p string, err error) error {
	switch {
	case errors.Is(err, view.ErrNotExist):
		err = fmt.Errorf("%w: %w", err, fs.ErrNotExist)
	case errors.Is(err, ErrReadOnly):
		err = fmt.Errorf("%w: %w", err, fs.ErrPermission)
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// fileInfo is a view entry as go-nfs reads it: Sys carries the fileid
// (Entry.ID) and the fixed owner. Mode returns the permission bits only:
// go-nfs sends Mode as the NFS mode word, which has no type bits (the type
// travels apart, from IsDir).
type fileInfo struct{ e view.Entry }

func (i fileInfo) Name() string {
	if i.e.Name == "" {
		return "/"
	}
	return i.e.Name
}
func (i fileInfo) Size() int64        { return i.e.Size }
func (i fileInfo) Mode() fs.FileMode  { return i.e.Mode().Perm() }
func (i fileInfo) ModTime() time.Time { return i.e.ModTime }
func (i fileInfo) IsDir() bool        { return i.e.IsDir }
func (i fileInfo) Sys() any {
	n := uint32(1)
	if i.e.IsDir {
		n = 2
	}
	return &file.FileInfo{Nlink: n, UID: UID, GID: GID, Fileid: i.e.ID}
}

// roFile reads a chunk with view.File.ReadAt; Read and Seek keep an offset
// for billy's sake (go-nfs uses ReadAt only).
type roFile struct {
	h    *handler
	name string
	r    view.File

	mu  sync.Mutex
	off int64
}

func (f *roFile) Name() string { return f.name }

func (f *roFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.h.ops.enter(); err != nil {
		return 0, err
	}
	defer f.h.ops.exit()
	n, err := f.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, fmt.Errorf("nfsexport: read %q at %d: %w", f.name, off, err)
	}
	return n, err
}

func (f *roFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *roFile) Seek(off int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		off += f.r.Size()
	}
	if off < 0 {
		return f.off, fmt.Errorf("nfsexport: seek %q to %d: %w", f.name, off, fs.ErrInvalid)
	}
	f.off = off
	return off, nil
}

func (f *roFile) Close() error { return f.r.Close() }

func (f *roFile) Write([]byte) (int, error) { return 0, pathErr("write", f.name, errReadOnly) }
func (f *roFile) Truncate(int64) error      { return pathErr("truncate", f.name, errReadOnly) }
func (f *roFile) Lock() error               { return nil }
func (f *roFile) Unlock() error             { return nil }

// opGate counts the calls into the view in flight, so that Close can wait
// for them and refuse later ones (go-nfs's own connection goroutines are
// not ours to wait for; see the package doc).
type opGate struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (g *opGate) enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	g.wg.Add(1)
	return nil
}

func (g *opGate) exit() { g.wg.Done() }

// close refuses new calls and waits for those in flight.
func (g *opGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
