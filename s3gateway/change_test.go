package s3gateway

import (
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// lsKeys lists a bucket recursively with the AWS CLI.
func (f *fixture) lsKeys(t *testing.T, bucket string) []string {
	t.Helper()
	out, stderr, err := f.awsCLI(t, "path", testSecret, "s3", "ls", "--recursive", "s3://"+bucket)
	if err != nil && !(len(out) == 0 && stderr == "") { // an empty listing exits 1
		t.Fatalf("s3 ls: %v\n%s", err, stderr)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if fs := strings.Fields(line); len(fs) == 4 {
			keys = append(keys, fs[3])
		}
	}
	return keys
}

// TestListingsFollowTier2: a chunk being written is never listed nor
// served; once renamed into place it is on the next listing, whole; a
// stream removed from the catalog is gone from the next listing.
func TestListingsFollowTier2(t *testing.T) {
	f := newFixture(t, Config{})
	before := f.lsKeys(t, "logs")
	if !slices.Equal(before, f.keys("logs")) {
		t.Fatalf("first listing %q, want %q", before, f.keys("logs"))
	}
	// Tiering writes a chunk under its _tmp. name ...
	tmp := tier2.TempChunkPath("logs", "views", 0, 10)
	w, err := f.st.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("the first half of a chunk")); err != nil {
		t.Fatal(err)
	}
	if got := f.lsKeys(t, "logs"); !slices.Equal(got, before) {
		t.Fatalf("listing while a chunk is written: %q, want %q", got, before)
	}
	for _, k := range []string{strings.TrimPrefix(tmp, "logs/"), "views/segment=0/" + tier2.ChunkName(10)} {
		if _, stderr, err := f.awsCLI(t, "path", testSecret, "s3api", "head-object", "--bucket", "logs", "--key", k); err == nil || !strings.Contains(stderr, "404") {
			t.Errorf("head-object %s while written: %v %s", k, err, stderr)
		}
	}
	w.Close()
	f.st.Remove(tmp)
	// ... and renames it into place: the next listing has it, whole.
	p := f.writeChunk(t, "logs", "views", 0, 10, 20)
	after := f.lsKeys(t, "logs")
	if !slices.Equal(after, f.keys("logs")) || !slices.Contains(after, strings.TrimPrefix(p, "logs/")) {
		t.Fatalf("listing after the rename: %q, want %q", after, f.keys("logs"))
	}
	out, stderr, err := f.awsCLI(t, "path", testSecret, "s3", "cp", "s3://"+p, "-")
	if want, _ := os.ReadFile(f.chunks[p]); err != nil || string(out) != string(want) {
		t.Fatalf("the new chunk: %v %s (%d bytes, want %d)", err, stderr, len(out), len(want))
	}
	// A deleted stream (gone from the controller) is gone from the next
	// listing, though its chunks are still in tier 2.
	f.cat.Remove("logs", "clicks")
	var want []string
	for _, k := range f.keys("logs") {
		if !strings.HasPrefix(k, "clicks/") {
			want = append(want, k)
		}
	}
	if got := f.lsKeys(t, "logs"); !slices.Equal(got, want) {
		t.Fatalf("listing after deleting clicks: %q, want %q", got, want)
	}
	if _, stderr, err := f.awsCLI(t, "path", testSecret, "s3api", "head-object", "--bucket", "logs", "--key", f.keys("logs")[0]); err == nil || !strings.Contains(stderr, "404") {
		t.Errorf("head-object of a deleted stream's chunk: %v %s", err, stderr)
	}
}

