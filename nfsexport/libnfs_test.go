package nfsexport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
)

// longStream makes paths longer than a literal handle holds.
const longStream = "a-stream-whose-name-is-long-enough-to-need-hashed-handles"

// chunkFixture starts a head over: scope s with stream a (segments 0 and
// 3; one chunk of several READs) and an empty stream b; scope t with the
// long-named stream; a chunk being written, a stray file and a deleted
// stream's chunk, none of which are in the tree. It returns the chunks'
// bytes by view path.
func chunkFixture(t testing.TB) (*fixture, map[string][]byte) {
	t.Helper()
	f := newFixture(t, map[string][]string{"s": {"a", "b"}, "t": {longStream}})
	chunks := map[string][]byte{}
	for _, c := range []struct {
		scope, stream string
		seg, first    int64
		n, size       int
	}{
		{"s", "a", 0, 0, 10, 100},
		{"s", "a", 0, 1080, 2600, 1000}, // 2.6 MB: several READs of 1 MiB
		{"s", "a", 0, 9_000_000, 1, 1},
		{"s", "a", 3, 0, 50, 333},
		{"t", longStream, 0, 0, 20, 64},
		{"t", longStream, 12, 77, 3, 5000},
	} {
		p := tier2.ChunkPath(c.scope, c.stream, c.seg, c.first)
		chunks[p] = tier2test.WriteLetterChunk(t, f.st, p, c.first, c.n, c.size)
	}
	tier2test.Put(t, f.st, tier2.TempChunkPath("s", "a", 3, 50), []byte("being written"))
	tier2test.Put(t, f.st, "s/a/notes.txt", []byte("stray"))
	tier2test.Put(t, f.st, tier2.ChunkPath("s", "gone", 0, 0), []byte("deleted stream"))
	return f, chunks
}

// viewTree lists every entry under root, recursively, as nfs-ls -R shows
// them: "<path relative to root> <size>" (0 for directories), sorted.
func viewTree(t testing.TB, v *view.View, root string) []string {
	t.Helper()
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		es, err := v.List(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			rel := strings.TrimPrefix(strings.TrimPrefix(e.Path, root), "/")
			out = append(out, rel+" "+strconv.FormatInt(e.Size, 10))
			if e.IsDir {
				walk(e.Path)
			}
		}
	}
	walk(root)
	slices.Sort(out)
	return out
}

