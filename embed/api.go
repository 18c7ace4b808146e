package embed

import (
	"net/http"
	"time"
)

// Defaults of APIConfig: a client that opens connections and sends
// nothing, or sends a body a byte at a time, gives its connection back
// within them.
const (
	DefaultAPIReadHeaderTimeout = 10 * time.Second // request line and headers
	DefaultAPIReadTimeout       = time.Minute      // the whole request, body included
	DefaultAPIIdleTimeout       = 2 * time.Minute  // a kept-alive connection between requests
	DefaultAPIMaxHeaderBytes    = 64 << 10         // a request's line and headers
	DefaultAPIShutdownTimeout   = 10 * time.Second // requests in flight at Stop
)

// APIConfig bounds a role's HTTP API server (the controller's REST API;
// cmd/sluice's scheduler uses NewAPIServer too). There is no write
// timeout: a request may wait for a workflow (a scale, a seal) as long as
// the handler lets it.
type APIConfig struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// ShutdownTimeout bounds how long requests in flight may take to
	// finish once the role is told to stop.
	ShutdownTimeout time.Duration
}

// DefaultAPIConfig returns the API bounds of every role.
func DefaultAPIConfig() APIConfig {
	return APIConfig{
		ReadHeaderTimeout: DefaultAPIReadHeaderTimeout, ReadTimeout: DefaultAPIReadTimeout,
		IdleTimeout: DefaultAPIIdleTimeout, MaxHeaderBytes: DefaultAPIMaxHeaderBytes,
		ShutdownTimeout: DefaultAPIShutdownTimeout,
	}
}

// Validate returns an error naming the first bound out of its range.
func (c APIConfig) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"API read header timeout", c.ReadHeaderTimeout}, {"API read timeout", c.ReadTimeout},
		{"API idle timeout", c.IdleTimeout}, {"API shutdown timeout", c.ShutdownTimeout}} {
		if d.v <= 0 {
			return invalidf("%s %s: want more than 0", d.name, d.v)
		}
	}
	if c.MaxHeaderBytes <= 0 {
		return invalidf("API max header bytes %d: want more than 0", c.MaxHeaderBytes)
	}
	return nil
}

// NewAPIServer returns an HTTP server for h with the bounds of c.
func NewAPIServer(h http.Handler, c APIConfig) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		IdleTimeout:       c.IdleTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
	}
}
