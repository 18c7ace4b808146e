package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/server"
)

// nodeOptions are the flags of `sluice node`.
type nodeOptions struct {
	// DataDir holds the node's WAL and metadata (--data).
	DataDir string
	// Listen is the data-plane address (--listen); port 0 picks a free port,
	// which the node prints once it listens.
	Listen string
	// Containers is the number of segment containers (--containers).
	Containers int
	// CacheSize is the read cache budget in bytes (--cache-size).
	CacheSize int64
	// WALFileSize is the size in bytes at which a WAL file is cut (--wal-file-size).
	WALFileSize int64
	// WALPreallocate zero-fills the next WAL file ahead of time so appends
	// are synced with fdatasync (--wal-preallocate).
	WALPreallocate bool
	// CheckpointBytes is how much log a container writes between two
	// checkpoints of its metadata (--checkpoint-bytes).
	CheckpointBytes int64
}

func nodeCommand(g *globalOptions) *cli.Command {
	o := &nodeOptions{}
	return &cli.Command{
		Name:  "node",
		Usage: "run a segment store node (the data plane)",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:        "data",
				Usage:       "`DIR` for the node's WAL and metadata",
				Value:       "./.data/node",
				Destination: &o.DataDir,
			},
			&cli.StringFlag{
				Name:        "listen",
				Usage:       "listen on `ADDR` (port 0: pick a free one and print it)",
				Value:       "127.0.0.1:12345",
				Destination: &o.Listen,
			},
			&cli.IntFlag{
				Name:        "containers",
				Usage:       "number of segment containers `N`",
				Value:       4,
				Destination: &o.Containers,
			},
			&cli.Int64Flag{
				Name:        "cache-size",
				Usage:       "read cache size in `BYTES`",
				Value:       256 << 20,
				Destination: &o.CacheSize,
			},
			&cli.Int64Flag{
				Name:        "wal-file-size",
				Usage:       "cut WAL files at `BYTES`",
				Value:       64 << 20,
				Destination: &o.WALFileSize,
			},
			&cli.BoolFlag{
				Name:        "wal-preallocate",
				Usage:       "zero-fill the next WAL file ahead of time, so appends need only fdatasync",
				Value:       true,
				Destination: &o.WALPreallocate,
			},
			&cli.Int64Flag{
				Name:        "checkpoint-bytes",
				Usage:       "checkpoint a container's metadata after every `BYTES` of log (bounds restart replay)",
				Value:       64 << 20,
				Destination: &o.CheckpointBytes,
			},
		},
		Action: func(c *cli.Context) error { return runNode(c, g, o) },
	}
}

// runNode opens the node's containers (recovering them), serves them on
// o.Listen until SIGINT or SIGTERM, then closes them cleanly (each writes a
// last checkpoint). The line "node listening on ADDR" on stdout tells
// scripts and tests which port was picked.
func runNode(c *cli.Context, _ *globalOptions, o *nodeOptions) error {
	n, err := node.Open(node.Config{
		Dir: o.DataDir, Containers: o.Containers, CacheSize: o.CacheSize,
		WALFileSize: o.WALFileSize, WALPreallocate: o.WALPreallocate,
		CheckpointBytes: o.CheckpointBytes, Logger: logrus.StandardLogger(),
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		n.Close()
		return fmt.Errorf("node: listen on %s: %w", o.Listen, err)
	}
	srv := server.New(n, server.Options{Logger: logrus.StandardLogger()})
	fmt.Fprintf(c.App.Writer, "node listening on %s\n", l.Addr())
	logrus.WithFields(logrus.Fields{"addr": l.Addr().String(), "data": o.DataDir, "containers": o.Containers}).Info("node: serving")

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		logrus.Info("node: shutting down")
	}
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	if cerr := n.Close(); err == nil {
		err = cerr
	}
	return err
}
