package nfsexport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"
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
//	+------+-------+----------------+---+----------------+---------------------------+
//	| 0x04 | depth | ID (8 bytes BE)| n | n x hash (4 B) | prefix (UTF-8, 0..53-4n B)|
//	+------+-------+----------------+---+----------------+---------------------------+
//
// Both are padded with zero bytes to a multiple of 4 (go-nfs reads an
// ACCESS call's handle without its XDR padding; a handle that needs none
// keeps the arguments after it aligned), and a handle of another length is
// not one of ours. path is the entry's view path without slashes at either end ("" for the
// tree's root); depth is the number of its first components that name the
// export the handle was minted under (0 for "/", 1 for "/<scope>", up to 3
// for a segment's directory mounted on its own), so a
// handle never leads out of its export. ID is view.ID(path); prefix is the
// path of the deepest ancestor directory that fits; the n (1..4) hashes
// are those of the path's components below the prefix (nameHash, big
// endian), so a lookup lists one directory per level, keeping only the
// children whose name has that level's hash, and takes the entry whose ID
// matches. Nothing in a handle depends on the process: a head restarted
// over the same tier 2 reads the handles an earlier one gave out.
//
// Version 3 is version 4 with 16-bit hashes (nameHash16) and a prefix of
// up to 53-2n bytes: heads no longer mint it but still read it, so
// handles given out before the upgrade stay good. Its hashes were too
// narrow: a few siblings sharing the hash of a directory on the way
// (about one in 65536 names does, and such names are easily made on
// purpose) used up a lookup's listings, and the handle went stale.
// Version 2 (ID and prefix only, which a lookup found by walking every
// directory below the prefix) is not read: a handle minted by a head
// before version 3 answers NFS3ERR_STALE, once, and the client looks the
// path up again.
const (
	MaxHandle = 64

	handleLiteral  byte = 1
	handleHashed16 byte = 3 // read, no longer minted
	handleHashed   byte = 4

	maxLiteralPath = MaxHandle - 2
	maxExportDepth = 3 // /<scope>/<stream>/segment=<N>
	hashedHead     = 11
	maxHashLevels  = 4 // the view's tree: scope, stream, segment, chunk
)

// handleKey is a decoded handle.
type handleKey struct {
	depth  int
	path   string // literal: the path; hashed: the prefix
	id     uint64 // hashed only
	hashes string // hashed only: 4 bytes (version 3: 2) per component below the prefix
	hashed bool
	narrow bool // version 3: 16-bit hashes
}

// levels returns the number of components k's hashes name.
func (k handleKey) levels() int {
	if k.narrow {
		return len(k.hashes) / 2
	}
	return len(k.hashes) / 4
}

// matches reports whether name has k's hash of level.
func (k handleKey) matches(level int, name string) bool {
	if k.narrow {
		return nameHash16(name) == binary.BigEndian.Uint16([]byte(k.hashes[2*level:]))
	}
	return nameHash(name) == binary.BigEndian.Uint32([]byte(k.hashes[4*level:]))
}

// nameHash is a path component's hash in a hashed handle: the first 32
// bits of its SHA-256. Honest siblings share one once in 2^32 pairs, and
// a name made to share a given one costs about 2^32 SHA-256s (an FNV hash
// of 32 bits could be matched in seconds).
func nameHash(name string) uint32 {
	sum := sha256.Sum256([]byte(name))
	return binary.BigEndian.Uint32(sum[:])
}

// nameHash16 is a path component's hash in a version-3 handle: 16 bits of
// its FNV-1a.
func nameHash16(name string) uint16 {
	h := fnv.New32a()
	h.Write([]byte(name))
	s := h.Sum32()
	return uint16(s ^ s>>16)
}

