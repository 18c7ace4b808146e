package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// startAPIServer serves h through newAPIServer on loopback with the given
// bounds, restoring the package's bounds when the test ends.
func startAPIServer(t *testing.T, h http.Handler, read, idle time.Duration) string {
	t.Helper()
	oldRead, oldIdle := apiReadTimeout, apiIdleTimeout
	apiReadTimeout, apiIdleTimeout = read, idle
	t.Cleanup(func() { apiReadTimeout, apiIdleTimeout = oldRead, oldIdle })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newAPIServer(h)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// closedByServer reports whether the server closes c (a read ends with EOF
// or a reset) before the guard deadline, which is far beyond the bound
// under test: the test waits on the close itself, not on a clock.
func closedByServer(t *testing.T, c net.Conn, r io.Reader) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, r)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestAPIServerDropsSlowBodies: a client that sends headers and then
// trickles (here: withholds) its body loses the connection at the read
// bound, so it cannot hold a connection and its goroutine for ever.
func TestAPIServerDropsSlowBodies(t *testing.T) {
	reached := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		io.Copy(io.Discard, r.Body)
	})
	addr := startAPIServer(t, h, 300*time.Millisecond, time.Hour)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/scopes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	<-reached
	if !closedByServer(t, c, c) {
		t.Fatal("a request whose body never arrives kept its connection past the read bound")
	}
}

// TestAPIServerClosesIdleConnections: a kept-alive connection with no
// further request is closed at the idle bound.
func TestAPIServerClosesIdleConnections(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	addr := startAPIServer(t, h, time.Hour, 300*time.Millisecond)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/scopes HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !closedByServer(t, c, br) {
		t.Fatal("an idle kept-alive connection stayed open past the idle bound")
	}
}
