package view

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/tier2"
)

// Errors of a View; classify with errors.Is.
var (
	// ErrNotExist: no entry at the path (the same value as io/fs's, so
	// heads map it like any missing file).
	ErrNotExist = fs.ErrNotExist
	// ErrNotDir: List of a file, or a path through a file.
	ErrNotDir = errors.New("view: not a directory")
	// ErrIsDir: Open of a directory.
	ErrIsDir = errors.New("view: is a directory")
	// ErrUnavailable: tier 2 or the controller cannot be reached now; the
	// client may retry.
	ErrUnavailable = errors.New("view: tier 2 or the controller is unavailable")
)

// Ownership and modes of every entry (see the package doc).
const (
	Owner    = "sluice"
	Group    = "supergroup"
	FileMode = fs.FileMode(0o444)
	DirMode  = fs.FileMode(0o555)
)

// RootID is the root's ID (HDFS's root inode id); FirstID is the lowest
// ID of any other entry.
const (
	RootID  uint64 = 16385
	FirstID uint64 = 1 << 20
)

// Entry is one file or directory of the tree.
type Entry struct {
	// Path is the entry's path without leading slash ("" for the root).
	Path string
	// Name is its base name ("" for the root).
	Name    string
	IsDir   bool
	Size    int64 // 0 for a directory
	ModTime time.Time
	// ID is stable for the path (see the package doc).
	ID uint64
}

// Mode is the entry's mode bits, with fs.ModeDir for a directory.
func (e Entry) Mode() fs.FileMode {
	if e.IsDir {
		return fs.ModeDir | DirMode
	}
	return FileMode
}

// File is an open chunk: read at any offset, safe for concurrent ReadAt.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	Size() int64
	Close() error
}

// Catalog names the scopes and streams that exist: the controller's API
// (CatalogOf adapts its client).
type Catalog interface {
	// Scopes returns every scope's name.
	Scopes(ctx context.Context) ([]string, error)
	// Streams returns the names of a scope's streams; an error matching
	// ErrNotExist if the scope does not exist.
	Streams(ctx context.Context, scope string) ([]string, error)
}

