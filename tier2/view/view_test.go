package view_test

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// fixture: scope s with streams a (two segments) and b (nothing tiered),
// a chunk being written, a hand-over file, and a deleted stream's chunks.
func fixture(t *testing.T) (*view.View, *viewtest.Catalog) {
	t.Helper()
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tier2test.Put(t, st, tier2.ChunkPath("s", "a", 0, 0), []byte("chunk-0-0"))
	tier2test.Put(t, st, tier2.ChunkPath("s", "a", 0, 9), []byte("chunk-0-9!"))
	tier2test.Put(t, st, tier2.ChunkPath("s", "a", 3, 0), []byte("c3"))
	tier2test.Put(t, st, tier2.TempChunkPath("s", "a", 3, 2), []byte("partial"))
	tier2test.Put(t, st, tier2.HandoverPath(1, 2), []byte("handover"))
	tier2test.Put(t, st, tier2.ChunkPath("s", "gone", 0, 0), []byte("deleted stream"))
	tier2test.Put(t, st, "s/a/notes.txt", []byte("stray"))
	cat := viewtest.NewCatalog(map[string][]string{"s": {"b", "a"}, "t": nil})
	return view.New(st, cat, view.Options{CatalogTTL: -1}), cat
}

func names(es []view.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestTreeShowsOnlyCatalogStreamsAndCompleteChunks(t *testing.T) {
	v, _ := fixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"", []string{"s", "t"}},
		{"/", []string{"s", "t"}},
		{"s", []string{"a", "b"}},
		{"/s/a/", []string{"segment=0", "segment=3"}},
		{"s/a/segment=0", []string{tier2.ChunkName(0), tier2.ChunkName(9)}},
		{"s/a/segment=3", []string{tier2.ChunkName(0)}},
		{"s/b", nil},
		{"t", nil},
	} {
		got, err := v.List(ctx, c.dir)
		if err != nil {
			t.Fatalf("List(%q): %v", c.dir, err)
		}
		if !slices.Equal(names(got), c.want) {
			t.Errorf("List(%q) = %q, want %q", c.dir, names(got), c.want)
		}
		if got, err := v.Names(ctx, c.dir); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Names(%q) = %q, %v, want %q", c.dir, got, err, c.want)
		}
	}
	for _, p := range []string{
		"x", "s/gone", "s/gone/segment=0/" + tier2.ChunkName(0), "s/a/notes.txt",
		tier2.TempChunkPath("s", "a", 3, 2), tier2.HandoverPath(1, 2), "s/a/segment=01",
		"s/a/segment=-1", "s/a/../a", "s//a", "s/a/segment=0/" + tier2.ChunkName(0) + "/x",
	} {
		if _, err := v.Stat(ctx, p); !errors.Is(err, view.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want view.ErrNotExist", p, err)
		}
		if _, err := v.Open(ctx, p); !errors.Is(err, view.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want view.ErrNotExist", p, err)
		}
	}
}

func TestStatOpenAndRead(t *testing.T) {
	v, _ := fixture(t)
	ctx := context.Background()
	p := tier2.ChunkPath("s", "a", 0, 9)
	e, err := v.Stat(ctx, "/"+p)
	if err != nil {
		t.Fatal(err)
	}
	if e.IsDir || e.Size != 10 || e.Path != p || e.Name != tier2.ChunkName(9) || e.Mode() != view.FileMode || e.ID != view.ID(p) {
		t.Fatalf("Stat = %+v", e)
	}
	f, err := v.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 6); n != 4 || (err != nil && err != io.EOF) || string(buf[:n]) != "0-9!" {
		t.Fatalf("ReadAt = %d %v %q", n, err, buf[:n])
	}
	if f.Size() != 10 {
		t.Fatalf("Size = %d", f.Size())
	}
	d, err := v.Stat(ctx, "s/a")
	if err != nil || !d.IsDir || d.Mode() != iofs.ModeDir|view.DirMode || d.Size != 0 {
		t.Fatalf("Stat(s/a) = %+v, %v", d, err)
	}
	if _, err := v.Open(ctx, "s/a"); !errors.Is(err, view.ErrIsDir) {
		t.Fatalf("Open(dir) = %v, want view.ErrIsDir", err)
	}
	if _, err := v.List(ctx, p); !errors.Is(err, view.ErrNotDir) {
		t.Fatalf("List(file) = %v, want view.ErrNotDir", err)
	}
}

