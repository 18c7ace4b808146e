package nfsexport

import (
	"context"
	"encoding/binary"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
)

func TestLibnfsDeletedStreamDisappears(t *testing.T) {
	f, _ := chunkFixture(t)
	before := nfsLs(t, f.url("/s"))
	if !slices.Contains(before, "a 0") {
		t.Fatalf("stream a not listed: %q", before)
	}
	f.cat.Set("s", "b") // the controller deleted stream a; its chunks stay a while
	after := nfsLs(t, f.url("/s"))
	for _, l := range after {
		if l == "a 0" || strings.HasPrefix(l, "a/") {
			t.Errorf("deleted stream listed: %q", l)
		}
	}
	if !slices.Contains(after, "b 0") {
		t.Errorf("stream b not listed: %q", after)
	}
	p := tier2.ChunkPath("s", "a", 0, 0)
	if out, err := run(testCtx(t), "nfs-cat", f.url("/"+p)); err == nil {
		t.Errorf("nfs-cat of a deleted stream's chunk: %d bytes, no error", len(out))
	}
}

func TestLibnfsChunkRenamedIntoPlace(t *testing.T) {
	f, _ := chunkFixture(t)
	seg := "/" + tier2.SegmentDir("s", "a", 3)
	first := nfsLs(t, f.url(seg))
	// The tier-2 writer: the chunk under its _tmp. name, then renamed.
	tmp := tier2.TempChunkPath("s", "a", 3, 90)
	data := tier2test.WriteLetterChunk(t, f.st, tmp, 90, 40, 123)
	if got := nfsLs(t, f.url(seg)); !slices.Equal(got, first) {
		t.Fatalf("a chunk being written is listed:\n%q\nwant %q", got, first)
	}
	if err := f.st.Rename(tmp, tier2.ChunkPath("s", "a", 3, 90)); err != nil {
		t.Fatal(err)
	}
	second := nfsLs(t, f.url(seg))
	want := append(slices.Clone(first), fmt.Sprintf("%s %d", tier2.ChunkName(90), len(data)))
	slices.Sort(want)
	if !slices.Equal(second, want) {
		t.Fatalf("after the rename:\n%q\nwant %q", second, want)
	}
	for _, l := range second {
		if strings.Contains(l, "_tmp.") {
			t.Errorf("listed %q", l)
		}
	}
}

// A chunk renamed into place while a listing is being paged: the pages
// go on from the listing's snapshot (no NFS3ERR_BAD_COOKIE, no new name
// midway), and the next listing has it.
func TestReaddirChunkTieredDuringListing(t *testing.T) {
	f := newFixture(t, map[string][]string{"s": {"a"}})
	for i := range 100 {
		tier2test.Put(t, f.st, tier2.ChunkPath("s", "a", 0, int64(i)*10), []byte("c"))
	}
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	dir := r.walk(root, "s", "a", "segment=0")
	list := func(midway func()) []string {
		var names []string
		cookie, verf := uint64(0), uint64(0)
		for page := 0; ; page++ {
			st, res := r.nfs(procReaddirplus, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(512).u32(4096))
			if st != 0 {
				t.Fatalf("READDIRPLUS page %d: status %d", page, st)
			}
			var got []string
			var eof bool
			verf, got, cookie, eof = parseReaddir(t, res, true)
			names = append(names, got...)
			if eof {
				return slices.DeleteFunc(names, func(n string) bool { return n == "." || n == ".." })
			}
			if page == 2 && midway != nil {
				midway()
			}
		}
	}
	tiered := tier2.ChunkName(905) // sorts into the listing's last page
	first := list(func() {
		tmp := tier2.TempChunkPath("s", "a", 0, 905)
		tier2test.WriteLetterChunk(t, f.st, tmp, 905, 3, 10)
		if err := f.st.Rename(tmp, tier2.ChunkPath("s", "a", 0, 905)); err != nil {
			t.Fatal(err)
		}
	})
	if len(first) != 100 || slices.Contains(first, tiered) {
		t.Fatalf("the listing during the rename: %d names, has the new chunk: %v", len(first), slices.Contains(first, tiered))
	}
	second := list(nil)
	if len(second) != 101 || !slices.Contains(second, tiered) {
		t.Fatalf("the next listing: %d names, has the new chunk: %v", len(second), slices.Contains(second, tiered))
	}
}

