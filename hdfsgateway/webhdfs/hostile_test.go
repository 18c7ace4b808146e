package webhdfs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
)

func TestNoRedirectAnswersLocation(t *testing.T) {
	f := newFixture(t)
	status, body, _ := call(t, "GET", f.srv.URL+Prefix+"/"+f.big+"?op=OPEN&offset=3&noredirect=true")
	var loc struct{ Location string }
	if err := json.Unmarshal(body, &loc); status != 200 || err != nil {
		t.Fatalf("status %d: %s", status, body)
	}
	u, err := url.Parse(loc.Location)
	if err != nil || u.Query().Get("noredirect") != "" || u.Query().Get("offset") != "3" {
		t.Fatalf("Location %q", loc.Location)
	}
	status, data, _ := call(t, "GET", loc.Location)
	if status != 200 || !bytes.Equal(data, f.data(t, f.big)[3:]) {
		t.Fatalf("following Location: %d, %d bytes", status, len(data))
	}
	if status, body, _ := call(t, "GET", f.srv.URL+Prefix+"/sc?op=OPEN&noredirect=true"); status != 404 {
		t.Fatalf("noredirect OPEN of a directory: %d %s", status, body)
	}
}

// TestHostileClientsHarmNoOther: a client that hangs up mid-body, one
// that sends garbage and one that stops mid-request each get one answer
// or one close, and clients beside them are served in full.
func TestHostileClientsHarmNoOther(t *testing.T) {
	f := newFixture(t)
	addr := strings.TrimPrefix(f.srv.URL, "http://")
	want := f.data(t, f.big)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(f.srv.URL + Prefix + "/" + f.big + "?op=OPEN")
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			if got, err := io.ReadAll(resp.Body); err != nil || !bytes.Equal(got, want) {
				errs <- "a well-behaved client got a short body"
			}
		}()
	}
	// Hangs up after a few bytes of the body.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET "+Prefix+"/"+f.big+"?op=OPEN HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := io.ReadFull(c, make([]byte, 200)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Garbage: one 400, then the connection is closed.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "\x00\x01\x02 garbage\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("garbage: %v %v", resp, err)
	}
	c.Close()
	// Stops mid-request.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET "+Prefix+"/?op=LISTST")
	c.Close()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if status, _, _ := call(t, "GET", f.srv.URL+Prefix+"/"+tier2.ChunkPath("sc", "st", 0, 0)+"?op=GETFILESTATUS"); status != 200 {
		t.Fatalf("after the hostile clients: %d", status)
	}
}

// FuzzRequest: no method, path or query makes the handler panic, a
// request it refuses gets a RemoteException, and a parsed path is within
// its bounds.
func FuzzRequest(f *testing.F) {
	fx := newFixture(f)
	h := NewHandler(fx.v, Config{BlockSize: testBlockSize})
	for _, s := range [][3]string{
		{"GET", Prefix + "/sc/st", "op=LISTSTATUS"},
		{"GET", Prefix + "/" + fx.big, "op=OPEN&offset=10&length=20"},
		{"GET", Prefix + "/", "op=LISTSTATUS_BATCH&startAfter=a"},
		{"PUT", Prefix + "/x", "op=MKDIRS"},
		{"GET", Prefix + "/sc%2Fst", "op=GETFILESTATUS&user.name=a"},
		{"GET", Prefix + "/../..", "op=GETCONTENTSUMMARY"},
		{"GET", Prefix + "/" + fx.big, "op=CHECKACCESS&fsaction=r-x"},
		{"HEAD", Prefix + "/" + fx.big, "op=OPEN&noredirect=true"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r, err := parseRequest(method, path, query)
		if err == nil {
			if len(r.path) > MaxPath || strings.HasPrefix(r.path, "/") || strings.HasSuffix(r.path, "/") {
				t.Fatalf("parsed path %q", r.path)
			}
			if !r.mutating && !getOps[r.op] {
				t.Fatalf("accepted op %q", r.op)
			}
		} else if re := (*remoteError)(nil); !errorsAs(err, &re) {
			t.Fatalf("error %v is not a remote error", err)
		}
		req, err := http.NewRequestWithContext(context.Background(), method, "http://h"+path+"?"+query, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == 200 {
			return
		}
		var body map[string]struct{ Exception, JavaClassName, Message string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["RemoteException"].JavaClassName == "" {
			t.Fatalf("%s %q %q: status %d, body %q", method, path, query, rec.Code, rec.Body.Bytes())
		}
	})
}
