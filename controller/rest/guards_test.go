package rest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// checkJSONError fails unless a reply is an api.Error as JSON, and
// returns it.
func checkJSONError(t *testing.T, what string, status int, hdr http.Header, body []byte) api.Error {
	t.Helper()
	var e api.Error
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || hdr.Get("Content-Type") != "application/json" || e.Code == "" || e.Message == "" {
		t.Fatalf("%s: reply %d %q (%s) is not a JSON api.Error: %v", what, status, body, hdr.Get("Content-Type"), err)
	}
	return e
}

// TestRequestGuards: requests a browser page could send across origins,
// bodies that are not JSON, inputs of the routes that did not check them,
// paths the mux would redirect, and numbers out of range each get one
// JSON error, and change nothing.
func TestRequestGuards(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	c := ctlclient.NewClient(ctl.URL)
	ctx := ctxT(t)
	must(t, c.CreateScope(ctx, "s"))
	_, err := c.CreateStream(ctx, fixed("s", "st", 1))
	must(t, err)

	js := map[string]string{"Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	const scope = `{"scopeName":"x"}`
	stream := func(retention string) string {
		return `{"streamName":"x","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1},"retentionPolicy":` + retention + `}`
	}
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		code, msg                string
	}{
		// Bodies must be JSON: browsers send these types across origins
		// without asking first.
		{"text/plain body", "POST", "/v1/scopes", scope, with("Content-Type", "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE", `"text/plain"`},
		{"form body", "POST", "/v1/scopes", scope, with("Content-Type", "application/x-www-form-urlencoded"), 415, "UNSUPPORTED_MEDIA_TYPE", "want application/json"},
		{"body without a type", "POST", "/v1/scopes", scope, nil, 415, "UNSUPPORTED_MEDIA_TYPE", `""`},
		{"truncate as text/plain", "POST", "/v1/scopes/s/streams/st/truncate", `{}`, with("Content-Type", "text/plain;charset=UTF-8"), 415, "UNSUPPORTED_MEDIA_TYPE", "text/plain"},

		// Changes asked from another origin.
		{"POST from another origin", "POST", "/v1/scopes", scope, with("Content-Type", "application/json", "Origin", "http://evil.example"), 403, "FORBIDDEN", "evil.example"},
		{"DELETE from another origin", "DELETE", "/v1/scopes/s", "", with("Origin", "http://localhost:3000"), 403, "FORBIDDEN", "another origin"},
		{"truncate cross-site", "POST", "/v1/scopes/s/streams/st/truncate", `{}`, with("Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"), 403, "FORBIDDEN", "cross-site"},
		{"PUT from an opaque origin", "PUT", "/v1/scopes/s/streams/st/state", `{"streamState":"SEALED"}`, with("Content-Type", "application/json", "Origin", "null"), 403, "FORBIDDEN", "null"},

		// Path parameters and bodies of routes that did not check them.
		{"control character in a tier path", "GET", "/v1/scopes/s/streams/a%01b/tier", "", nil, 400, "INVALID", `"a\x01b"`},
		{"control character in a node id", "PUT", "/v1/nodes/n%01/drain", `{"drain":true}`, js, 400, "INVALID", `"n\x01"`},
		{"drain with no field", "PUT", "/v1/nodes/standalone/drain", `{}`, js, 400, "INVALID", "drain: want true or false"},
		{"drain null", "PUT", "/v1/nodes/standalone/drain", `{"drain":null}`, js, 400, "INVALID", "drain: want true or false"},
		{"drain of the standalone node", "PUT", "/v1/nodes/standalone/drain", `{"drain":true}`, js, 409, "CONFLICT", "no other node"},
		{"drain of an unknown node", "PUT", "/v1/nodes/nobody/drain", `{"drain":true}`, js, 404, "NOT_FOUND", `node "nobody": not found`},
		{"non-ASCII scope name", "POST", "/v1/scopes", `{"scopeName":"aé"}`, js, 400, "INVALID", `character "é" at byte 1`},
		{"non-ASCII in malformed JSON", "POST", "/v1/scopes", `{"scopeName":é}`, js, 400, "INVALID", `malformed JSON at byte 13: character "é"`},
		{"non-ASCII name in a path", "GET", "/v1/scopes/" + url.PathEscape("日本"), "", nil, 400, "INVALID", `character "日" at byte 0`},
		{"tag query too long", "GET", "/v1/scopes/s/streams?tag=" + strings.Repeat("k", api.MaxTagLength+1), "", nil, 400, "INVALID", "tag"},

		// Numbers out of their range.
		{"retention days that overflow", "POST", "/v1/scopes/s/streams", stream(`{"type":"LIMITED_DAYS","value":107000000000}`), js, 400, "INVALID", "retentionPolicy.value 107000000000: not in 1..8589934592"},
		{"retention MiB that overflow", "POST", "/v1/scopes/s/streams", stream(`{"type":"LIMITED_SIZE_MB","value":8796093022208}`), js, 400, "INVALID", "retentionPolicy.value 8796093022208"},
		{"scale key above 1", "POST", "/v1/scopes/s/streams/st/scale", `{"sealedSegments":[0],"newRanges":[{"low":0,"high":2}]}`, js, 400, "INVALID", "newRanges[0].high 2"},
		{"negative group version", "PUT", "/v1/scopes/s/readergroups/g/state", `{"version":-1,"state":{}}`, js, 400, "INVALID", "version -1"},

		// Paths the mux would redirect, with an HTML body.
		{"empty path element", "GET", "/v1//scopes", "", nil, 404, "NOT_FOUND", "no route"},
		{"dot-dot path", "GET", "/v1/scopes/../scopes", "", nil, 404, "NOT_FOUND", "no route"},
		{"trailing slash", "GET", "/v1/scopes/", "", nil, 404, "NOT_FOUND", "no route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := resttest.Dump(t, ctl.Store)
			status, hdr, body := sendHeaders(t, tc.method, ctl.URL+tc.path, tc.body, tc.hdr)
			e := checkJSONError(t, "reply", status, hdr, body)
			if status != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %d %+v, want %d %s saying %q", status, e, tc.status, tc.code, tc.msg)
			}
			t.Logf("%d %s: %s", status, e.Code, e.Message)
			equal(t, "store after the request", resttest.Dump(t, ctl.Store), before)
		})
	}

	// What the checks let through: the server's own origin, a same-origin
	// fetch, safe methods from anywhere, and JSON with a charset.
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
	}{
		{"same origin", "POST", "/v1/scopes", `{"scopeName":"same"}`, with("Content-Type", "application/json", "Origin", ctl.URL), 201},
		{"same-origin fetch", "POST", "/v1/scopes", `{"scopeName":"fetched"}`, with("Content-Type", "application/json", "Sec-Fetch-Site", "same-origin"), 201},
		{"JSON with a charset", "POST", "/v1/scopes", `{"scopeName":"charset"}`, with("Content-Type", "application/json; charset=utf-8"), 201},
		{"GET from another origin", "GET", "/v1/scopes", "", with("Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"), 200},
		{"POST without a body or type", "POST", "/v1/scopes/s/streams/st/transactions", "", nil, 201},
	} {
		status, _, body := sendHeaders(t, tc.method, ctl.URL+tc.path, tc.body, tc.hdr)
		if status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
	}
}

