package nfsexport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
)

func TestHandlesSurviveRestart(t *testing.T) {
	f, chunks := chunkFixture(t)
	short := tier2.ChunkPath("s", "a", 3, 0)
	long := tier2.ChunkPath("t", longStream, 12, 77)
	type held struct {
		path string
		fh   []byte
	}
	var hs []held
	r := dialRPC(t, f.port)
	for _, export := range []string{"/", "/t", "/t/" + longStream} {
		root, st := r.mount(export)
		if st != 0 {
			t.Fatalf("mount %s: %d", export, st)
		}
		hs = append(hs, held{strings.Trim(export, "/"), root})
		for _, p := range []string{short, long} {
			rel, ok := strings.CutPrefix(p, strings.Trim(export, "/"))
			if !ok {
				continue
			}
			fh := r.walk(root, strings.Split(strings.Trim(rel, "/"), "/")...)
			hs = append(hs, held{p, fh})
		}
	}
	if !bytes.Equal(hs[len(hs)-1].fh[:1], []byte{handleHashed}) {
		t.Fatalf("the long path's handle %x is not hashed", hs[len(hs)-1].fh)
	}

	// A new head over the same tier 2, with nothing remembered.
	f.srv.Close()
	f.v = view.New(f.st, f.cat, view.Options{CatalogTTL: -1})
	f.start(t)
	r = dialRPC(t, f.port)
	for _, h := range hs {
		st, size, fileid := r.getattr(h.fh)
		if st != 0 {
			t.Fatalf("GETATTR of %s's handle after the restart: status %d", h.path, st)
		}
		if fileid != view.ID(h.path) || (chunks[h.path] != nil && int(size) != len(chunks[h.path])) {
			t.Errorf("%s: fileid %x size %d; want %x, %d", h.path, fileid, size, view.ID(h.path), len(chunks[h.path]))
		}
		if data := chunks[h.path]; data != nil {
			st, res := r.nfs(procRead, xdrArgs{}.opaque(h.fh).u64(0).u32(uint32(len(data))))
			if st != 0 {
				t.Fatalf("READ %s after the restart: status %d", h.path, st)
			}
			// The gate answers READ itself: its attributes are go-nfs's
			// GETATTR's, byte for byte.
			_, attr := r.nfs(procGetattr, xdrArgs{}.opaque(h.fh))
			if !bytes.Equal(res[4:88], attr[:84]) {
				t.Errorf("READ %s: attributes %x, GETATTR's %x", h.path, res[4:88], attr[:84])
			}
			d := &reader{b: res}
			if d.u32() == 1 { // post_op_attr
				d.skip(84)
			}
			d.u32() // count
			d.u32() // eof
			if got := d.opaque(); !bytes.Equal(got, data) {
				t.Errorf("READ %s after the restart: %d bytes differ", h.path, len(got))
			}
		}
	}

	// A deleted entry's handle is stale.
	if err := f.st.Remove(short); err != nil {
		t.Fatal(err)
	}
	f.cat.Set("t") // stream longStream deleted
	for _, h := range hs {
		if h.path != short && !strings.Contains(h.path, longStream) {
			continue
		}
		if st, _, _ := r.getattr(h.fh); st != nfs3errStale {
			t.Errorf("GETATTR of deleted %s: status %d, want NFS3ERR_STALE", h.path, st)
		}
	}
}

// While the controller is away, handles are not stale: calls fail with
// NFS3ERR_IO, and the same handles work once it is back.
func TestHandlesWhileControllerAway(t *testing.T) {
	f, _ := chunkFixture(t)
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	var hs [][]byte
	for _, p := range []string{tier2.ChunkPath("s", "a", 3, 0), tier2.ChunkPath("t", longStream, 12, 77)} {
		hs = append(hs, r.walk(root, strings.Split(p, "/")...))
	}
	f.srv.Close() // a new head remembers no hashed handle: it must walk
	f.start(t)
	r = dialRPC(t, f.port)
	f.cat.Fail(errors.New("controller away"))
	for _, h := range hs {
		if st, _, _ := r.getattr(h); st != nfs3errIO {
			t.Errorf("GETATTR of %x, controller away: status %d, want NFS3ERR_IO (5)", h, st)
		}
	}
	f.cat.Fail(nil)
	for _, h := range hs {
		if st, _, _ := r.getattr(h); st != 0 {
			t.Errorf("GETATTR of %x, controller back: status %d", h, st)
		}
	}
}