func TestIDsAreStableAndDistinct(t *testing.T) {
	if view.ID("") != view.RootID || view.ID("/") != view.RootID {
		t.Fatalf("root id %d", view.ID(""))
	}
	seen := map[uint64]string{}
	for _, p := range []string{"s", "s/a", "s/a/segment=0", tier2.ChunkPath("s", "a", 0, 0), tier2.ChunkPath("s", "a", 0, 9), "t"} {
		id := view.ID(p)
		if id < view.FirstID || id>>63 != 0 {
			t.Errorf("view.ID(%q) = %d out of range", p, id)
		}
		if id != view.ID("/"+p+"/") {
			t.Errorf("view.ID(%q) depends on slashes", p)
		}
		if q, dup := seen[id]; dup {
			t.Errorf("view.ID(%q) = view.ID(%q)", p, q)
		}
		seen[id] = p
	}
}

func TestCatalogIsCachedForItsTTL(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	cat := viewtest.NewCatalog(map[string][]string{"s": {"a"}})
	v := view.New(st, cat, view.Options{CatalogTTL: time.Minute, Now: func() time.Time { return now }})
	ctx := context.Background()
	for range 3 {
		if _, err := v.Stat(ctx, "s/a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := cat.Calls(); n != 2 {
		t.Fatalf("%d catalog calls for three stats within the TTL, want 2", n)
	}
	cat.RemoveScope("s")
	if _, err := v.Stat(ctx, "s/a"); err != nil {
		t.Fatalf("within the TTL the stream is still there: %v", err)
	}
	now = now.Add(time.Minute)
	if _, err := v.Stat(ctx, "s/a"); !errors.Is(err, view.ErrNotExist) {
		t.Fatalf("after the TTL: %v, want view.ErrNotExist", err)
	}
}

func TestCatalogFailureIsUnavailable(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	down := viewtest.NewCatalog(nil)
	down.Fail(errors.New("connection refused"))
	v := view.New(st, down, view.Options{})
	if _, err := v.List(context.Background(), ""); !errors.Is(err, view.ErrUnavailable) {
		t.Fatalf("List = %v, want view.ErrUnavailable", err)
	}
}

// Names of the root and of a scope come from the catalog alone: no
// tier-2 call, however many streams; the names are the caller's.
func TestNamesOfAScopeAskTier2Nothing(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tier2test.Put(t, st, tier2.ChunkPath("s", "a", 0, 0), []byte("chunk"))
	tier2test.Put(t, st, tier2.ChunkPath("s", "gone", 0, 0), []byte("deleted stream"))
	counted := tier2test.NewFaulty(st)
	v := view.New(counted, viewtest.NewCatalog(map[string][]string{"s": {"c", "a", "b"}}), view.Options{CatalogTTL: time.Minute})
	ctx := context.Background()
	got, err := v.Names(ctx, "/s/")
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Names(s) = %q, %v", got, err)
	}
	got[0] = "changed"
	if again, _ := v.Names(ctx, "s"); again[0] != "a" {
		t.Fatalf("Names(s) after the caller changed its slice: %q", again)
	}
	if got, err := v.Names(ctx, ""); err != nil || !slices.Equal(got, []string{"s"}) {
		t.Fatalf("Names(root) = %q, %v", got, err)
	}
	if stats, lists := counted.Calls(tier2test.OpStat), counted.Calls(tier2test.OpList); stats+lists != 0 {
		t.Fatalf("Names of the root and a scope: %d tier-2 Stat and %d List calls, want none", stats, lists)
	}
	for _, p := range []string{"x", "s/gone", "s/a/segment=0/" + tier2.ChunkName(0)} {
		if _, err := v.Names(ctx, p); err == nil {
			t.Errorf("Names(%q): no error", p)
		}
	}
}