// hostile are path parameters no route accepts (each path-escaped into
// one element): control characters, non-ASCII, escaped separators, too
// long, and almost-valid.
var hostile = []string{
	"a\x01b", "\x00", "a\x7fb", "é", "\xff", "a/b", "..", "a#b", "a b",
	strings.Repeat("x", 1100), "s/st/0.#epoch.0x", "0b7f5a2c-1c9e-4a8b-9c1d-2e3f4a5b6c7D",
}

// TestHostilePaths sends every route hostile path parameters (all of a
// route's wildcards at once) with and without a body: each answer is a 4xx
// api.Error, never a 500, and the store is unchanged.
func TestHostilePaths(t *testing.T) {
	ctl := resttest.StartController(t, resttest.StartNode(t))
	must(t, ctlclient.NewClient(ctl.URL).CreateScope(ctxT(t), "s"))
	before := resttest.Dump(t, ctl.Store)
	n := 0
	for _, rt := range rest.Routes() {
		if !strings.Contains(rt.Pattern, "{") {
			continue
		}
		for _, h := range hostile {
			p := rt.Pattern
			for strings.Contains(p, "{") {
				i, j := strings.Index(p, "{"), strings.Index(p, "}")
				p = p[:i] + url.PathEscape(h) + p[j+1:]
			}
			for _, body := range []string{"", `{}`, `{"drain":true}`} {
				req := httptest.NewRequestWithContext(ctxT(t), rt.Method, p, strings.NewReader(body))
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				w := httptest.NewRecorder()
				ctl.Handler.ServeHTTP(w, req)
				n++
				what := fmt.Sprintf("%s %s %s", rt.Method, p, body)
				e := checkJSONError(t, what, w.Code, w.Header(), w.Body.Bytes())
				if w.Code < 400 || w.Code >= 500 {
					t.Errorf("%s: %d %+v, want a 4xx", what, w.Code, e)
				}
			}
		}
	}
	t.Logf("%d requests", n)
	equal(t, "store after the requests", resttest.Dump(t, ctl.Store), before)
}