// manyChunks is the segment of the paging test: small files, written
// straight in tier 2's layout (the view lists names and sizes only).
const manyChunks = 3000

func TestReaddirPagesThousandsOfChunks(t *testing.T) {
	f := newFixture(t, map[string][]string{"s": {"big"}})
	for i := range manyChunks {
		tier2test.Put(t, f.st, tier2.ChunkPath("s", "big", 0, int64(i)*100), []byte(fmt.Sprint(i)))
	}
	want := viewTree(t, f.v, tier2.SegmentDir("s", "big", 0))
	if len(want) != manyChunks {
		t.Fatalf("view lists %d chunks", len(want))
	}
	got := nfsLs(t, f.url("/"+tier2.SegmentDir("s", "big", 0)))
	if !slices.Equal(got, want) {
		t.Fatalf("nfs-ls lists %d entries, the view %d; first differing: %q", len(got), len(want), firstDiff(got, want))
	}

	// By hand, with the smallest counts go-nfs takes: every name once, in
	// pages, the cookie verifier kept.
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	dir := r.walk(root, "s", "big", "segment=0")
	var names []string
	for _, plus := range []bool{false, true} {
		names = names[:0]
		cookie, verf, pages := uint64(0), uint64(0), 0
		for {
			var st uint32
			var res []byte
			if plus {
				st, res = r.nfs(procReaddirplus, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(512).u32(4096))
			} else {
				st, res = r.nfs(procReaddir, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(1024))
			}
			if st != 0 {
				t.Fatalf("readdir (plus %v) page %d: status %d", plus, pages, st)
			}
			var eof bool
			var got []string
			verf, got, cookie, eof = parseReaddir(t, res, plus)
			names = append(names, got...)
			pages++
			if eof {
				break
			}
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == "." || n == ".." })
		var wantNames []string
		for _, l := range want {
			wantNames = append(wantNames, strings.Fields(l)[0])
		}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("readdir (plus %v): %d names in %d pages, want %d; first differing %q", plus, len(names), pages, len(wantNames), firstDiff(names, wantNames))
		}
		if pages < 10 {
			t.Errorf("readdir (plus %v): %d pages; the test wants many", plus, pages)
		}
	}
}

// parseReaddir decodes a READDIR(PLUS) reply after its status: the cookie
// verifier, the names, the last cookie and eof.
func parseReaddir(t testing.TB, res []byte, plus bool) (verf uint64, names []string, last uint64, eof bool) {
	t.Helper()
	verf, names, _, last, eof = parseReaddirIDs(t, res, plus)
	return verf, names, last, eof
}

// parseReaddirIDs is parseReaddir with each name's fileid.
func parseReaddirIDs(t testing.TB, res []byte, plus bool) (verf uint64, names []string, ids []uint64, last uint64, eof bool) {
	t.Helper()
	d := &reader{b: res}
	if d.u32() == 1 { // dir_attributes
		d.skip(84)
	}
	verf = d.u64()
	for d.u32() == 1 {
		ids = append(ids, d.u64())
		names = append(names, string(d.opaque()))
		last = d.u64()
		if plus {
			if d.u32() == 1 {
				d.skip(84)
			}
			if d.u32() == 1 {
				d.opaque()
			}
		}
	}
	eof = d.u32() == 1
	if d.bad {
		t.Fatalf("short READDIR reply: %x", res)
	}
	return verf, names, ids, last, eof
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) skip(n int) {
	if len(r.b) < n {
		r.bad, r.b = true, nil
		return
	}
	r.b = r.b[n:]
}