func TestDecodeHandle(t *testing.T) {
	for _, p := range []string{"", "s", "s/a", strings.Repeat("x", 62), "s/" + strings.Repeat("y", 70) + "/segment=1/" + tier2.ChunkName(5)} {
		for depth := range components(p) + 1 {
			if depth > maxExportDepth {
				break
			}
			b := encodeHandle(depth, p)
			if len(b) > MaxHandle || len(b)%4 != 0 {
				t.Fatalf("handle of %q: %d bytes", p, len(b))
			}
			k, err := decodeHandle(b)
			if err != nil {
				t.Fatalf("decode handle of %q: %v", p, err)
			}
			if k.depth != depth || (!k.hashed && k.path != p) || (k.hashed && (k.id != view.ID(p) || !within(p, k.path))) {
				t.Errorf("handle of %q depth %d decodes to %+v", p, depth, k)
			}
		}
	}
	for _, b := range [][]byte{nil, {1}, {1, 0, 0}, {3, 0, 0, 0}, {1, 4, 0, 0}, []byte("\x01\x00..\x00\x00"), []byte("\x01\x00a//b\x00\x00\x00"), []byte("\x01\x02s\x00"), bytes.Repeat([]byte{1}, 68), {2, 0, 1, 2, 3, 4, 5, 6},
		{2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 's', 0},                                               // version 2: no longer read
		{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0},                                                 // no levels
		{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // 5 levels
		{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0},                                                 // 2 levels, 1 hash
		{4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0},                                                 // no levels
		{4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0},                                                 // 1 level, half a hash
		{4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 0, 0, 0, 0},                                     // 2 levels, 1 hash
		{5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 0, 0, 0},                                     // no version 5
	} {
		if k, err := decodeHandle(b); err == nil {
			t.Errorf("handle %x decodes to %+v", b, k)
		}
	}
}

const nfs3errIO = 5

// FuzzDecodeHandle: any bytes decode to a path inside its export, or to
// an error; never a panic.
func FuzzDecodeHandle(f *testing.F) {
	f.Add(encodeHandle(0, "s/a/segment=0/"+tier2.ChunkName(0)))
	f.Add(encodeHandle(1, "s/"+strings.Repeat("z", 80)+"/segment=3"))
	f.Add([]byte{1, 0, '.', '.'})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := decodeHandle(b)
		if err != nil {
			return
		}
		if checkPath(k.path) != nil || k.depth > maxExportDepth || (!k.hashed && components(k.path) < k.depth) {
			t.Fatalf("handle %x decodes to %+v", b, k)
		}
	})
}

