package nfsexport

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	billy "github.com/go-git/go-billy/v5"
	nfs "github.com/willscott/go-nfs"

	"github.com/sluice-streams/sluice/tier2/view"
)

// handler is go-nfs's Handler and CachingHandler over the view: the
// exports, the handles and the directory listings being paged.
type handler struct {
	v   *view.View
	ctx context.Context // the server's: done at Close
	ops opGate
	res *resolver

	root *roFS // the "/" export

	dirs struct {
		sync.Mutex
		// byVerifier holds the listings being paged, keyed by their
		// cookie verifier; order lists the keys oldest first; entries
		// counts the entries of them all.
		byVerifier map[uint64]pagedDir
		order      []uint64
		entries    int
	}
	now func() time.Time
}

// pagedDir is a listing kept for paging: the directory's path as go-nfs
// names it (relative to its export: the same for /p/a under the /p mount
// and /q/a under /q), its view path (from its entries: "" if it has none),
// its entries and when it was listed.
type pagedDir struct {
	path    string
	dir     string
	entries []fs.FileInfo
	at      time.Time
}

// The listings kept for READDIR(PLUS) paging: at most maxPagedDirs, of
// maxPagedEntries entries in all (a listing of more is not kept), each for
// pagedTTL at most; the oldest go first. A client whose listing was
// dropped gets it again, and NFS3ERR_BAD_COOKIE only if the directory
// changed meanwhile.
const (
	maxPagedDirs    = 64
	maxPagedEntries = 1 << 17 // about 13 MB of entries
	pagedTTL        = 5 * time.Minute
)

var (
	_ nfs.Handler        = (*handler)(nil)
	_ nfs.CachingHandler = (*handler)(nil)
)

func newHandler(ctx context.Context, v *view.View) *handler {
	h := &handler{v: v, ctx: ctx, res: newResolver(v), now: time.Now}
	h.root = &roFS{h: h}
	h.dirs.byVerifier = map[uint64]pagedDir{}
	return h
}

// exportRoot returns the view path a MOUNT path names: "/" (or "") is the
// whole tree, "/<scope>" one scope; a directory below is mounted as well
// (libnfs's nfs-cat and nfs-cp mount a file's directory, as knfsd allows
// mounting below an export).
func (h *handler) exportRoot(ctx context.Context, dirpath string) (string, bool) {
	p := strings.Trim(dirpath, "/")
	if p == "" {
		return "", true
	}
	if checkPath(p) != nil || components(p) > maxExportDepth {
		return "", false
	}
	if err := h.ops.enter(); err != nil {
		return "", false
	}
	defer h.ops.exit()
	e, err := h.v.Stat(ctx, p)
	return p, err == nil && e.IsDir
}

// Mount answers MNT: the root handle of "/", "/<scope>" or a directory
// below; MNT3ERR_NOENT for anything else.
func (h *handler) Mount(ctx context.Context, _ net.Conn, req nfs.MountRequest) (nfs.MountStatus, billy.Filesystem, []nfs.AuthFlavor) {
	root, ok := h.exportRoot(ctx, string(req.Dirpath))
	if !ok {
		return nfs.MountStatusErrNoEnt, nil, nil
	}
	return nfs.MountStatusOk, h.fsAt(root), []nfs.AuthFlavor{nfs.AuthFlavorUnix, nfs.AuthFlavorNull}
}

func (h *handler) fsAt(root string) *roFS {
	if root == "" {
		return h.root
	}
	return &roFS{h: h, root: root}
}

// Change is nil: the filesystem is read-only.
func (h *handler) Change(billy.Filesystem) billy.Change { return nil }

// FSStat reports no space and no files free: nothing can be written.
func (h *handler) FSStat(_ context.Context, _ billy.Filesystem, s *nfs.FSStat) error {
	*s = nfs.FSStat{}
	return nil
}

// ToHandle mints the handle of path under the export f is.
func (h *handler) ToHandle(f billy.Filesystem, path []string) []byte {
	rf, ok := f.(*roFS)
	if !ok {
		rf = h.root
	}
	full := rf.full(strings.Join(path, "/"))
	b := encodeHandle(components(rf.root), full)
	if b[0] == handleHashed {
		h.res.remember(view.ID(full), full)
	}
	return b
}