// Options tune a View.
type Options struct {
	// CatalogTTL is how long the scope and stream names are reused before
	// the Catalog is asked again (DefaultCatalogTTL if 0; negative: every
	// call asks). A deleted stream may stay visible this long.
	CatalogTTL time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// DefaultCatalogTTL is Options.CatalogTTL's default.
const DefaultCatalogTTL = time.Second

// View is the read-only tree over one tier-2 storage. It is safe for
// concurrent use.
type View struct {
	st   tier2.Storage
	cat  Catalog
	ttl  time.Duration
	now  func() time.Time
	boot time.Time // the root's and scopes' ModTime

	// mu guards the catalog's cached names; it is never held while the
	// catalog or tier 2 is asked.
	mu struct {
		sync.Mutex
		at      time.Time
		scopes  []string
		streams map[string][]string // of the scopes asked for since at
		gen     uint64              // counts the times the scopes were asked
	}
}

// New returns a View of st whose scopes and streams are those cat names.
func New(st tier2.Storage, cat Catalog, o Options) *View {
	if o.CatalogTTL == 0 {
		o.CatalogTTL = DefaultCatalogTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &View{st: st, cat: cat, ttl: o.CatalogTTL, now: o.Now, boot: o.Now()}
}

// ID returns the ID of the entry at p (whether it exists or not).
func ID(p string) uint64 {
	p = clean(p)
	if p == "" {
		return RootID
	}
	h := fnv.New64a()
	h.Write([]byte(p))
	id := h.Sum64() &^ (1 << 63)
	if id < FirstID {
		id += FirstID
	}
	return id
}

// clean strips the leading and trailing slashes of p.
func clean(p string) string { return strings.Trim(p, "/") }

// split cleans p and returns its elements, checking them; nil for the root.
func split(p string) ([]string, error) {
	p = clean(p)
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for _, e := range parts {
		if e == "" || e == "." || e == ".." {
			return nil, fmt.Errorf("view: path %q: %w", p, ErrNotExist)
		}
	}
	return parts, nil
}

// Stat describes the entry at p.
func (v *View) Stat(ctx context.Context, p string) (Entry, error) {
	parts, err := split(p)
	if err != nil {
		return Entry{}, err
	}
	switch len(parts) {
	case 0:
		return v.dir("", v.boot), nil
	case 1:
		if err := v.checkScope(ctx, parts[0]); err != nil {
			return Entry{}, err
		}
		return v.dir(parts[0], v.boot), nil
	case 2:
		if err := v.checkStream(ctx, parts[0], parts[1]); err != nil {
			return Entry{}, err
		}
		mod := v.boot
		if fi, err := v.st.Stat(tier2.StreamDir(parts[0], parts[1])); err == nil {
			mod = fi.ModTime
		}
		return v.dir(strings.Join(parts, "/"), mod), nil
	case 3, 4:
		if err := v.checkStream(ctx, parts[0], parts[1]); err != nil {
			return Entry{}, err
		}
		if _, ok := segmentDir(parts[2]); !ok {
			return Entry{}, notExist(p)
		}
		if len(parts) == 4 {
			if _, ok := tier2.ParseChunkName(parts[3]); !ok || tier2.IsTemp(parts[3]) {
				return Entry{}, notExist(p)
			}
		}
		fi, err := v.st.Stat(strings.Join(parts, "/"))
		if err != nil {
			return Entry{}, v.storageErr(p, err)
		}
		if fi.IsDir != (len(parts) == 3) {
			return Entry{}, notExist(p)
		}
		return entry(strings.Join(parts, "/"), fi), nil
	}
	return Entry{}, notExist(p)
}

// List returns the entries of the directory at p, sorted by name.
func (v *View) List(ctx context.Context, p string) ([]Entry, error) {
	parts, err := split(p)
	if err != nil {
		return nil, err
	}
	switch len(parts) {
	case 0:
		scopes, err := v.scopes(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]Entry, 0, len(scopes))
		for _, s := range scopes {
			out = append(out, v.dir(s, v.boot))
		}
		return out, nil
	case 1:
		streams, err := v.streams(ctx, parts[0])
		if err != nil {
			return nil, err
		}
		out := make([]Entry, 0, len(streams))
		for _, s := range streams {
			e, err := v.Stat(ctx, parts[0]+"/"+s)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case 2, 3:
		e, err := v.Stat(ctx, p)
		if err != nil {
			return nil, err
		}
		if !e.IsDir {
			return nil, fmt.Errorf("view: list %q: %w", p, ErrNotDir)
		}
		fis, err := v.st.List(e.Path)
		if errors.Is(err, tier2.ErrNotExist) && len(parts) == 2 {
			return []Entry{}, nil // a stream with nothing in tier 2 yet
		}
		if err != nil {
			return nil, v.storageErr(p, err)
		}
		out := make([]Entry, 0, len(fis))
		for _, fi := range fis {
			if !visible(len(parts), fi) {
				continue
			}
			out = append(out, entry(e.Path+"/"+fi.Name, fi))
		}
		return out, nil
	}
	if _, err := v.Stat(ctx, p); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("view: list %q: %w", p, ErrNotDir)
}

// Names returns the names of the entries of the directory at p, sorted,
// without describing them: the entries List would return, at less cost.
// The root's and a scope's names come from the catalog alone, with no
// tier-2 call (List stats every stream of a scope in tier 2 for its
// modification time); a stream's and a segment's cost what List costs.
// The slice is the caller's.
func (v *View) Names(ctx context.Context, p string) ([]string, error) {
	parts, err := split(p)
	if err != nil {
		return nil, err
	}
	switch len(parts) {
	case 0:
		names, err := v.scopes(ctx)
		return slices.Clone(names), err // the cache's: the caller's to keep
	case 1:
		names, err := v.streams(ctx, parts[0])
		return slices.Clone(names), err
	}
	es, err := v.List(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out, nil
}

// Open opens the chunk at p.
func (v *View) Open(ctx context.Context, p string) (File, error) {
	e, err := v.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if e.IsDir {
		return nil, fmt.Errorf("view: open %q: %w", p, ErrIsDir)
	}
	r, err := v.st.Open(e.Path)
	if err != nil {
		return nil, v.storageErr(p, err)
	}
	return r, nil
}

// visible reports whether a storage entry under a stream (depth 2) or a
// segment (depth 3) directory belongs to the tree.
func visible(depth int, fi tier2.FileInfo) bool {
	if depth == 2 {
		_, ok := segmentDir(fi.Name)
		return ok && fi.IsDir
	}
	_, ok := tier2.ParseChunkName(fi.Name)
	return ok && !fi.IsDir && !tier2.IsTemp(fi.Name)
}

// segmentDir parses "segment=N".
func segmentDir(name string) (int64, bool) {
	n, ok := strings.CutPrefix(name, "segment=")
	if !ok {
		return 0, false
	}
	seg, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seg < 0 || strconv.FormatInt(seg, 10) != n {
		return 0, false
	}
	return seg, true
}

func (v *View) dir(p string, mod time.Time) Entry {
	name := p[strings.LastIndexByte(p, '/')+1:]
	return Entry{Path: p, Name: name, IsDir: true, ModTime: mod, ID: ID(p)}
}

func entry(p string, fi tier2.FileInfo) Entry {
	e := Entry{Path: p, Name: fi.Name, IsDir: fi.IsDir, ModTime: fi.ModTime, ID: ID(p)}
	if !fi.IsDir {
		e.Size = fi.Size
	}
	return e
}

func notExist(p string) error { return fmt.Errorf("view: %q: %w", p, ErrNotExist) }

// storageErr maps a tier-2 error: missing stays missing, anything else is
// unavailability the client may retry.
func (v *View) storageErr(p string, err error) error {
	if errors.Is(err, tier2.ErrNotExist) {
		return notExist(p)
	}
	return fmt.Errorf("view: %q: %w: %w", p, ErrUnavailable, err)
}

// checkScope fails with ErrNotExist unless the catalog names scope.
func (v *View) checkScope(ctx context.Context, scope string) error {
	scopes, err := v.scopes(ctx)
	if err != nil {
		return err
	}
	if _, ok := slices.BinarySearch(scopes, scope); !ok {
		return notExist(scope)
	}
	return nil
}

// checkStream fails with ErrNotExist unless the catalog names the stream.
func (v *View) checkStream(ctx context.Context, scope, stream string) error {
	streams, err := v.streams(ctx, scope)
	if err != nil {
		return err
	}
	if _, ok := slices.BinarySearch(streams, stream); !ok {
		return notExist(scope + "/" + stream)
	}
	return nil
}

// scopes returns the sorted scope names, from the cache while fresh. The
// catalog is asked without the lock held: a slow or stalled controller
// holds up only the requests that need it now, each until its own
// context ends, never the others (requests answered from the cache, or
// by tier 2 alone). Requests that find the cache stale at once may each
// ask; the last answer stays.
func (v *View) scopes(ctx context.Context) ([]string, error) {
	if scopes, ok := v.cachedScopes(); ok {
		return scopes, nil
	}
	scopes, err := v.cat.Scopes(ctx)
	if err != nil {
		return nil, fmt.Errorf("view: scopes: %w: %w", ErrUnavailable, err)
	}
	scopes = slices.Clone(scopes)
	slices.Sort(scopes)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.mu.at, v.mu.scopes, v.mu.streams = v.now(), scopes, map[string][]string{}
	v.mu.gen++
	return scopes, nil
}

// cachedScopes returns the cached scope names while they are fresh.
func (v *View) cachedScopes() ([]string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.streams == nil || v.ttl <= 0 || v.now().Sub(v.mu.at) >= v.ttl {
		return nil, false
	}
	return v.mu.scopes, true
}

// streams returns the sorted stream names of scope.
func (v *View) streams(ctx context.Context, scope string) ([]string, error) {
	scopes, err := v.scopes(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := slices.BinarySearch(scopes, scope); !ok {
		return nil, notExist(scope)
	}
	v.mu.Lock()
	s, ok := v.mu.streams[scope]
	gen := v.mu.gen
	v.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err = v.cat.Streams(ctx, scope)
	if errors.Is(err, ErrNotExist) {
		return nil, notExist(scope)
	}
	if err != nil {
		return nil, fmt.Errorf("view: streams of %q: %w: %w", scope, ErrUnavailable, err)
	}
	s = slices.Clone(s)
	slices.Sort(s)
	v.mu.Lock()
	defer v.mu.Unlock()
	if gen == v.mu.gen { // the scopes were not asked again meanwhile: keep it
		v.mu.streams[scope] = s
	}
	return s, nil
}
