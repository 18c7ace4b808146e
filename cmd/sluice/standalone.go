package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/server"
)

// standaloneOptions are the flags of `sluice standalone`.
type standaloneOptions struct {
	// DataDir holds node/ (the containers' logs) and controller/ (the
	// metadata store) (--data); each of the three has a LOCK file, so one
	// process at a time uses them.
	DataDir string
	// ControllerAddr serves the REST API (--controller-addr).
	ControllerAddr string
	// NodeAddr serves the segment protocol (--node-addr).
	NodeAddr string
	// Containers is the number of segment containers (--containers).
	Containers int
	// CacheSize is the node's block cache in bytes (--cache-size).
	CacheSize int64
	// Tier is tier 2 (--tier2 and --tier-*); DIR/tier2 by default.
	Tier tierOptions
	// Server holds the node's connection and memory limits (--max-conns...).
	Server serverOptions
}

func standaloneCommand(g *globalOptions) *cli.Command {
	o := &standaloneOptions{}
	return &cli.Command{
		Name:  "standalone",
		Usage: "run a controller (embedded metadata store) and a node in one process",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "`DIR` for the node's logs and the controller's metadata", Value: "./.data/standalone", Destination: &o.DataDir},
			&cli.StringFlag{Name: "controller-addr", Usage: "serve the REST API on `ADDR` (port 0: pick a free one)", Value: "127.0.0.1:10080", Destination: &o.ControllerAddr},
			&cli.StringFlag{Name: "node-addr", Usage: "serve segments on `ADDR` (port 0: pick a free one)", Value: "127.0.0.1:12345", Destination: &o.NodeAddr},
			&cli.IntFlag{Name: "containers", Usage: "number of segment containers `N`", Value: node.DefaultContainers, Destination: &o.Containers},
			sizeFlag("cache-size", "node block cache size in `BYTES`", node.DefaultCacheSize, &o.CacheSize),
		}, append(o.Tier.flags("tier-2 storage `URI`: a directory, file:///DIR or hdfs://HOST:PORT/DIR (default DIR/tier2 under --data; none: off)", ""),
			o.Server.flags()...)...),
		Action: func(c *cli.Context) error { return runStandalone(c, g, o) },
	}
}

// runStandalone wires a node and a controller in one process, after
// locking DIR, DIR/node and DIR/controller against a second process: the node
// recovers its containers from DIR/node, the controller its metadata from
// DIR/controller/controller.db and finishes any workflow left half done,
// then both serve until SIGINT or SIGTERM. It prints "controller listening
// on ADDR" and "node listening on ADDR"; GET /health answers 200 from then.
func runStandalone(c *cli.Context, g *globalOptions, o *standaloneOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	// The whole data directory is this process's; the node locks DIR/node
	// itself, the controller's store directory is locked below.
	lock, err := lockDataDir(o.DataDir)
	if err != nil {
		return fmt.Errorf("standalone: %w", err)
	}
	defer lock.Release()
	srvOpts, err := o.Server.options(log)
	if err != nil {
		return fmt.Errorf("standalone: node: %w", err)
	}
	ncfg := node.Config{
		Dir: filepath.Join(o.DataDir, "node"), Containers: o.Containers, CacheSize: o.CacheSize,
		WALPreallocate: true, Logger: log,
	}
	if o.Tier.URI == "" {
		o.Tier.URI = filepath.Join(o.DataDir, "tier2")
	}
	tierURI, tierStore, err := o.Tier.open(&ncfg)
	if err != nil {
		return fmt.Errorf("standalone: %w", err)
	}
	if tierStore != nil {
		defer tierStore.Close()
	}
	n, err := node.Open(ncfg)
	if err != nil {
		return err
	}
	defer n.Close()
	nl, err := net.Listen("tcp", o.NodeAddr)
	if err != nil {
		return fmt.Errorf("standalone: node: listen on %s: %w", o.NodeAddr, err)
	}
	nsrv := server.New(n, srvOpts)
	defer nsrv.Close()
	nodeServed := make(chan error, 1)
	go func() { nodeServed <- nsrv.Serve(nl) }()

	ctlDir := filepath.Join(o.DataDir, "controller")
	ctlLock, err := lockDataDir(ctlDir)
	if err != nil {
		return fmt.Errorf("standalone: controller: %w", err)
	}
	defer ctlLock.Release()
	st, err := boltstore.Open(filepath.Join(ctlDir, "controller.db"))
	if err != nil {
		return fmt.Errorf("standalone: controller: %w", err)
	}
	defer st.Close()
	cl, err := net.Listen("tcp", o.ControllerAddr)
	if err != nil {
		return fmt.Errorf("standalone: controller: listen on %s: %w", o.ControllerAddr, err)
	}
	segs := controller.NewNodeSegments(controller.StaticLocator(nl.Addr().String()))
	defer segs.Close()
	svc := controller.New(st, segs, controller.Options{Logger: log, Tier2URI: tierURI})
	defer svc.Close()
	hsrv := newAPIServer(rest.NewHandler(svc, log, rest.WithLocator(controller.StaticNode{Addr: nl.Addr().String(), Containers: o.Containers})))

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Workflows a crash left half done are finished before the API serves,
	// so nobody sees a stream stuck in one.
	if err := svc.Resume(ctx); err != nil && ctx.Err() == nil {
		log.WithError(err).Warn("standalone: an unfinished workflow could not be resumed; it is retried at the next start")
	}
	httpServed := make(chan error, 1)
	go func() { httpServed <- hsrv.Serve(cl) }()
	fmt.Fprintf(c.App.Writer, "node listening on %s\n", nl.Addr())
	fmt.Fprintf(c.App.Writer, "controller listening on %s\n", cl.Addr())
	log.WithFields(logrus.Fields{"controller": "http://" + cl.Addr().String(), "node": nl.Addr().String(), "data": o.DataDir, "tier2": tierURI}).
		Info("standalone: serving")

	var serveErr error
	select {
	case err := <-httpServed:
		serveErr = fmt.Errorf("standalone: controller: serve: %w", err)
	case err := <-nodeServed:
		serveErr = fmt.Errorf("standalone: node: serve: %w", err)
	case <-ctx.Done():
		log.Info("standalone: shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hsrv.Shutdown(sctx); err != nil && serveErr == nil {
		serveErr = fmt.Errorf("standalone: controller: shutdown: %w", err)
	}
	if err := nsrv.Close(); err != nil && serveErr == nil {
		serveErr = fmt.Errorf("standalone: node: close: %w", err)
	}
	if n.HasTier2() {
		fctx, cancel := context.WithTimeout(context.Background(), o.Tier.ShutdownFlush)
		if err := n.FlushTier(fctx); err != nil {
			log.WithError(err).Warn("standalone: tier 2 not flushed before shutdown; the log keeps what is missing")
		}
		cancel()
	}
	if err := n.Close(); err != nil && serveErr == nil {
		serveErr = err
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}