// nfsLs runs nfs-ls -R on url and returns "<path> <size>" lines, sorted.
func nfsLs(t testing.TB, url string) []string {
	t.Helper()
	out, err := run(testCtx(t), "nfs-ls", "-R", url)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 6 {
			continue
		}
		lines = append(lines, fs[len(fs)-1]+" "+fs[len(fs)-2])
	}
	slices.Sort(lines)
	return lines
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestLibnfsListsAndReadsEveryChunk(t *testing.T) {
	f, chunks := chunkFixture(t)
	want := viewTree(t, f.v, "")
	if got := nfsLs(t, f.url("/")); !slices.Equal(got, want) {
		t.Fatalf("nfs-ls -R /:\n%s\nwant (the view):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range want {
		if strings.Contains(l, "_tmp.") || strings.Contains(l, "notes.txt") || strings.Contains(l, "gone") {
			t.Errorf("listed %q: not in the tree", l)
		}
	}
	dir := t.TempDir()
	for p, data := range chunks {
		got, err := run(testCtx(t), "nfs-cat", f.url("/"+p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("nfs-cat %s: %d bytes, differ from the chunk's %d", p, len(got), len(data))
		}
		local := filepath.Join(dir, filepath.Base(p))
		if _, err := run(testCtx(t), "nfs-cp", f.url("/"+p), local); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(local); err != nil || !bytes.Equal(got, data) {
			t.Errorf("nfs-cp %s: %d bytes (%v), differ from the chunk's %d", p, len(got), err, len(data))
		}
		os.Remove(local)
	}
}

func TestLibnfsScopeMount(t *testing.T) {
	f, _ := chunkFixture(t)
	got := nfsLs(t, f.url("/s"))
	if want := viewTree(t, f.v, "s"); !slices.Equal(got, want) {
		t.Fatalf("nfs-ls -R /s:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range got {
		if strings.Contains(l, longStream) {
			t.Errorf("mount of /s lists %q of scope t", l)
		}
	}
	for _, bad := range []string{"/nope", "/s/nope", "/s/a/segment=0/" + tier2.ChunkName(0), "/s/../t"} {
		if out, err := run(testCtx(t), "nfs-ls", f.url(bad)); err == nil || !strings.Contains(err.Error(), "MNT3ERR_NOENT") {
			t.Errorf("nfs-ls %s: %s, %v; want MNT3ERR_NOENT", bad, out, err)
		}
	}
	// The mount's export list names "/" and each scope.
	r := dialRPC(t, f.port)
	stat, res := r.call(progMount, versMount, mountExport, nil)
	if stat != 0 {
		t.Fatalf("EXPORT: accept_stat %d", stat)
	}
	var exports []string
	for len(res) >= 4 && res[3] == 1 {
		n := int(res[7])
		exports = append(exports, string(res[8:8+n]))
		res = res[8+(n+3)&^3+4:]
	}
	if want := []string{"/", "/s", "/t"}; !slices.Equal(exports, want) {
		t.Errorf("EXPORT lists %q, want %q", exports, want)
	}
}

func TestLibnfsWritesRefused(t *testing.T) {
	f, chunks := chunkFixture(t)
	src := filepath.Join(t.TempDir(), "new.seq")
	if err := os.WriteFile(src, []byte("not welcome"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{"/s/a/segment=0/new.seq", "/s/a/segment=0/" + tier2.ChunkName(0)} {
		out, err := run(testCtx(t), "nfs-cp", src, f.url(dst))
		if err == nil || !strings.Contains(err.Error(), "ROFS") && !strings.Contains(err.Error(), "Read-only") {
			t.Errorf("nfs-cp to %s: %s, %v; want a read-only error", dst, out, err)
		}
		t.Logf("nfs-cp to %s: %v", dst, err)
	}
	if got := viewTree(t, f.v, ""); len(got) != len(viewTree(t, f.v, "")) {
		t.Fatal("tree changed")
	}
	p := tier2.ChunkPath("s", "a", 0, 0)
	if got, err := run(testCtx(t), "nfs-cat", f.url("/"+p)); err != nil || !bytes.Equal(got, chunks[p]) {
		t.Fatalf("chunk after refused writes: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.st.Root(), "s/a/segment=0/new.seq")); err == nil {
		t.Fatal("nfs-cp created a file in tier 2")
	}

	// Every write-type procedure, by hand: NFS3ERR_ROFS.
	r := dialRPC(t, f.port)
	root, st := r.mount("/")
	if st != 0 {
		t.Fatalf("mount: %d", st)
	}
	seg := r.walk(root, "s", "a", "segment=0")
	file := r.walk(seg, tier2.ChunkName(0))
	sattr := xdrArgs{}.u32(0).u32(0).u32(0).u32(0).u32(0).u32(0) // nothing set
	name := func(h []byte, n string) xdrArgs { return xdrArgs{}.opaque(h).opaque([]byte(n)) }
	for _, c := range []struct {
		what string
		proc uint32
		args []byte
	}{
		{"SETATTR", procSetattr, append(xdrArgs{}.opaque(file), append(sattr, 0, 0, 0, 0)...)},
		{"WRITE", procWrite, xdrArgs{}.opaque(file).u64(0).u32(5).u32(2).opaque([]byte("hello"))},
		{"CREATE", procCreate, append(name(seg, "x"), append(xdrArgs{}.u32(0), sattr...)...)},
		{"MKDIR", procMkdir, append(name(seg, "d"), sattr...)},
		{"SYMLINK", procSymlink, append(append(name(seg, "l"), sattr...), xdrArgs{}.opaque([]byte("target"))...)},
		{"MKNOD", procMknod, append(name(seg, "n"), xdrArgs{}.u32(6)...)}, // NF3FIFO
		{"REMOVE", procRemove, name(seg, tier2.ChunkName(0))},
		{"RMDIR", procRmdir, name(root, "s")},
		{"RENAME", procRename, append(name(seg, tier2.ChunkName(0)), name(seg, "y")...)},
		{"LINK", procLink, append(xdrArgs{}.opaque(file), name(seg, "z")...)},
		{"COMMIT", procCommit, xdrArgs{}.opaque(file).u64(0).u32(0)},
	} {
		if st, _ := r.nfs(c.proc, c.args); st != nfs3errROFS {
			t.Errorf("%s: status %d, want NFS3ERR_ROFS (30)", c.what, st)
		}
	}
	// A WRITE larger than the gate reads into memory: refused the same.
	big := xdrArgs{}.opaque(file).u64(0).u32(1 << 20).u32(2).opaque(make([]byte, 1<<20))
	if st, _ := r.nfs(procWrite, big); st != nfs3errROFS {
		t.Errorf("1 MiB WRITE: status %d, want NFS3ERR_ROFS (30)", st)
	}
	if st, size, _ := r.getattr(file); st != 0 || int(size) != len(chunks[p]) {
		t.Errorf("GETATTR after the writes: status %d size %d", st, size)
	}
}

// FSINFO, FSSTAT and PATHCONF describe a read-only file system; of a
// stale handle they answer NFS3ERR_STALE with the body RFC 1813 gives.
func TestFSInfoReadOnly(t *testing.T) {
	f, _ := chunkFixture(t)
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	st, res := r.nfs(procFsinfo, xdrArgs{}.opaque(root))
	if st != 0 {
		t.Fatalf("FSINFO: status %d", st)
	}
	d := &reader{b: res}
	if d.u32() != 1 {
		t.Fatal("FSINFO without attributes")
	}
	d.skip(fattrSize)
	rtmax, rtpref, _, wtmax := d.u32(), d.u32(), d.u32(), d.u32()
	d.skip(4 + 4 + 4 + 8 + 8)
	props := d.u32()
	if d.bad || rtmax != maxReadSize || rtpref != maxReadSize || wtmax == 0 || props != fsf3Homogeneous {
		t.Errorf("FSINFO: rtmax %d rtpref %d wtmax %d properties %#x", rtmax, rtpref, wtmax, props)
	}
	if st, res := r.nfs(procFsstat, xdrArgs{}.opaque(root)); st != 0 || len(res) < 4+fattrSize+6*8 {
		t.Errorf("FSSTAT: status %d, %d bytes", st, len(res))
	} else if free := res[4+fattrSize+8 : 4+fattrSize+24]; !bytes.Equal(free, make([]byte, 16)) {
		t.Errorf("FSSTAT: free and available bytes %x, want 0", free)
	}
	if st, _ := r.nfs(procPathconf, xdrArgs{}.opaque(root)); st != 0 {
		t.Errorf("PATHCONF: status %d", st)
	}
	file := r.walk(root, "s", "a", "segment=3", tier2.ChunkName(0))
	if err := f.st.Remove(tier2.ChunkPath("s", "a", 3, 0)); err != nil {
		t.Fatal(err)
	}
	seg := r.walk(root, "s", "a", "segment=3")
	if st, res := r.nfs(procRead, xdrArgs{}.opaque(seg).u64(0).u32(10)); st != nfs3errIsDir || len(res) != 4+fattrSize || res[3] != 1 {
		t.Errorf("READ of a directory: status %d, body %x; want NFS3ERR_ISDIR and its attributes", st, res)
	}
	for _, proc := range []uint32{procFsinfo, procFsstat, procPathconf, procRead} {
		args := xdrArgs{}.opaque(file)
		if proc == procRead {
			args = args.u64(0).u32(10)
		}
		st, res := r.nfs(proc, args)
		if st != nfs3errStale || len(res) != 4 || !bytes.Equal(res, make([]byte, 4)) {
			t.Errorf("proc %d of a removed chunk: status %d, body %x; want NFS3ERR_STALE and an empty post_op_attr", proc, st, res)
		}
	}
}