// A fresh resolver (a restarted head) finds the path of every hashed
// handle by walking, whatever part of the path is long; a made-up handle
// is not found.
func TestResolverWalk(t *testing.T) {
	longScope := strings.Repeat("s", 70)
	mid := strings.Repeat("m", 30)
	f := newFixture(t, map[string][]string{longScope: {"a"}, "short": {mid, longStream}})
	var paths []string
	for _, p := range []string{
		tier2.ChunkPath(longScope, "a", 0, 5),
		tier2.ChunkPath("short", mid, 123456, 1<<40), // only the whole path is long
		tier2.ChunkPath("short", longStream, 2, 0),
		tier2.SegmentDir("short", longStream, 2),
		tier2.StreamDir(longScope, "a"),
	} {
		if strings.HasSuffix(p, ".seq") {
			tier2test.Put(t, f.st, p, []byte("x"))
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		// A version-3 handle, as heads minted before version 4, too.
		for _, b := range [][]byte{encodeHandle(0, p), encodeHandle16(0, p)} {
			k, err := decodeHandle(b)
			if err != nil || !k.hashed {
				t.Fatalf("handle %x of %q: %+v, %v", b, p, k, err)
			}
			got, err := newResolver(f.v).path(context.Background(), k)
			if err != nil || got != p {
				t.Errorf("resolve %q from %x: %q, %v", p, b, got, err)
			}
		}
	}
	// The ID of a real chunk, with a prefix shallower than encodeHandle's.
	k, _ := decodeHandle(encodeHandle(0, paths[1]))
	k.path = ""
	if got, err := newResolver(f.v).path(context.Background(), k); !errors.Is(err, view.ErrNotExist) {
		t.Errorf("made-up prefix: %q, %v; want ErrNotExist", got, err)
	}
}

// countingStorage counts the tier-2 listings made through it.
type countingStorage struct {
	tier2.Storage
	lists atomic.Int64
}

func (c *countingStorage) List(p string) ([]tier2.FileInfo, error) {
	c.lists.Add(1)
	return c.Storage.List(p)
}

// A made-up hashed handle costs a few tier-2 listings whatever the size of
// the tree below its prefix, once per call and not at all when asked
// again; a real one minted by an earlier head costs one listing a level.
func TestForgedHandleCostIsBounded(t *testing.T) {
	longScope := strings.Repeat("s", 60) // every path below is hashed
	f := newFixture(t, map[string][]string{})
	var streams []string
	for i := range 30 {
		s := fmt.Sprintf("stream%02d", i)
		streams = append(streams, s)
		for g := range 10 {
			tier2test.Put(t, f.st, tier2.ChunkPath(longScope, s, int64(g), 0), []byte("x"))
		}
	}
	f.cat.Set(longScope, streams...)
	cs := &countingStorage{Storage: f.st}
	f.srv.Close()
	f.v = view.New(cs, f.cat, view.Options{CatalogTTL: time.Minute})
	f.start(t)
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	real := tier2.ChunkPath(longScope, "stream07", 3, 0)
	realFH := r.walk(root, strings.Split(real, "/")...)

	v2 := make([]byte, 12) // the old layout: ID and an empty prefix
	v2[0] = 2
	binary.BigEndian.PutUint64(v2[2:], 0x1234567890abcdef)
	wrongID := bytes.Clone(realFH) // a real path's hashes, another ID
	binary.BigEndian.PutUint64(wrongID[2:], view.ID(real)^1)
	randomHashes := bytes.Clone(wrongID)
	for i := hashedHead; i < hashedHead+4*int(realFH[10]); i++ {
		randomHashes[i] ^= 0x5a
	}
	procs := []struct {
		name string
		proc uint32
		args func(fh []byte) xdrArgs
	}{
		{"GETATTR", procGetattr, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh) }},
		{"LOOKUP", procLookup, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh).opaque([]byte("x")) }},
		{"ACCESS", procAccess, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh).u32(1) }},
		{"READ", procRead, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh).u64(0).u32(10) }},
		{"READDIR", procReaddir, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh).u64(0).u64(0).u32(4096) }},
		{"READDIRPLUS", procReaddirplus, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh).u64(0).u64(0).u32(4096).u32(8192) }},
		{"FSSTAT", procFsstat, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh) }},
		{"FSINFO", procFsinfo, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh) }},
		{"PATHCONF", procPathconf, func(fh []byte) xdrArgs { return xdrArgs{}.opaque(fh) }},
	}
	for _, forged := range []struct {
		name string
		fh   []byte
	}{{"version 2", v2}, {"wrong ID", wrongID}, {"random hashes", randomHashes}} {
		for i, p := range procs {
			cs.lists.Store(0)
			if st, _ := r.nfs(p.proc, p.args(forged.fh)); st != nfs3errStale {
				t.Errorf("%s of a forged handle (%s): status %d, want NFS3ERR_STALE", p.name, forged.name, st)
			}
			n := cs.lists.Load()
			if n > maxWalkLists || (i > 0 && n > 0) {
				t.Errorf("%s of a forged handle (%s): %d tier-2 listings, want at most %d the first time and none after", p.name, forged.name, n, maxWalkLists)
			}
		}
	}

	// A new head, which minted nothing, finds the real handle's path.
	f.srv.Close()
	f.v = view.New(cs, f.cat, view.Options{CatalogTTL: time.Minute})
	f.start(t)
	r = dialRPC(t, f.port)
	cs.lists.Store(0)
	if st, size, fileid := r.getattr(realFH); st != 0 || size != 1 || fileid != view.ID(real) {
		t.Fatalf("GETATTR of %s after a restart: status %d, size %d, fileid %x", real, st, size, fileid)
	}
	if n := cs.lists.Load(); n > maxHashLevels {
		t.Errorf("GETATTR of %s after a restart: %d tier-2 listings, want at most %d", real, n, maxHashLevels)
	}
	if st, res := r.nfs(procRead, xdrArgs{}.opaque(realFH).u64(0).u32(10)); st != 0 || !bytes.HasSuffix(res, []byte{'x', 0, 0, 0}) {
		t.Errorf("READ of %s after a restart: status %d, %x", real, st, res)
	}
}