// encodeHandle returns the handle of the view path p minted under an
// export of depth components.
func encodeHandle(depth int, p string) []byte {
	if len(p) <= maxLiteralPath {
		return pad(append([]byte{handleLiteral, byte(depth)}, p...))
	}
	parts := strings.Split(p, "/")
	// The deepest proper ancestor that fits beside the hashes of the
	// components below it.
	at := len(parts) - 1
	for ; at > 0; at-- {
		n := len(parts) - at
		if n <= maxHashLevels && len(strings.Join(parts[:at], "/")) <= MaxHandle-hashedHead-4*n {
			break
		}
	}
	below := parts[at:]
	if len(below) > maxHashLevels { // deeper than the view's tree: never found
		below = below[len(below)-maxHashLevels:]
	}
	prefix := strings.Join(parts[:at], "/")
	b := make([]byte, hashedHead, MaxHandle)
	b[0], b[1] = handleHashed, byte(depth)
	binary.BigEndian.PutUint64(b[2:], view.ID(p))
	b[10] = byte(len(below))
	for _, c := range below {
		b = binary.BigEndian.AppendUint32(b, nameHash(c))
	}
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
	case handleHashed, handleHashed16:
		width := 4
		if b[0] == handleHashed16 {
			width, k.narrow = 2, true
		}
		if len(b) < hashedHead+width {
			return handleKey{}, fmt.Errorf("%w: hashed handle of %d bytes", ErrBadHandle, len(b))
		}
		n := int(b[10])
		if n < 1 || n > maxHashLevels || len(b) < hashedHead+width*n {
			return handleKey{}, fmt.Errorf("%w: hashed handle of %d bytes with %d levels", ErrBadHandle, len(b), n)
		}
		k.hashed, k.id = true, binary.BigEndian.Uint64(b[2:10])
		k.hashes = string(b[hashedHead : hashedHead+width*n])
		k.path = string(bytes.TrimRight(b[hashedHead+width*n:], "\x00"))
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
// (remembered, at most maxResolved), else by looking the handle's
// component hashes up below its prefix. Handles found nowhere are
// remembered too, for a while (at most maxMissed, for missTTL), so that
// asking again costs nothing.
type resolver struct {
	v   *view.View
	now func() time.Time

	mu struct {
		sync.Mutex
		paths  map[uint64]string
		missed map[handleKey]time.Time // when the miss expires
	}
}

// maxResolved bounds the remembered paths of hashed handles; when full,
// the memory starts again (a forgotten handle costs one lookup).
const maxResolved = 1 << 16

// maxMissed and missTTL bound the remembered misses: a miss is not final
// (an entry may appear under a name it had before), so it is forgotten
// soon.
const (
	maxMissed = 1 << 12
	missTTL   = 10 * time.Second
)

// maxWalkLists bounds the listings one lookup makes, so that a made-up
// handle costs no more than a real one: one per level, and one more for
// each directory on the way whose name shares its level's hash with the
// handle's. A lookup that meets more than maxWalkLists-levels of those
// answers ErrNotExist, and a real handle goes stale: with 32-bit hashes
// honest siblings never come close (a shared hash is one in 2^32 pairs),
// and a tenant who names streams to share another stream's hash spends
// about 2^32 SHA-256s a name. (Version-3 handles, 16 bits a level, go
// stale beside a handful of such siblings: one in 65536 names shares a
// hash, and such names take milliseconds to find.)
const maxWalkLists = 2 * maxHashLevels

func newResolver(v *view.View) *resolver {
	r := &resolver{v: v, now: time.Now}
	r.mu.paths = map[uint64]string{}
	r.mu.missed = map[handleKey]time.Time{}
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
	until, missed := r.mu.missed[k]
	r.mu.Unlock()
	if ok && within(p, k.path) && components(p) >= k.depth {
		return p, nil
	}
	if missed && r.now().Before(until) {
		return "", fmt.Errorf("nfsexport: no entry of handle id %x under %q (remembered): %w", k.id, k.path, view.ErrNotExist)
	}
	p, err := r.walk(ctx, k)
	if errors.Is(err, view.ErrNotExist) {
		r.missed(k)
	}
	if err != nil {
		return "", err
	}
	if components(p) < k.depth {
		return "", fmt.Errorf("%w: path %q above its export", ErrBadHandle, p)
	}
	r.remember(k.id, p)
	return p, nil
}

func (r *resolver) missed(k handleKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.mu.missed) >= maxMissed {
		now := r.now()
		for mk, until := range r.mu.missed {
			if !now.Before(until) {
				delete(r.mu.missed, mk)
			}
		}
		if len(r.mu.missed) >= maxMissed {
			clear(r.mu.missed)
		}
	}
	r.mu.missed[k] = r.now().Add(missTTL)
}

// within reports whether p is prefix or under it.
func within(p, prefix string) bool {
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

// walk looks k's entry up below its prefix: level by level, it lists the
// directories whose names have that level's hash (one, but for
// collisions), and at the last level takes the entry whose ID is k's. It
// makes at most maxWalkLists listings and stops when ctx is done.
func (r *resolver) walk(ctx context.Context, k handleKey) (string, error) {
	dirs := []string{k.path}
	lists := 0
	levels := k.levels()
	for level := range levels {
		var next []string
		for _, d := range dirs {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			if lists == maxWalkLists {
				return "", fmt.Errorf("nfsexport: handle id %x under %q: over %d listings: %w", k.id, k.path, maxWalkLists, view.ErrNotExist)
			}
			lists++
			es, err := r.v.List(ctx, d)
			if errors.Is(err, view.ErrNotExist) || errors.Is(err, view.ErrNotDir) {
				continue
			}
			if err != nil {
				return "", err
			}
			for _, e := range es {
				if !k.matches(level, e.Name) {
					continue
				}
				if level == levels-1 {
					if e.ID == k.id {
						return e.Path, nil
					}
				} else if e.IsDir {
					next = append(next, e.Path)
				}
			}
		}
		dirs = next
	}
	return "", fmt.Errorf("nfsexport: no entry of handle id %x under %q: %w", k.id, k.path, view.ErrNotExist)
}
