package embed

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/s3gateway"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Defaults of S3Config.
const (
	DefaultS3Listen = "127.0.0.1:9000"
	DefaultS3Region = s3gateway.DefaultRegion
)

// S3Config is the S3 head: tier 2 served read-only over the S3 REST API
// (package s3gateway). Everything `sluice s3-gateway` sets from its
// flags; the standalone's S3 head is the same with the standalone's
// controller.
type S3Config struct {
	// Controller is the controller's URL: its scopes and streams are the
	// buckets and keys the head serves, and its tier-2 URI where the
	// chunks are.
	Controller string
	// Tier2 is the tier-2 URI to serve; the controller's if empty.
	Tier2 string
	// Listen is the HTTP address; port 0 picks a free one, which
	// S3Head.Addr reports.
	Listen string
	// Credentials maps access key ids to secret keys: requests signed
	// (AWS Signature Version 4) with one of them are served.
	Credentials map[string]string
	// Anonymous serves unsigned requests too. A head with no credentials
	// must set it: it then serves anyone who reaches it.
	Anonymous bool
	// Region is the region requests must be signed for.
	Region string
	// Domain, if set, is the base domain of virtual-hosted-style
	// addressing (BUCKET.Domain); path-style is always served.
	Domain string
	// AllowedHosts are further names an unsigned request may give as its
	// Host (s3gateway.AllowedHost: IP addresses, localhost names and
	// Domain always may); the head adds this machine's name
	// (os.Hostname) and its first label, so that a head launched on a
	// Mesos agent serves clients that name the agent. "*" allows any Host:
	// the guard against DNS rebinding is off.
	AllowedHosts []string
	// CatalogTTL is how long the head reuses the controller's scope and
	// stream names (view.DefaultCatalogTTL if 0).
	CatalogTTL time.Duration
	// API bounds the HTTP server, as the controller's REST API.
	API APIConfig
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// OnListen, if set, is called with "s3 head" and the bound address
	// once it listens.
	OnListen func(name, addr string)
}

// DefaultS3Config returns the defaults of `sluice s3-gateway` (no
// credentials: a head needs them, or Anonymous).
func DefaultS3Config() S3Config {
	return S3Config{Controller: "http://127.0.0.1:10080", Listen: DefaultS3Listen, Region: DefaultS3Region, CatalogTTL: view.DefaultCatalogTTL, API: DefaultAPIConfig()}
}

// Validate returns an error naming the first field out of its range.
func (c S3Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return invalidf("S3 listen address %q: want host:port", c.Listen)
	}
	if c.Controller == "" {
		return invalidf("s3 head: want a controller URL")
	}
	if len(c.Credentials) == 0 && !c.Anonymous {
		return invalidf("s3 head: no credentials: give access keys, or allow anonymous requests")
	}
	for k, s := range c.Credentials {
		if k == "" || s == "" {
			return invalidf("s3 head credentials: an empty access key or secret key")
		}
	}
	if c.Tier2 != "" {
		if _, err := backend.URI(c.Tier2); err != nil {
			return invalidf("s3 head tier 2 URI: %v", err)
		}
	}
	if err := c.handlerConfig(nil).Validate(); err != nil {
		return &ConfigError{Err: err} // names the field: region, domain, ...
	}
	return c.API.Validate()
}

// handlerConfig is the s3gateway config of the head.
func (c S3Config) handlerConfig(log logrus.FieldLogger) s3gateway.Config {
	return s3gateway.Config{Credentials: c.Credentials, Anonymous: c.Anonymous, Region: c.Region, Domain: c.Domain,
		AllowedHosts: append(slices.Clone(c.AllowedHosts), machineNames()...), Logger: log}
}

// machineNames are this machine's host name and its first label (one
// name if it has a single label; none if it has no name).
func machineNames() []string {
	name, err := os.Hostname()
	name = strings.TrimSuffix(name, ".")
	if err != nil || name == "" || strings.ContainsAny(name, ":/[]* \t") {
		return nil // no name s3gateway.Config.Validate would take
	}
	if short, _, ok := strings.Cut(name, "."); ok && short != "" {
		return []string{name, short}
	}
	return []string{name}
}

// S3Head is a running S3 head.
type S3Head struct {
	cfg S3Config
	log logrus.FieldLogger
	st  tier2.Storage
	web *http.Server
	l   net.Listener
	*servers

	stopOnce sync.Once
	stopErr  error
	requests sync.WaitGroup // requests being answered
}

// StartS3 validates cfg, finds tier 2 (asking the controller, retrying
// until it answers or ctx ends), opens it, listens and serves. On any
// failure it closes what it opened and returns the error.
func StartS3(ctx context.Context, cfg S3Config) (_ *S3Head, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("s3 head: %w", err)
	}
	h := &S3Head{cfg: cfg, log: logs.OrDiscard(cfg.Logger), servers: newServers("s3 head")}
	defer func() {
		if err != nil {
			h.close(context.Background())
		}
	}()
	var v *view.View
	var uri string
	if h.st, v, uri, err = openView(ctx, "s3 head", cfg.Controller, cfg.Tier2, cfg.CatalogTTL, h.log); err != nil {
		return nil, err
	}
	if h.l, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("s3 head: listen %s: %w", cfg.Listen, err)
	}
	handler := s3gateway.NewHandler(v, cfg.handlerConfig(h.log))
	h.web = NewAPIServer(tracked{handler, &h.requests}, cfg.API)
	h.serve("http", func() error { return h.web.Serve(h.l) }, http.ErrServerClosed)
	if cfg.OnListen != nil {
		cfg.OnListen("s3 head", h.Addr())
	}
	h.log.WithFields(logrus.Fields{"addr": h.Addr(), "tier2": uri, "keys": len(cfg.Credentials), "anonymous": cfg.Anonymous}).
		Info("s3 head: serving")
	return h, nil
}

// Addr is the bound HTTP address.
func (h *S3Head) Addr() string { return h.l.Addr().String() }

// Anonymous tells whether the head serves unsigned requests.
func (h *S3Head) Anonymous() bool { return h.cfg.Anonymous }

// URL is the endpoint clients give as their endpoint URL.
func (h *S3Head) URL() string { return "http://" + h.Addr() }

// Stop lets requests in flight finish (within API.ShutdownTimeout and
// ctx; the rest are cut off), then closes tier 2 once no request reads
// it. Calling it again returns the same.
func (h *S3Head) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() { h.stopErr = h.close(ctx) })
	return h.stopErr
}

// close closes whatever StartS3 opened, in reverse order.
func (h *S3Head) close(ctx context.Context) error {
	h.stop()
	if h.web != nil {
		shutdownHTTP(ctx, h.web, h.cfg.API.ShutdownTimeout, h.log, "s3 head")
	} else if h.l != nil {
		h.l.Close()
	}
	h.wait()
	h.requests.Wait()
	if h.st != nil {
		if err := h.st.Close(); err != nil {
			return fmt.Errorf("s3 head: %w", err)
		}
	}
	return nil
}
