package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

func nfsExportCommand(g *globalOptions) *cli.Command {
	cfg := embed.DefaultNFSConfig()
	d := embed.DefaultNFSConfig()
	return &cli.Command{
		Name:  "nfs-export",
		Usage: "serve tier 2 read-only over NFSv3 (nfs-ls, nfs-cat, mount -t nfs)",
		Description: "The NFS head shows the streams of the controller (--controller) as\n" +
			"/SCOPE/STREAM/segment=N/FIRST_OFFSET.seq, the chunks of tier 2 (Hadoop\n" +
			"SequenceFiles). It exports / (every scope) and /SCOPE, serves NFSv3 and\n" +
			"MOUNT on one TCP port, and answers every write with NFS3ERR_ROFS.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "serve NFS and MOUNT on `ADDR` (port 0: pick a free one)", Value: d.Listen, Destination: &cfg.Listen},
			&cli.StringFlag{Name: "tier2", Usage: "serve the tier 2 at `URI` (default: the controller's)", Destination: &cfg.Tier2},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c); err != nil {
				return err
			}
			log := newLogger(g, c.App.ErrWriter)
			cfg.Controller, cfg.Logger = g.Controller, log
			return serveRole(c, "nfs head", log, func(ctx context.Context) (role, error) {
				h, err := embed.StartNFS(ctx, cfg)
				if err != nil {
					return nil, err
				}
				printNFSAddr(c, h)
				return h, nil
			})
		},
	}
}

// printNFSAddr prints the line scripts and tests wait for.
func printNFSAddr(c *cli.Context, h *embed.NFSHead) {
	fmt.Fprintf(c.App.Writer, "nfs head listening on %s\n", h.Addr())
}
