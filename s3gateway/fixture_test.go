package s3gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/s3gateway/sigv4"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// Test credentials.
const (
	testKey    = "AKIDSLUICETEST"
	testSecret = "sluice/secret+key"
)

// fixture is a tier-2 root with real chunks, its view, and the handler on
// a real HTTP server on 127.0.0.1.
type fixture struct {
	root   string
	st     tier2.Storage
	cat    *viewtest.Catalog
	v      *view.View
	srv    *httptest.Server
	chunks map[string]string // key "<bucket>/<key>" -> file path on disk

	mu    sync.Mutex
	hosts map[string]bool // every Host the server was asked for
}

// sawHost reports whether a request came with Host h.
func (f *fixture) sawHost(h string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hosts[h]
}

// newFixture writes scope "logs" with streams "clicks" (two segments,
// several chunks, one big), "views" (one chunk) and "empty" (nothing
// tiered), scope "metrics" with "cpu", and a chunk being written (its
// "_tmp." name), and serves them.
func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	root := t.TempDir()
	st, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{root: root, st: st, chunks: map[string]string{}, hosts: map[string]bool{}}
	f.cat = viewtest.NewCatalog(map[string][]string{"logs": {"clicks", "views", "empty"}, "metrics": {"cpu"}})
	f.writeChunk(t, "logs", "clicks", 0, 0, 100)
	f.writeChunk(t, "logs", "clicks", 0, 100, 2000) // about 200 KB
	f.writeChunk(t, "logs", "clicks", 0, 2100, 1)
	f.writeChunk(t, "logs", "clicks", 1, 0, 50)
	f.writeChunk(t, "logs", "views", 0, 0, 10)
	f.writeChunk(t, "metrics", "cpu", 3, 7, 5)
	// A chunk still being written: never visible.
	w, err := st.Create(tier2.TempChunkPath("logs", "clicks", 1, 50))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a chunk"))
	w.Close()
	f.v = view.New(st, f.cat, view.Options{CatalogTTL: -1})
	if cfg.Credentials == nil {
		cfg.Credentials = map[string]string{testKey: testSecret}
	}
	h := NewHandler(f.v, cfg)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hosts[r.Host] = true
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// writeChunk writes a real chunk (a SequenceFile of n events) the way
// tiering does: under its "_tmp." name, then renamed into place.
func (f *fixture) writeChunk(t testing.TB, scope, stream string, seg, first int64, n int) string {
	t.Helper()
	tmp := tier2.TempChunkPath(scope, stream, seg, first)
	w, err := f.st.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := seqfile.NewWriter(w, seqfile.WriterOptions{KeyClass: "org.apache.hadoop.io.LongWritable", ValueClass: "org.apache.hadoop.io.BytesWritable"})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(uint64(seg), uint64(first)))
	for i := range n {
		ev := make([]byte, 50+rnd.IntN(100))
		for j := range ev {
			ev[j] = byte(rnd.Uint32())
		}
		if err := sw.AppendEvent(first+int64(i), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := tier2.ChunkPath(scope, stream, seg, first)
	if err := f.st.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	f.chunks[p] = filepath.Join(f.root, filepath.FromSlash(p))
	return p
}

// keys returns the fixture's chunk keys of bucket, sorted.
func (f *fixture) keys(bucket string) []string {
	var out []string
	for p := range f.chunks {
		if b, k, _ := strings.Cut(p, "/"); b == bucket {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// sum is the hex SHA-256 of the file at path p.
func sum(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sign signs r with AWS Signature Version 4 (header form, unsigned
// payload) for the region. The real clients' signatures are the real
// test of the verifier; this one lets Go tests send requests.
func sign(r *http.Request, key, secret, region string, at time.Time) {
	amz := at.UTC().Format("20060102T150405Z")
	r.Header.Set("X-Amz-Date", amz)
	r.Header.Set("X-Amz-Content-Sha256", sigv4.UnsignedPayload)
	signed := []string{"host", "x-amz-content-sha256", "x-amz-date"}
	scope := amz[:8] + "/" + region + "/s3/aws4_request"
	sts := sigv4.StringToSign(amz, scope, sigv4.CanonicalRequest(r, signed, sigv4.UnsignedPayload, false))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+key+"/"+scope+",SignedHeaders="+strings.Join(signed, ";")+",Signature="+sigv4.Signature(secret, amz[:8], region, sts))
}

// do sends a signed request to the fixture's server and returns the
// answer with its body read.
func (f *fixture) do(t testing.TB, method, target string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, f.srv.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	sign(r, testKey, testSecret, DefaultRegion, time.Now())
	resp, err := f.srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