// TestThousandsOfChunksPage lists a segment of 2,345 chunks with the AWS
// CLI (pages of 1,000) and through ListObjectsV2 pages of 7 with
// delimiters, and gets every key once, in order.
func TestThousandsOfChunksPage(t *testing.T) {
	f := newFixture(t, Config{})
	const n = 2345
	f.cat.Set("big", "s", "s-2")
	for i := range n {
		f.writeChunk(t, "big", "s", int64(i%3), int64(i), 1)
	}
	f.writeChunk(t, "big", "s-2", 0, 0, 1) // "s-2/" sorts before "s/"
	want := f.keys("big")
	if got := f.lsKeys(t, "big"); !slices.Equal(got, want) {
		t.Fatalf("s3 ls: %d keys, want %d (first %q)", len(got), len(want), got[:min(3, len(got))])
	}
	if want[0] != "s-2/segment=0/"+tier2.ChunkName(0) {
		t.Fatalf("order: first key %q", want[0])
	}
	// Pages of 7 through the API, by hand: every key once, in order.
	var got []string
	tok := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("listing does not end")
		}
		q := "/big?list-type=2&max-keys=7"
		if tok != "" {
			q += "&continuation-token=" + tok
		}
		resp, body := f.do(t, "GET", q, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, body)
		}
		res := parseList(t, body)
		got = append(got, res.keys...)
		if !res.truncated {
			break
		}
		tok = res.next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages of 7: %d keys, want %d", len(got), len(want))
	}
	// A delimiter folds each segment into one prefix.
	resp, body := f.do(t, "GET", "/big?list-type=2&prefix=s/&delimiter=/", nil)
	if res := parseList(t, body); resp.StatusCode != 200 || fmt.Sprint(res.prefixes) != "[s/segment=0/ s/segment=1/ s/segment=2/]" || len(res.keys) != 0 {
		t.Fatalf("delimiter: %d %+v", resp.StatusCode, res)
	}
}

// TestPrefixedListingCostsNoStatPerStream: a listing whose prefix names
// one stream of a bucket of 500 asks tier 2 a few times, not once per
// stream: the bucket's streams come from the catalog, undescribed, and
// only the subtree under the prefix is read.
func TestPrefixedListingCostsNoStatPerStream(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var streams []string
	for i := range 500 {
		streams = append(streams, fmt.Sprintf("s%04d", i))
	}
	var want []string
	for _, seg := range []int64{4, 5} {
		for first := range int64(3) {
			p := tier2.ChunkPath("logs", "s0001", seg, first*10)
			w, err := st.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("chunk"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if seg == 5 {
				want = append(want, strings.TrimPrefix(p, "logs/"))
			}
		}
	}
	counted := tier2test.NewFaulty(st)
	v := view.New(counted, viewtest.NewCatalog(map[string][]string{"logs": streams}), view.Options{CatalogTTL: time.Minute})
	srv := httptest.NewServer(NewHandler(v, Config{Anonymous: true}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		query string
		keys  []string
	}{
		{"list-type=2&prefix=s0001/segment=5/", want},
		{"list-type=2&max-keys=1&prefix=s0001/segment=5/", want[:1]},
		{"list-type=2&prefix=s0001/segment=5/&start-after=" + url.QueryEscape(want[0]), want[1:]},
		{"prefix=s0001/segment=5/&marker=" + url.QueryEscape(want[1]), want[2:]},
		{"list-type=2&prefix=s0001/seg&delimiter=/", nil},
		{"list-type=2&prefix=s0499/", nil},
	} {
		before := counted.Calls(tier2test.OpStat) + counted.Calls(tier2test.OpList)
		resp, err := srv.Client().Get(srv.URL + "/logs?" + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		calls := counted.Calls(tier2test.OpStat) + counted.Calls(tier2test.OpList) - before
		if res := parseList(t, body); resp.StatusCode != 200 || !slices.Equal(res.keys, tt.keys) {
			t.Fatalf("%s: %d, keys %q, want %q", tt.query, resp.StatusCode, res.keys, tt.keys)
		}
		if calls > 8 {
			t.Errorf("%s: %d tier-2 Stat and List calls in a bucket of %d streams, want a few", tt.query, calls, len(streams))
		}
	}
}
