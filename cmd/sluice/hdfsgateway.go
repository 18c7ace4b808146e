package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

func hdfsGatewayCommand(g *globalOptions) *cli.Command {
	cfg := embed.DefaultHDFSConfig()
	return &cli.Command{
		Name:  "hdfs-gateway",
		Usage: "serve tier 2 read-only over HDFS (hdfs://) and WebHDFS (webhdfs://), for Hadoop, Spark and Hive",
		Description: "The HDFS head shows the streams of the controller (--controller) as\n" +
			"/SCOPE/STREAM/segment=N/FIRST_OFFSET.seq, the chunks of tier 2 (Hadoop\n" +
			"SequenceFiles), and refuses every write with \"Permission denied\".",
		Flags:  headFlags(&cfg),
		Action: func(c *cli.Context) error { return runHead(c, g, cfg) },
	}
}

// headFlags are the flags of `sluice hdfs-gateway`, into cfg's fields.
func headFlags(cfg *embed.HDFSConfig) []cli.Flag {
	d := embed.DefaultHDFSConfig()
	return []cli.Flag{
		&cli.StringFlag{Name: "rpc-addr", Usage: "serve NameNode RPC on `ADDR` (hdfs://ADDR/; port 0: pick a free one)", Value: d.RPCListen, Destination: &cfg.RPCListen},
		&cli.StringFlag{Name: "data-addr", Usage: "serve block reads (HDFS data transfer) on `ADDR`", Value: d.DataListen, Destination: &cfg.DataListen},
		&cli.StringFlag{Name: "http-addr", Usage: "serve WebHDFS on `ADDR` (webhdfs://ADDR/)", Value: d.HTTPListen, Destination: &cfg.HTTPListen},
		&cli.StringFlag{Name: "advertise", Usage: "the `HOST` clients reach the data address at (default: --data-addr's host, or this host's name)", Destination: &cfg.Advertise},
		&cli.StringFlag{Name: "tier2", Usage: "serve the tier 2 at `URI` (default: the controller's)", Destination: &cfg.Tier2},
		sizeFlag("block-size", "split chunks into HDFS blocks of `BYTES`", d.BlockSize, &cfg.BlockSize),
	}
}

// runHead runs the HDFS head (embed.StartHDFS) until SIGINT or SIGTERM.
func runHead(c *cli.Context, g *globalOptions, cfg embed.HDFSConfig) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	cfg.Controller, cfg.Logger, cfg.API = g.Controller, log, apiConfig()
	return serveRole(c, "hdfs head", log, func(ctx context.Context) (role, error) {
		h, err := embed.StartHDFS(ctx, cfg)
		if err != nil {
			return nil, err
		}
		printHeadAddrs(c, h)
		return h, nil
	})
}

// printHeadAddrs prints the lines scripts and tests wait for.
func printHeadAddrs(c *cli.Context, h *embed.HDFSHead) {
	fmt.Fprintf(c.App.Writer, "hdfs head (rpc) listening on %s\n", h.RPCAddr())
	fmt.Fprintf(c.App.Writer, "hdfs head (data) listening on %s\n", h.DataAddr())
	fmt.Fprintf(c.App.Writer, "webhdfs listening on %s\n", h.HTTPAddr())
}
