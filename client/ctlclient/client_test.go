package ctlclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// The real controller behind this client is tested in controller/rest
// (every route, through the real stack); these tests need no controller.

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestErrors checks that an error reply becomes an *Error with the status,
// code and message, and matches the sentinel of its code only.
func TestErrors(t *testing.T) {
	sentinels := []error{ctlclient.ErrNotFound, ctlclient.ErrExists, ctlclient.ErrInvalid, ctlclient.ErrConflict, ctlclient.ErrUnavailable}
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{404, api.CodeNotFound, ctlclient.ErrNotFound},
		{409, api.CodeExists, ctlclient.ErrExists},
		{400, api.CodeInvalid, ctlclient.ErrInvalid},
		{409, api.CodeConflict, ctlclient.ErrConflict},
		{503, api.CodeUnavailable, ctlclient.ErrUnavailable},
		{500, api.CodeInternal, nil},
	} {
		t.Run(tc.code, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				json.NewEncoder(w).Encode(api.Error{Code: tc.code, Message: "scope s: what"})
			}))
			defer srv.Close()
			_, err := ctlclient.NewClient(srv.URL).GetScope(ctxT(t), "s")
			var e *ctlclient.Error
			if !errors.As(err, &e) || e.StatusCode != tc.status || e.Code != tc.code || err.Error() != "scope s: what" {
				t.Fatalf("err = %#v", err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) != (s == tc.want) {
					t.Errorf("errors.Is(err, %v) = %v", s, errors.Is(err, s))
				}
			}
			if errors.Is(err, ctlclient.ErrUnreachable) {
				t.Error("an error reply matches ErrUnreachable")
			}
		})
	}
}

// TestNonJSONError: an error reply without an api.Error body (a proxy's
// page) is an INTERNAL *Error naming the status.
func TestNonJSONError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	err := ctlclient.NewClient(srv.URL).Health(ctxT(t))
	var e *ctlclient.Error
	if !errors.As(err, &e) || e.StatusCode != 502 || e.Code != api.CodeInternal || !strings.Contains(e.Message, "502 Bad Gateway") {
		t.Fatalf("err = %#v", err)
	}
}

// TestUnreachable: no controller at the address is ErrUnreachable; a
// cancelled context is the context's error instead.
func TestUnreachable(t *testing.T) {
	err := ctlclient.NewClient("http://127.0.0.1:1").Health(ctxT(t))
	if !errors.Is(err, ctlclient.ErrUnreachable) || !strings.HasPrefix(err.Error(), "controller http://127.0.0.1:1 unreachable: ") {
		t.Fatalf("err = %v", err)
	}
	var e *ctlclient.Error
	if errors.As(err, &e) {
		t.Fatalf("unreachable is an *Error: %#v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = ctlclient.NewClient("http://127.0.0.1:1").Health(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ctlclient.ErrUnreachable) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

// TestSegmentPath: a qualified segment name travels as one escaped path
// element, and the reply decodes into api.SegmentURI.
func TestSegmentPath(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		json.NewEncoder(w).Encode(api.SegmentURI{Endpoint: "127.0.0.1:12345", Container: 3, Epoch: 2})
	}))
	defer srv.Close()
	u, err := ctlclient.NewClient(srv.URL+"/").SegmentURI(ctxT(t), "sales/orders/3.#epoch.1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "/v1/segments/sales%2Forders%2F3.%23epoch.1/uri"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if u != (api.SegmentURI{Endpoint: "127.0.0.1:12345", Container: 3, Epoch: 2}) {
		t.Errorf("uri = %+v", u)
	}
}

// TestSealBody: SealStream sends Pravega's body, {"streamState":"SEALED"},
// with PUT to the stream's state.
func TestSealBody(t *testing.T) {
	var method, path, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		method, path, body = r.Method, r.URL.EscapedPath(), string(b)
	}))
	defer srv.Close()
	if err := ctlclient.NewClient(srv.URL).SealStream(ctxT(t), "sales", "orders"); err != nil {
		t.Fatal(err)
	}
	if method != "PUT" || path != "/v1/scopes/sales/streams/orders/state" || body != `{"streamState":"SEALED"}` {
		t.Fatalf("sent %s %s %s", method, path, body)
	}
}

// TestRequestTimeout: a controller that accepts connections and never
// answers fails a call with ErrUnreachable after WithRequestTimeout,
// whatever the caller's ctx; without it only the ctx ends the call.
func TestRequestTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: the kernel does, nobody answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url := "http://" + l.Addr().String()
	err = ctlclient.NewClient(url, ctlclient.WithRequestTimeout(200*time.Millisecond)).Health(context.Background())
	if !errors.Is(err, ctlclient.ErrUnreachable) || !strings.Contains(err.Error(), "no answer to GET /health within 200ms") {
		t.Fatalf("err = %v, want ErrUnreachable, no answer within 200ms", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = ctlclient.NewClient(url).Health(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctlclient.ErrUnreachable) {
		t.Fatalf("without a request timeout: err = %v, want the ctx's", err)
	}
}
