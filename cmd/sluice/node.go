package main

import (
	"errors"

	"github.com/urfave/cli/v2"
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
		},
		Action: func(c *cli.Context) error { return runNode(c, g, o) },
	}
}

// runNode starts a node with o. Placeholder until the node lands.
func runNode(_ *cli.Context, _ *globalOptions, _ *nodeOptions) error {
	return errors.New("node: not built yet")
}
