package s3gateway

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// hangTimeout only bounds a wait that, if the head misbehaves, would
// hang: it is no timing assertion.
const hangTimeout = time.Minute

// TestSlowAndVanishingClientsHarmNoOne: a client that stops reading a
// big GetObject, and one that disconnects in the middle of one, do not
// hold up other requests; the disconnected request ends, and so does the
// stalled one once its client goes.
func TestSlowAndVanishingClientsHarmNoOne(t *testing.T) {
	f := newFixture(t, Config{})
	f.cat.Add("logs", "huge")
	big := f.writeChunk(t, "logs", "huge", 0, 0, 300_000) // about 30 MB: more than the sockets buffer
	ended := make(chan string, 100)
	h := NewHandler(f.v, Config{Credentials: map[string]string{testKey: testSecret}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ended <- r.Header.Get("X-Test-Client") }()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	// rawGet sends a signed GET of the big chunk on a connection of its
	// own and reads the status line.
	rawGet := func(name string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		r, _ := http.NewRequest("GET", srv.URL+"/"+big, nil)
		r.Header.Set("X-Test-Client", name)
		sign(r, testKey, testSecret, DefaultRegion, time.Now())
		if err := r.Write(c); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, " 200 ") {
			t.Fatalf("%s: %q %v", name, line, err)
		}
		return c, br
	}
	stalled, _ := rawGet("stalled") // reads nothing more
	defer stalled.Close()
	vanishing, br := rawGet("vanishing")
	if _, err := io.ReadFull(br, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	vanishing.Close()
	waitEnded(t, ended, "vanishing")

	// Everyone else is served, whole, while the stalled client sits on
	// its response.
	small := f.keys("logs")[0]
	want, _ := os.ReadFile(f.chunks["logs/"+small])
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := "/logs/" + small
			if i%2 == 1 {
				target = "/logs?list-type=2"
			}
			r, _ := http.NewRequest("GET", srv.URL+target, nil)
			r.Header.Set("X-Test-Client", "other")
			sign(r, testKey, testSecret, DefaultRegion, time.Now())
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || i%2 == 0 && !bytes.Equal(body, want) {
				errs <- target + ": " + resp.Status
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for range 20 {
		waitEnded(t, ended, "other")
	}
	stalled.Close()
	waitEnded(t, ended, "stalled")
}

func waitEnded(t *testing.T, ended <-chan string, name string) {
	t.Helper()
	deadline := time.After(hangTimeout)
	for {
		select {
		case n := <-ended:
			if n == name {
				return
			}
			if n != "other" {
				t.Fatalf("request of %q ended while waiting for %q", n, name)
			}
		case <-deadline:
			t.Fatalf("the request of %q did not end", name)
		}
	}
}

// TestGarbageRequests: malformed requests on a raw connection get one
// clear answer (or the connection closed) and the server goes on.
func TestGarbageRequests(t *testing.T) {
	f := newFixture(t, Config{})
	for _, raw := range []string{
		"GET /logs HTTP/1.1\r\nHost: x\r\nAuthorization: AWS4-HMAC-SHA256 Credential=\r\n\r\n",
		"GET /logs HTTP/1.1\r\nHost: x\r\nAuthorization: AWS4-HMAC-SHA256 Credential=a/b/c/d/e,SignedHeaders=host,Signature=zz\r\n\r\n",
		"GET /logs?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=-5 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /logs/" + strings.Repeat("k", 2000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /logs?list-type=2&continuation-token=%ff%00 HTTP/1.1\r\nHost: x\r\n\r\n",
		"\x00\x01\x02 garbage\r\n\r\n",
		"GET /logs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab", // body cut short
	} {
		c, err := net.Dial("tcp", f.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(raw))
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(hangTimeout))
		out, _ := io.ReadAll(c)
		c.Close()
		if len(out) > 0 && !bytes.HasPrefix(out, []byte("HTTP/1.1 4")) {
			t.Errorf("%q: answered %q", raw, out[:min(len(out), 80)])
		}
	}
	if resp, _ := f.do(t, "GET", "/logs?list-type=2", nil); resp.StatusCode != 200 {
		t.Fatalf("after the garbage: %d", resp.StatusCode)
	}
}

// TestStalledClientIsCutOff: a client that stops reading a GetObject is
// disconnected once a write waits longer than StallTimeout, with the body
// short, while it still holds its end of the connection.
func TestStalledClientIsCutOff(t *testing.T) {
	f := newFixture(t, Config{})
	f.cat.Add("logs", "huge")
	big := f.writeChunk(t, "logs", "huge", 0, 0, 300_000) // about 30 MB: more than the sockets buffer
	size, err := os.Stat(f.chunks[big])
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 1)
	h := NewHandler(f.v, Config{Credentials: map[string]string{testKey: testSecret}, StallTimeout: 50 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ended <- "stalled" }()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, _ := http.NewRequest("GET", srv.URL+"/"+big, nil)
	sign(r, testKey, testSecret, DefaultRegion, time.Now())
	if err := r.Write(c); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, ended, "stalled") // with the client still connected
	c.SetReadDeadline(time.Now().Add(hangTimeout))
	got, _ := io.Copy(io.Discard, c)
	if got >= size.Size() {
		t.Fatalf("the stalled client got %d bytes of %d: not cut off", got, size.Size())
	}
}