// FromHandle decodes a handle into its export's filesystem and the path
// under it. A handle that does not decode, or whose entry no longer
// exists, is an error (go-nfs answers NFS3ERR_STALE); when tier 2 or the
// controller cannot say, the path is returned and the call itself fails.
func (h *handler) FromHandle(b []byte) (billy.Filesystem, []string, error) {
	k, err := decodeHandle(b)
	if err != nil {
		return nil, nil, err
	}
	if err := h.ops.enter(); err != nil {
		return nil, nil, err
	}
	defer h.ops.exit()
	p, err := h.res.path(h.ctx, k)
	if errors.Is(err, view.ErrNotExist) || errors.Is(err, ErrBadHandle) {
		return nil, nil, err
	}
	if err != nil {
		// The walk could not finish (tier 2 or the controller is away):
		// the handle may well be good, so the call fails, not the handle.
		return &roFS{h: h, err: err}, nil, nil
	}
	if _, err := h.v.Stat(h.ctx, p); errors.Is(err, view.ErrNotExist) {
		return nil, nil, err
	}
	parts := []string{}
	if p != "" {
		parts = strings.Split(p, "/")
	}
	root := strings.Join(parts[:k.depth], "/")
	return h.fsAt(root), parts[k.depth:], nil
}

// InvalidateHandle has nothing to do: handles are derived from paths.
func (h *handler) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit bounds go-nfs's entries per READDIR(PLUS) reply (half of
// it); the reply's byte count bounds them first.
func (h *handler) HandleLimit() int { return 1 << 12 }

// VerifierFor keeps a listing go-nfs is about to page and returns its
// cookie verifier: a hash of the path and of the entries' view paths,
// never 0. go-nfs's path is relative to the export, so the same path under
// two exports names two directories; their entries' view paths differ, and
// so do their verifiers. (Two empty listings may share one: their pages
// are the same, none.)
func (h *handler) VerifierFor(path string, contents []fs.FileInfo) uint64 {
	sum := sha256.New()
	sum.Write([]byte(path))
	dir := ""
	for i, c := range contents {
		full := c.Name()
		if fi, ok := c.(fileInfo); ok {
			full = fi.e.Path
		}
		if i == 0 {
			dir = parentOf(full)
		}
		sum.Write([]byte{0})
		sum.Write([]byte(full))
	}
	v := binary.BigEndian.Uint64(sum.Sum(nil))
	if v == 0 {
		v = 1
	}
	h.dirs.Lock()
	defer h.dirs.Unlock()
	now := h.now()
	h.dropPagedLocked(v)
	keep := len(contents) <= maxPagedEntries
	for len(h.dirs.order) > 0 {
		oldest := h.dirs.byVerifier[h.dirs.order[0]]
		roomy := !keep || (len(h.dirs.order) < maxPagedDirs && h.dirs.entries+len(contents) <= maxPagedEntries)
		if roomy && now.Sub(oldest.at) < pagedTTL {
			break
		}
		h.dropPagedLocked(h.dirs.order[0])
	}
	if keep {
		h.dirs.byVerifier[v] = pagedDir{path: path, dir: dir, entries: contents, at: now}
		h.dirs.order = append(h.dirs.order, v)
		h.dirs.entries += len(contents)
	}
	return v
}

// dropPagedLocked forgets the listing kept under v, if any.
func (h *handler) dropPagedLocked(v uint64) {
	d, ok := h.dirs.byVerifier[v]
	if !ok {
		return
	}
	delete(h.dirs.byVerifier, v)
	h.dirs.order = slices.DeleteFunc(h.dirs.order, func(o uint64) bool { return o == v })
	h.dirs.entries -= len(d.entries)
}

// DataForVerifier returns the listing of path kept under verifier, nil if
// none: go-nfs then lists path again, and answers NFS3ERR_BAD_COOKIE if
// its verifier differs (a verifier of another directory's listing always
// does, whichever export it was listed under: the verifier hashes the
// entries' view paths). The kept listing's view path must end in path.
func (h *handler) DataForVerifier(path string, verifier uint64) []fs.FileInfo {
	h.dirs.Lock()
	defer h.dirs.Unlock()
	d, ok := h.dirs.byVerifier[verifier]
	if !ok || d.path != path || !endsIn(d.dir, path) || h.now().Sub(d.at) >= pagedTTL {
		return nil
	}
	return d.entries
}

// parentOf returns the view path of p's directory ("" for the root's).
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// endsIn reports whether the view path dir ends in the components of rel
// (a path relative to an export); an unknown dir ("", of an empty
// listing, or the root) ends in anything.
func endsIn(dir, rel string) bool {
	return dir == "" || rel == "" || dir == rel || strings.HasSuffix(dir, "/"+rel)
}
