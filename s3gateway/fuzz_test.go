package s3gateway

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzRoute: any Host and path split into a bucket without '/' and a key
// within MaxKeyLen, or a refusal.
func FuzzRoute(f *testing.F) {
	for _, s := range [][3]string{
		{"127.0.0.1:9000", "/logs/clicks/segment=0/00000000000000000000.seq", ""},
		{"logs.localhost:9000", "/clicks/segment=0/x.seq", ""},
		{"LOGS.S3.Example.com.", "/", "s3.example.com"},
		{"s3.example.com", "/logs", "s3.example.com"},
		{"[::1]:9000", "//x", ""},
		{".localhost", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, host, path, domain string) {
		b, k, _, err := Route(host, path, domain)
		if err != nil {
			return
		}
		if strings.Contains(b, "/") || len(k) > MaxKeyLen {
			t.Fatalf("Route(%q, %q, %q) = %q, %q", host, path, domain, b, k)
		}
	})
}

// FuzzParseRange: a served range lies within the body.
func FuzzParseRange(f *testing.F) {
	for _, h := range []string{"bytes=0-9", "bytes=-5", "bytes=5-", "bytes=9-0", "bytes=0-1,3-4", "bytes=-0", "items=0-1", "bytes= 1 - 2", "bytes=99999999999999999999-"} {
		f.Add(h, int64(100))
	}
	f.Add("bytes=0-", int64(0))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			return
		}
		start, n, partial, err := ParseRange(h, size)
		if err != nil {
			return
		}
		if start < 0 || n < 0 || start+n > size || !partial && (start != 0 || n != size) || partial && n == 0 {
			t.Fatalf("ParseRange(%q, %d) = %d, %d, %v", h, size, start, n, partial)
		}
	})
}

// FuzzListQuery: any listing query is refused or bounded; a token
// decodes only for the listing it was made for.
func FuzzListQuery(f *testing.F) {
	tok := encodeToken("logs", "clicks/", "/", "clicks/segment=0/")
	for _, q := range []string{
		"list-type=2&prefix=clicks/&delimiter=/&continuation-token=" + tok,
		"list-type=2&max-keys=5&start-after=a&fetch-owner=true&encoding-type=url",
		"marker=clicks/&max-keys=99999999999999999999",
		"list-type=3", "list-type=2&continuation-token=%00", "encoding-type=xml", "max-keys=-1",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		lq, e := parseListQuery("logs", q)
		if e != nil {
			return
		}
		if lq.max < 0 || lq.max > MaxKeys || len(lq.prefix) > MaxKeyLen || len(lq.after) > MaxKeyLen {
			t.Fatalf("%q: %+v", raw, lq)
		}
		if lq.token != "" {
			if _, err := decodeToken(lq.token, "other", lq.prefix, lq.delim); err == nil {
				t.Fatalf("token %q decodes for another bucket", lq.token)
			}
		}
	})
}

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
)

// FuzzHandler sends whole requests (method, target, a few headers) to the
// handler over a real tier-2 tree: no panic, every answer has a request
// id, and nothing but GET and HEAD ever gets a 2xx.
func FuzzHandler(f *testing.F) {
	fuzzOnce.Do(func() {
		fx := newFixture(f, Config{Anonymous: true})
		fuzzHandler = NewHandler(fx.v, Config{Anonymous: true, Credentials: map[string]string{testKey: testSecret}})
	})
	for _, s := range [][4]string{
		{"GET", "/", "", ""},
		{"GET", "/logs?list-type=2&delimiter=/&max-keys=1", "", ""},
		{"GET", "/logs/clicks/segment=0/00000000000000000000.seq", "bytes=1-2", ""},
		{"HEAD", "/logs/clicks/segment=0/00000000000000000000.seq", "", `"x"`},
		{"PUT", "/logs/x", "", ""},
		{"GET", "/logs?delimiter=egment&prefix=clicks/s", "", ""},
		{"GET", "/logs?list-type=2&start-after=clicks/segment=1/", "", ""},
		{"GET", "/logs?location", "", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, method, target, rng, ifMatch string) {
		if !strings.HasPrefix(target, "/") {
			return
		}
		r, err := http.NewRequest(method, "http://127.0.0.1:9000"+target, nil)
		if err != nil {
			return
		}
		r.Header.Set("Range", rng)
		r.Header.Set("If-Match", ifMatch)
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { defer close(done); fuzzHandler.ServeHTTP(w, r) }()
		select {
		case <-done:
		case <-time.After(hangTimeout):
			t.Fatalf("%s %s: no answer", method, target)
		}
		if w.Header().Get("x-amz-request-id") == "" {
			t.Fatalf("%s %s: no request id", method, target)
		}
		if w.Code < 300 && r.Method != "GET" && r.Method != "HEAD" { // NewRequest reads "" as GET
			t.Fatalf("%s %s: %d", method, target, w.Code)
		}
	})
}