func (r *reader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 { return uint64(r.u32())<<32 | uint64(r.u32()) }

func (r *reader) opaque() []byte {
	n := int(r.u32())
	if len(r.b) < (n+3)&^3 {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[(n+3)&^3:]
	return v
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q vs %q at %d", a[i], b[i], i)
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// A cookie and verifier of one directory's listing, sent with another
// directory's handle, are NFS3ERR_BAD_COOKIE (RFC 1813 §3.3.16), not the
// first directory's entries.
func TestReaddirVerifierOfAnotherDirectory(t *testing.T) {
	f := newFixture(t, map[string][]string{"s": {"a"}})
	for seg := range 2 {
		for i := range 50 {
			tier2test.Put(t, f.st, tier2.ChunkPath("s", "a", int64(seg), int64(seg*1000+i)), []byte("c"))
		}
	}
	r := dialRPC(t, f.port)
	root, _ := r.mount("/")
	dirA := r.walk(root, "s", "a", "segment=0")
	dirB := r.walk(root, "s", "a", "segment=1")
	for _, plus := range []bool{false, true} {
		page := func(dir []byte, cookie, verf uint64) (uint32, []byte) {
			if plus {
				return r.nfs(procReaddirplus, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(512).u32(4096))
			}
			return r.nfs(procReaddir, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(1024))
		}
		st, res := page(dirA, 0, 0)
		if st != 0 {
			t.Fatalf("READDIR (plus %v) of segment=0: status %d", plus, st)
		}
		verf, _, cookie, eof := parseReaddir(t, res, plus)
		if eof || cookie == 0 {
			t.Fatalf("READDIR (plus %v) of segment=0 fits one page: cookie %d", plus, cookie)
		}
		if st, res := page(dirB, cookie, verf); st != nfs3errBadCookie {
			_, names, _, _ := parseReaddir(t, res, plus)
			t.Errorf("READDIR (plus %v) of segment=1 with segment=0's verifier: status %d, names %q; want NFS3ERR_BAD_COOKIE", plus, st, names)
		}
		// segment=0's own next page still comes from its listing.
		if st, _ := page(dirA, cookie, verf); st != 0 {
			t.Errorf("READDIR (plus %v) of segment=0's next page: status %d", plus, st)
		}
	}
}

const nfs3errBadCookie = 10003

// The same directory path below two exports (/p/a/segment=0 under /p and
// /q/a/segment=0 under /q, or each segment mounted on its own) is the same
// path to go-nfs, which names directories relative to their export: the
// second page of one export's listing still carries that export's entries,
// however the other's listing was paged in between.
func TestReaddirPagesOfTwoExports(t *testing.T) {
	f := newFixture(t, map[string][]string{"p": {"a"}, "q": {"a"}})
	for _, s := range []string{"p", "q"} {
		for i := range 50 {
			tier2test.Put(t, f.st, tier2.ChunkPath(s, "a", 0, int64(i)), []byte(s))
		}
	}
	r := dialRPC(t, f.port)
	dirs := map[string][]byte{}
	for _, s := range []string{"p", "q"} {
		root, st := r.mount("/" + s)
		if st != 0 {
			t.Fatalf("mount /%s: status %d", s, st)
		}
		dirs["/"+s] = r.walk(root, "a", "segment=0")
		seg := "/" + tier2.SegmentDir(s, "a", 0)
		if dirs[seg], st = r.mount(seg); st != 0 {
			t.Fatalf("mount %s: status %d", seg, st)
		}
	}
	for _, plus := range []bool{false, true} {
		page := func(dir []byte, cookie, verf uint64) (uint32, []byte) {
			if plus {
				return r.nfs(procReaddirplus, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(512).u32(4096))
			}
			return r.nfs(procReaddir, xdrArgs{}.opaque(dir).u64(cookie).u64(verf).u32(1024))
		}
		for _, mounts := range [][2]string{{"/p", "/q"}, {"/" + tier2.SegmentDir("p", "a", 0), "/" + tier2.SegmentDir("q", "a", 0)}} {
			first := func(m string) (verf, cookie uint64) {
				st, res := page(dirs[m], 0, 0)
				if st != 0 {
					t.Fatalf("READDIR (plus %v) of a/segment=0 under %s: status %d", plus, m, st)
				}
				verf, _, cookie, eof := parseReaddir(t, res, plus)
				if eof || cookie == 0 {
					t.Fatalf("READDIR (plus %v) under %s fits one page", plus, m)
				}
				return verf, cookie
			}
			vp, cp := first(mounts[0])
			vq, cq := first(mounts[1])
			for _, m := range []struct {
				mount, scope string
				verf, cookie uint64
			}{{mounts[0], "p", vp, cp}, {mounts[1], "q", vq, cq}} {
				st, res := page(dirs[m.mount], m.cookie, m.verf)
				if st != 0 {
					t.Fatalf("READDIR (plus %v) page 2 under %s: status %d", plus, m.mount, st)
				}
				_, names, ids, _, _ := parseReaddirIDs(t, res, plus)
				if len(names) == 0 {
					t.Fatalf("READDIR (plus %v) page 2 under %s: no entries", plus, m.mount)
				}
				for i, n := range names {
					if want := view.ID(tier2.SegmentDir(m.scope, "a", 0) + "/" + n); ids[i] != want {
						t.Errorf("READDIR (plus %v) page 2 under %s: %s has fileid %x, want %x (another export's entry)", plus, m.mount, n, ids[i], want)
						break
					}
				}
			}
		}
	}
}

// The listings kept for paging are bounded in number, in entries and in
// age; a listing over the entry bound is not kept (its pages list the
// directory again) and evicts nothing.
func TestPagedListingsBounded(t *testing.T) {
	h := newHandler(context.Background(), nil)
	now := time.Unix(1000, 0)
	h.now = func() time.Time { return now }
	half := listing(maxPagedEntries/2 + 1)
	va := h.VerifierFor("a", half)
	vb := h.VerifierFor("b", half)
	if h.DataForVerifier("a", va) != nil || h.DataForVerifier("b", vb) == nil {
		t.Errorf("two listings of %d entries, at most %d kept: the older kept or the newer dropped", len(half), maxPagedEntries)
	}
	if h.DataForVerifier("a", vb) != nil {
		t.Error("b's listing returned for path a")
	}
	huge := listing(maxPagedEntries + 1)
	if vh := h.VerifierFor("huge", huge); h.DataForVerifier("huge", vh) != nil || h.DataForVerifier("b", vb) == nil {
		t.Error("a listing over the bound was kept, or evicted the others")
	}
	var vs []uint64
	for i := range maxPagedDirs + 1 {
		vs = append(vs, h.VerifierFor(fmt.Sprint("d", i), listing(1)))
	}
	if h.DataForVerifier("d0", vs[0]) != nil || h.DataForVerifier(fmt.Sprint("d", maxPagedDirs), vs[maxPagedDirs]) == nil {
		t.Errorf("%d listings: the oldest kept or the newest dropped (at most %d kept)", maxPagedDirs+1, maxPagedDirs)
	}
	h.dirs.Lock()
	n, entries := len(h.dirs.order), h.dirs.entries
	h.dirs.Unlock()
	if n > maxPagedDirs || entries > maxPagedEntries {
		t.Errorf("%d listings of %d entries kept", n, entries)
	}
	now = now.Add(pagedTTL)
	if h.DataForVerifier(fmt.Sprint("d", maxPagedDirs), vs[maxPagedDirs]) != nil {
		t.Errorf("a listing returned after %v", pagedTTL)
	}
	h.VerifierFor("new", listing(1))
	h.dirs.Lock()
	n = len(h.dirs.order)
	h.dirs.Unlock()
	if n != 1 {
		t.Errorf("%d listings kept after the others expired, want 1", n)
	}
}

// listing is a directory listing of n entries for the handler's paging.
func listing(n int) []iofs.FileInfo {
	out := make([]iofs.FileInfo, n)
	for i := range out {
		out[i] = fileInfo{}
	}
	return out
}
