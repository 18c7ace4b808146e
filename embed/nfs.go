package embed

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/nfsexport"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/view"
)

// DefaultNFSListen is the NFS head's default address (NFSv3 and MOUNT on
// one port).
const DefaultNFSListen = nfsexport.DefaultListen

// NFSConfig is the NFS head: tier 2 served read-only over NFSv3 and MOUNT
// on one TCP port (package nfsexport). Everything `sluice nfs-export` sets
// from its flags; the standalone's NFS head is the same with the
// standalone's controller.
type NFSConfig struct {
	// Controller is the controller's URL: its scopes and streams are the
	// tree the head serves, and its tier-2 URI where the chunks are.
	Controller string
	// Tier2 is the tier-2 URI to serve; the controller's if empty.
	Tier2 string
	// Listen is the address of NFS and MOUNT; port 0 picks a free one,
	// which NFSHead.Addr reports.
	Listen string
	// CatalogTTL is how long the head reuses the controller's scope and
	// stream names (view.DefaultCatalogTTL if 0).
	CatalogTTL time.Duration
	// Logger; nothing is logged if nil.
	Logger logrus.FieldLogger
	// OnListen, if set, is called with "nfs head" and the bound address
	// once it listens.
	OnListen func(name, addr string)
}

// DefaultNFSConfig returns the defaults of `sluice nfs-export`.
func DefaultNFSConfig() NFSConfig {
	return NFSConfig{Controller: "http://127.0.0.1:10080", Listen: DefaultNFSListen, CatalogTTL: view.DefaultCatalogTTL}
}

// Validate returns an error naming the first field out of its range.
func (c NFSConfig) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return invalidf("NFS listen address %q: want host:port", c.Listen)
	}
	if c.Controller == "" {
		return invalidf("nfs head: want a controller URL")
	}
	if c.Tier2 != "" {
		if _, err := backend.URI(c.Tier2); err != nil {
			return invalidf("nfs head tier 2 URI: %v", err)
		}
	}
	return nil
}

// NFSHead is a running NFS head.
type NFSHead struct {
	cfg NFSConfig
	log logrus.FieldLogger
	st  tier2.Storage
	srv *nfsexport.Server
	l   net.Listener
	*servers

	stopOnce sync.Once
	stopErr  error
}

// StartNFS validates cfg, finds tier 2 (asking the controller, retrying
// until it answers or ctx ends), opens it, listens and serves. On any
// failure it closes what it opened and returns the error.
func StartNFS(ctx context.Context, cfg NFSConfig) (_ *NFSHead, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("nfs head: %w", err)
	}
	h := &NFSHead{cfg: cfg, log: logs.OrDiscard(cfg.Logger), servers: newServers("nfs head")}
	defer func() {
		if err != nil {
			h.close()
		}
	}()
	var v *view.View
	var uri string
	if h.st, v, uri, err = openView(ctx, "nfs head", cfg.Controller, cfg.Tier2, cfg.CatalogTTL, h.log); err != nil {
		return nil, err
	}
	if h.l, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("nfs head: listen %s: %w", cfg.Listen, err)
	}
	h.srv = nfsexport.New(v, nfsexport.Config{Logger: h.log})
	h.serve("nfs", func() error { return h.srv.Serve(h.l) }, nfsexport.ErrClosed)
	if cfg.OnListen != nil {
		cfg.OnListen("nfs head", h.Addr())
	}
	h.log.WithFields(logrus.Fields{"addr": h.Addr(), "tier2": uri}).Info("nfs head: serving")
	return h, nil
}

// Addr is the bound address of NFS and MOUNT.
func (h *NFSHead) Addr() string { return h.l.Addr().String() }

// Stop closes the server and every connection, waits for them, then
// closes tier 2. Calling it again returns the same.
func (h *NFSHead) Stop(context.Context) error {
	h.stopOnce.Do(func() { h.stopErr = h.close() })
	return h.stopErr
}

// close closes whatever StartNFS opened, in reverse order.
func (h *NFSHead) close() error {
	h.stop()
	var first error
	if h.srv != nil {
		first = h.srv.Close()
	}
	if h.l != nil {
		h.l.Close()
	}
	h.wait()
	if h.st != nil {
		if err := h.st.Close(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("nfs head: %w", first)
	}
	return nil
}
