package tier2test

import (
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/tier2"
)

// memEpoch is the modification time of the first change to a Mem; every
// later change is one second later, so a Mem's times are deterministic.
var memEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Mem is an in-memory tier2.Storage. Create makes the file at once (empty,
// so the name is taken); Writer.Close publishes what was written. Files
// are nodes, as inodes are: a writer or reader keeps its node across a
// Rename or Remove of its path, and a reader sees the bytes published
// when it was opened. Only files can be renamed.
type Mem struct {
	mu struct {
		sync.Mutex
		files map[string]*memFile
		dirs  map[string]time.Time // every directory but the root
		clock time.Time
	}
}

type memFile struct {
	data    []byte // replaced whole on publish, never changed in place
	modTime time.Time
}

var _ tier2.Storage = (*Mem)(nil)

// NewMem returns an empty in-memory storage (a *Mem).
func NewMem() tier2.Storage {
	m := &Mem{}
	m.mu.files = make(map[string]*memFile)
	m.mu.dirs = make(map[string]time.Time)
	m.mu.clock = memEpoch
	return m
}

func (m *Mem) tickLocked() time.Time {
	m.mu.clock = m.mu.clock.Add(time.Second)
	return m.mu.clock
}

func memCheck(p string, allowRoot bool) error {
	if err := tier2.CheckPath(p); err != nil {
		return fmt.Errorf("tier2test: %w", err)
	}
	if p == "" && !allowRoot {
		return fmt.Errorf("tier2test: %w: empty path", tier2.ErrInvalidPath)
	}
	return nil
}

func memErr(op, p string, err error) error {
	return fmt.Errorf("tier2test: %s %q: %w", op, p, err)
}

// isDirLocked reports whether p ("" is the root) is a directory.
func (m *Mem) isDirLocked(p string) bool {
	if p == "" {
		return true
	}
	_, ok := m.mu.dirs[p]
	return ok
}

// parent is p's directory, "" for the root.
func parent(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

// Create implements tier2.Storage.
func (m *Mem) Create(p string) (tier2.Writer, error) {
	if err := memCheck(p, false); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.files[p]; ok || m.isDirLocked(p) {
		return nil, memErr("create", p, tier2.ErrExist)
	}
	for d := parent(p); d != ""; d = parent(d) {
		if _, ok := m.mu.files[d]; ok {
			return nil, memErr("create", p, fmt.Errorf("%q is a file", d))
		}
	}
	now := m.tickLocked()
	for d := parent(p); d != "" && !m.isDirLocked(d); d = parent(d) {
		m.mu.dirs[d] = now
	}
	f := &memFile{modTime: now}
	m.mu.files[p] = f
	return &memWriter{m: m, f: f, path: p}, nil
}

// Open implements tier2.Storage.
func (m *Mem) Open(p string) (tier2.Reader, error) {
	if err := memCheck(p, false); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.mu.files[p]
	if !ok {
		if m.isDirLocked(p) {
			return nil, memErr("open", p, fmt.Errorf("is a directory"))
		}
		return nil, memErr("open", p, tier2.ErrNotExist)
	}
	return &memReader{data: f.data, path: p}, nil
}

// Stat implements tier2.Storage. The root's Name is "".
func (m *Mem) Stat(p string) (tier2.FileInfo, error) {
	if err := memCheck(p, true); err != nil {
		return tier2.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.mu.files[p]; ok {
		return tier2.FileInfo{Name: path.Base(p), Size: int64(len(f.data)), ModTime: f.modTime}, nil
	}
	if p == "" {
		return tier2.FileInfo{IsDir: true, ModTime: memEpoch}, nil
	}
	if t, ok := m.mu.dirs[p]; ok {
		return tier2.FileInfo{Name: path.Base(p), IsDir: true, ModTime: t}, nil
	}
	return tier2.FileInfo{}, memErr("stat", p, tier2.ErrNotExist)
}

// List implements tier2.Storage.
func (m *Mem) List(dir string) ([]tier2.FileInfo, error) {
	if err := memCheck(dir, true); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.isDirLocked(dir) {
		if _, ok := m.mu.files[dir]; ok {
			return nil, memErr("list", dir, fmt.Errorf("not a directory"))
		}
		return nil, memErr("list", dir, tier2.ErrNotExist)
	}
	out := []tier2.FileInfo{}
	for p, f := range m.mu.files {
		if parent(p) == dir {
			out = append(out, tier2.FileInfo{Name: path.Base(p), Size: int64(len(f.data)), ModTime: f.modTime})
		}
	}
	for p, t := range m.mu.dirs {
		if parent(p) == dir {
			out = append(out, tier2.FileInfo{Name: path.Base(p), IsDir: true, ModTime: t})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Rename implements tier2.Storage.
func (m *Mem) Rename(from, to string) error {
	if err := memCheck(from, false); err != nil {
		return err
	}
	if err := memCheck(to, false); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	errf := func(err error) error { return fmt.Errorf("tier2test: rename %q to %q: %w", from, to, err) }
	f, ok := m.mu.files[from]
	if !ok {
		if m.isDirLocked(from) {
			return errf(fmt.Errorf("renaming a directory is not supported"))
		}
		return errf(tier2.ErrNotExist)
	}
	if !m.isDirLocked(parent(to)) {
		return errf(tier2.ErrNotExist)
	}
	if m.isDirLocked(to) {
		return errf(fmt.Errorf("destination is a directory"))
	}
	delete(m.mu.files, from)
	m.mu.files[to] = f
	m.tickLocked()
	return nil
}

// Remove implements tier2.Storage.
func (m *Mem) Remove(p string) error {
	if err := memCheck(p, false); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.files[p]; ok {
		delete(m.mu.files, p)
		m.tickLocked()
		return nil
	}
	if !m.isDirLocked(p) {
		return memErr("remove", p, tier2.ErrNotExist)
	}
	if m.hasChildrenLocked(p) {
		return memErr("remove", p, fmt.Errorf("directory not empty"))
	}
	delete(m.mu.dirs, p)
	m.tickLocked()
	return nil
}

func (m *Mem) hasChildrenLocked(dir string) bool {
	for p := range m.mu.files {
		if within(p, dir) {
			return true
		}
	}
	for p := range m.mu.dirs {
		if within(p, dir) {
			return true
		}
	}
	return false
}

// within reports whether p is strictly under dir ("" is the root).
func within(p, dir string) bool {
	return dir == "" || strings.HasPrefix(p, dir+"/")
}

// RemoveAll implements tier2.Storage. RemoveAll("") empties the storage.
func (m *Mem) RemoveAll(p string) error {
	if err := memCheck(p, true); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for q := range m.mu.files {
		if q == p || within(q, p) {
			delete(m.mu.files, q)
		}
	}
	for q := range m.mu.dirs {
		if q == p || within(q, p) {
			delete(m.mu.dirs, q)
		}
	}
	m.tickLocked()
	return nil
}

// Close implements tier2.Storage; the contents stay.
func (m *Mem) Close() error { return nil }

type memWriter struct {
	m      *Mem
	f      *memFile
	path   string
	buf    []byte
	closed bool
}

func (w *memWriter) Write(b []byte) (int, error) {
	if w.closed {
		return 0, memErr("write", w.path, iofs.ErrClosed)
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

// Close publishes the bytes written to the file's node, wherever its
// path is now.
func (w *memWriter) Close() error {
	if w.closed {
		return memErr("close", w.path, iofs.ErrClosed)
	}
	w.closed = true
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.f.data = w.buf
	w.f.modTime = w.m.tickLocked()
	w.buf = nil
	return nil
}

type memReader struct {
	data   []byte
	path   string
	mu     sync.Mutex
	closed bool
}

func (r *memReader) ReadAt(b []byte, off int64) (int, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return 0, memErr("read", r.path, iofs.ErrClosed)
	}
	if off < 0 {
		return 0, memErr("read", r.path, fmt.Errorf("negative offset %d", off))
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(b, r.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (r *memReader) Size() int64 { return int64(len(r.data)) }

func (r *memReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return memErr("close", r.path, iofs.ErrClosed)
	}
	r.closed = true
	return nil
}