// Streams named to share a long-named stream's hash in version-3 handles
// (16 bits: such names take milliseconds to find) do not make that
// stream's hashed handles stale: a head that minted nothing still finds
// them, and a made-up handle below the same stream costs at most
// maxWalkLists tier-2 listings.
func TestHandlesBesideCollidingNames(t *testing.T) {
	scope := strings.Repeat("s", 50) // every path below is hashed
	target := strings.Repeat("t", 40)
	streams := []string{target}
	for i := 0; len(streams) <= maxWalkLists; i++ {
		if n := fmt.Sprintf("c%d", i); nameHash16(n) == nameHash16(target) {
			streams = append(streams, n)
		}
	}
	f := newFixture(t, map[string][]string{scope: streams})
	for _, s := range streams {
		tier2test.Put(t, f.st, tier2.ChunkPath(scope, s, 0, 0), []byte(s))
	}
	real := tier2.ChunkPath(scope, target, 0, 0)
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	realFH := r.walk(root, strings.Split(real, "/")...)
	if realFH[0] != handleHashed {
		t.Fatalf("the handle of %s is not hashed: %x", real, realFH)
	}
	forged := bytes.Clone(realFH) // the real path's hashes, another ID
	binary.BigEndian.PutUint64(forged[2:], view.ID(real)^1)

	// A new head, which minted nothing.
	cs := &countingStorage{Storage: f.st}
	f.srv.Close()
	f.v = view.New(cs, f.cat, view.Options{CatalogTTL: time.Minute})
	f.start(t)
	r = dialRPC(t, f.port)
	if st, size, fileid := r.getattr(realFH); st != 0 || size != uint64(len(target)) || fileid != view.ID(real) {
		t.Errorf("GETATTR of %s beside %d streams of its 16-bit hash: status %d, size %d, fileid %x", real, len(streams)-1, st, size, fileid)
	}
	cs.lists.Store(0)
	if st, _, _ := r.getattr(forged); st != nfs3errStale {
		t.Errorf("GETATTR of a forged handle: status %d, want NFS3ERR_STALE", st)
	}
	if n := cs.lists.Load(); n > maxWalkLists {
		t.Errorf("GETATTR of a forged handle: %d tier-2 listings, want at most %d", n, maxWalkLists)
	}
}

// encodeHandle16 is the version-3 handle of p, an entry at most
// maxHashLevels deep, with an empty prefix: heads minted such handles
// before version 4.
func encodeHandle16(depth int, p string) []byte {
	parts := strings.Split(p, "/")
	b := []byte{handleHashed16, byte(depth)}
	b = binary.BigEndian.AppendUint64(b, view.ID(p))
	b = append(b, byte(len(parts)))
	for _, c := range parts {
		b = binary.BigEndian.AppendUint16(b, nameHash16(c))
	}
	return pad(b)
}
