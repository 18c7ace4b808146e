package main

import (
	"net/http"

	"github.com/sluice-streams/sluice/embed"
)

// The bounds of every role's HTTP API server (the controller's REST API,
// the scheduler's API): embed.APIConfig's defaults. Variables, not
// constants, so tests can shorten them.
var (
	apiReadHeaderTimeout = embed.DefaultAPIReadHeaderTimeout // request line and headers
	apiReadTimeout       = embed.DefaultAPIReadTimeout       // the whole request, body included
	apiIdleTimeout       = embed.DefaultAPIIdleTimeout       // a kept-alive connection between requests
)

// apiConfig returns the API bounds, as the variables above hold them.
func apiConfig() embed.APIConfig {
	c := embed.DefaultAPIConfig()
	c.ReadHeaderTimeout, c.ReadTimeout, c.IdleTimeout = apiReadHeaderTimeout, apiReadTimeout, apiIdleTimeout
	return c
}

// newAPIServer returns an HTTP server for h with the API bounds
// (embed.NewAPIServer). No write timeout: a request may wait for a
// workflow (a scale, a seal) as long as the handler lets it.
func newAPIServer(h http.Handler) *http.Server { return embed.NewAPIServer(h, apiConfig()) }
