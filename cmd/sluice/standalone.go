package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
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
	d := embed.DefaultStandaloneConfig()
	return &cli.Command{
		Name:  "standalone",
		Usage: "run a controller (embedded metadata store) and a node in one process",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "`DIR` for the node's logs and the controller's metadata", Value: d.DataDir, Destination: &o.DataDir},
			&cli.StringFlag{Name: "controller-addr", Usage: "serve the REST API on `ADDR` (port 0: pick a free one)", Value: d.Controller.Listen, Destination: &o.ControllerAddr},
			&cli.StringFlag{Name: "node-addr", Usage: "serve segments on `ADDR` (port 0: pick a free one)", Value: d.Node.Listen, Destination: &o.NodeAddr},
			&cli.IntFlag{Name: "containers", Usage: "number of segment containers `N`", Value: d.Node.Containers, Destination: &o.Containers},
			sizeFlag("cache-size", "node block cache size in `BYTES`", d.Node.CacheSize, &o.CacheSize),
		}, append(o.Tier.flags("tier-2 storage `URI`: a directory, file:///DIR or hdfs://HOST:PORT/DIR (default DIR/tier2 under --data; none: off)", ""),
			o.Server.flags()...)...),
		Action: func(c *cli.Context) error { return runStandalone(c, g, o) },
	}
}

// runStandalone maps the flags into an embed.StandaloneConfig and runs a
// node and a controller in one process (embed.StartStandalone), after
// locking DIR, DIR/node and DIR/controller against a second process: the
// node recovers its containers from DIR/node, the controller its metadata
// from DIR/controller/controller.db and finishes any workflow left half
// done, then both serve until SIGINT or SIGTERM. It prints "controller
// listening on ADDR" and "node listening on ADDR"; GET /health answers 200
// from then.
func runStandalone(c *cli.Context, g *globalOptions, o *standaloneOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	cfg := embed.DefaultStandaloneConfig()
	cfg.DataDir, cfg.Logger = o.DataDir, log
	cfg.Node.Listen, cfg.Node.Containers, cfg.Node.CacheSize = o.NodeAddr, o.Containers, o.CacheSize
	cfg.Node.Tier, cfg.Node.Server = o.Tier.config(), o.Server.options(log)
	cfg.Controller.Listen = o.ControllerAddr
	cfg.Controller.API = apiConfig()

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := embed.StartStandalone(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "node listening on %s\n", s.NodeAddr())
	fmt.Fprintf(c.App.Writer, "controller listening on %s\n", s.Controller().Addr())
	select {
	case <-s.Done():
		err = s.Err()
	case <-ctx.Done():
		log.Info("standalone: shutting down")
	}
	if serr := s.Stop(context.Background()); err == nil {
		err = serr
	}
	return err
}
