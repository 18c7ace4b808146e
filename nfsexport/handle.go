package nfsexport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sluice-streams/sluice/tier2/view"
)

// File handle layout (at most MaxHandle bytes, NFSv3's limit):
//
//	literal, when the path fits:
//	+------+-------+---------------------------+
//	| 0x01 | depth | path (UTF-8, 0..62 bytes)  |
//	+------+-------+---------------------------+
//
//	hashed, when it does not:
//	+------+-------+----------------+-------------------------+
//	| 0x02 | depth | ID (8 bytes BE)| prefix (UTF-8, 0..54 B) |
//	+------+-------+----------------+-------------------------+
//
// Both are padded with zero bytes to a multiple of 4 (go-nfs reads an
// ACCESS call's handle without its XDR padding; a handle that needs none
// keeps the arguments after it aligned), and a handle of another length is
// not one of ours. path is the entry's view path without slashes at either end ("" for the
// tree's root); depth is the number of its first components that name the
// export the handle was minted under (0 for "/", 1 for "/<scope>", up to 3
// for a segment's directory mounted on its own), so a
// handle never leads out of its export. ID is view.ID(path); prefix is the
// path of the deepest ancestor directory that fits, where a lookup walks
// from to find the entry whose ID matches. Nothing in a handle depends on
// the process: a head restarted over the same tier 2 reads the handles an
// earlier one gave out.
const (
	MaxHandle = 64

	handleLiteral byte = 1
	handleHashed  byte = 2

	maxLiteralPath = MaxHandle - 2
	maxExportDepth = 3 // /<scope>/<stream>/segment=<N>
	maxHashPrefix  = MaxHandle - 10
)

// handleKey is a decoded handle.
type handleKey struct {
	depth  int
	path   string // literal: the path; hashed: the prefix
	id     uint64 // hashed only
	hashed bool
}

// encodeHandle returns the handle of the view path p minted under an
// export of depth components.
func encodeHandle(depth int, p string) []byte {
	if len(p) <= maxLiteralPath {
		return pad(append([]byte{handleLiteral, byte(depth)}, p...))
	}
	prefix := p
	for len(prefix) > maxHashPrefix {
		i := strings.LastIndexByte(prefix, '/')
		if i < 0 {
			prefix = ""
			break
		}
		prefix = prefix[:i]
	}
	b := make([]byte, 10, 10+len(prefix))
	b[0], b[1] = handleHashed, byte(depth)
	binary.BigEndian.PutUint64(b[2:], view.ID(p))
	return pad(append(b, prefix...))
}

func pad(b []byte) []byte { return append(b, make([]byte, (4-len(b)%4)%4)...) }

// decodeHandle checks a handle's bytes: any input gives a key whose path
// lies inside its export, or an error wrapping ErrBadHandle.
func decodeHandle(b []byte) (handleKey, error) {
	if len(b) < 4 || len(b) > MaxHandle || len(b)%4 != 0 {
		return handleKey{}, fmt.Errorf("%w: %d bytes", ErrBadHandle, len(b))
	}
	k := handleKey{depth: int(b[1])}
	if k.depth > maxExportDepth {
		return handleKey{}, fmt.Errorf("%w: export depth %d", ErrBadHandle, k.depth)
	}
	switch b[0] {
	case handleLiteral:
		k.path = string(bytes.TrimRight(b[2:], "\x00")) // the padding: paths have no NUL
	case handleHashed:
		if len(b) < 12 {
			return handleKey{}, fmt.Errorf("%w: hashed handle of %d bytes", ErrBadHandle, len(b))
		}
		k.hashed, k.id = true, binary.BigEndian.Uint64(b[2:10])
		k.path = string(bytes.TrimRight(b[10:], "\x00"))
	default:
		return handleKey{}, fmt.Errorf("%w: version %d", ErrBadHandle, b[0])
	}
	if err := checkPath(k.path); err != nil {
		return handleKey{}, err
	}
	if n := components(k.path); n < k.depth && !k.hashed {
		return handleKey{}, fmt.Errorf("%w: path %q shorter than its export", ErrBadHandle, k.path)
	}
	return k, nil
}

// checkPath accepts "" or slash-separated components that are neither
// empty, "." nor "..", with no NUL byte, of valid UTF-8.
func checkPath(p string) error {
	if p == "" {
		return nil
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.IndexByte(c, 0) >= 0 || !utf8.ValidString(c) {
			return fmt.Errorf("%w: path %q", ErrBadHandle, p)
		}
	}
	return nil
}

func components(p string) int {
	if p == "" {
		return 0
	}
	return strings.Count(p, "/") + 1
}

// resolver finds the paths of hashed handles: from the handles it minted
// (remembered, at most maxResolved), else by walking the view from the
// handle's prefix.
type resolver struct {
	v *view.View

	mu struct {
		sync.Mutex
		paths map[uint64]string
	}
}

// maxResolved bounds the remembered paths of hashed handles; when full,
// the memory starts again (a forgotten handle costs one walk).
const maxResolved = 1 << 16

func newResolver(v *view.View) *resolver {
	r := &resolver{v: v}
	r.mu.paths = map[uint64]string{}
	return r
}

func (r *resolver) remember(id uint64, p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.mu.paths) >= maxResolved {
		clear(r.mu.paths)
	}
	r.mu.paths[id] = p
}

// path returns the view path of k: ErrNotExist if no entry under its
// prefix has its ID, ErrBadHandle if that entry lies above k's export.
func (r *resolver) path(ctx context.Context, k handleKey) (string, error) {
	if !k.hashed {
		return k.path, nil
	}
	r.mu.Lock()
	p, ok := r.mu.paths[k.id]
	r.mu.Unlock()
	if ok && within(p, k.path) && components(p) >= k.depth {
		return p, nil
	}
	p, err := r.walk(ctx, k.path, k.id)
	if err != nil {
		return "", err
	}
	if components(p) < k.depth {
		return "", fmt.Errorf("%w: path %q above its export", ErrBadHandle, p)
	}
	r.remember(k.id, p)
	return p, nil
}

// within reports whether p is prefix or under it.
func within(p, prefix string) bool {
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

// walk searches the tree under dir, breadth first, for the entry whose ID
// is id. It descends only into directories whose paths are longer than a
// prefix may be: had the entry's parent been shorter, it would have been
// the prefix (encodeHandle takes the deepest ancestor that fits). So a
// made-up handle costs a listing or two, not a walk of the whole tree.
// The view's tree is four levels deep, so the walk ends.
func (r *resolver) walk(ctx context.Context, dir string, id uint64) (string, error) {
	queue := []string{dir}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		es, err := r.v.List(ctx, d)
		if errors.Is(err, view.ErrNotExist) || errors.Is(err, view.ErrNotDir) {
			continue
		}
		if err != nil {
			return "", err
		}
		for _, e := range es {
			if e.ID == id {
				return e.Path, nil
			}
			if e.IsDir && len(e.Path) > maxHashPrefix {
				queue = append(queue, e.Path)
			}
		}
	}
	return "", fmt.Errorf("nfsexport: no entry of handle id %x under %q: %w", id, dir, view.ErrNotExist)
}
