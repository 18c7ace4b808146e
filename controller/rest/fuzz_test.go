package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// FuzzHandler feeds the handler, over a real controller and node,
// arbitrary methods, paths, media types and bodies: it never panics,
// redirects or answers 5xx, and every 4xx is an api.Error as JSON.
func FuzzHandler(f *testing.F) {
	ctl := resttest.StartController(f, resttest.StartNode(f))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	f.Cleanup(cancel)
	c := ctlclient.NewClient(ctl.URL)
	if err := c.CreateScope(ctx, "s"); err != nil {
		f.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, fixed("s", "st", 2)); err != nil {
		f.Fatal(err)
	}
	values := map[string]string{
		"scope": "s", "stream": "st", "group": "g", "node": "standalone",
		"segment": url.PathEscape("s/st/0.#epoch.0"), "id": "0b7f5a2c-1c9e-4a8b-9c1d-2e3f4a5b6c7d",
	}
	bodies := []string{
		"", "{}", "null", "[]", `{"scopeName":"f"}`, `{"drain":true}`, `{"leaseMillis":1000}`,
		`{"streamName":"f","scalingPolicy":{"type":"FIXED_NUM_SEGMENTS","minSegments":1},"retentionPolicy":{"type":"LIMITED_DAYS","value":7}}`,
		`{"sealedSegments":[0],"newRanges":[{"low":0,"high":0.5},{"low":0.5,"high":1}]}`,
		`{"version":0,"state":{}}`, `{"s/st/0.#epoch.0":0,"s/st/1.#epoch.0":0}`, `{"from":{},"to":{}}`,
	}
	for _, rt := range rest.Routes() {
		p := rt.Pattern
		for name, v := range values {
			p = strings.ReplaceAll(p, "{"+name+"}", v)
		}
		for _, b := range bodies {
			f.Add(rt.Method, p, "application/json", []byte(b))
		}
	}
	f.Add("PATCH", "/v1/scopes", "text/plain", []byte(`{"scopeName":"x"}`))
	f.Add("GET", "/v1//scopes/../x", "", []byte(nil))
	f.Add("GET", "/v1/scopes/%2E%2E/streams", "", []byte(nil))
	f.Add("CONNECT", "//x", "", []byte(nil))
	f.Add("HEAD", "/v1/scopes/", "", []byte(nil))
	f.Add("POST", "/v1/scopes/s%01/streams", "application/json", []byte("{"))
	f.Fuzz(func(t *testing.T, method, target, mediaType string, body []byte) {
		req, err := http.NewRequest(method, "http://controller"+target, bytes.NewReader(body))
		if err != nil || req.URL.Opaque != "" {
			return // not a request a client can send
		}
		if mediaType != "" {
			req.Header.Set("Content-Type", mediaType)
		}
		w := httptest.NewRecorder()
		ctl.Handler.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s (%s) %q: %d %s", method, target, mediaType, body, w.Code, w.Body)
		}
		if w.Code < 200 || w.Code >= 300 && w.Code < 400 {
			t.Fatalf("%s %s (%s) %q: %d %s, want no redirect", method, target, mediaType, body, w.Code, w.Body)
		}
		if w.Code < 400 {
			return
		}
		var e api.Error
		dec := json.NewDecoder(w.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || w.Header().Get("Content-Type") != "application/json" || e.Code == "" || e.Message == "" {
			t.Fatalf("%s %s (%s) %q: %d is not a JSON api.Error: %v", method, target, mediaType, body, w.Code, err)
		}
	})
}
