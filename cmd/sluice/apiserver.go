package main

import (
	"net/http"
	"time"
)

// The bounds of every role's HTTP API server (the controller's REST API,
// the scheduler's API). A client that opens connections and sends nothing,
// or sends a body a byte at a time, gives its connection back within them.
// Variables, not constants, so tests can shorten them.
var (
	apiReadHeaderTimeout = 10 * time.Second // request line and headers
	apiReadTimeout       = time.Minute      // the whole request, body included
	apiIdleTimeout       = 2 * time.Minute  // a kept-alive connection between requests
)

// apiMaxHeaderBytes bounds a request's line and headers.
const apiMaxHeaderBytes = 64 << 10

// newAPIServer returns an HTTP server for h with the API bounds. No write
// timeout: a request may wait for a workflow (a scale, a seal) as long as
// the handler lets it.
func newAPIServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: apiReadHeaderTimeout,
		ReadTimeout:       apiReadTimeout,
		IdleTimeout:       apiIdleTimeout,
		MaxHeaderBytes:    apiMaxHeaderBytes,
	}
}
