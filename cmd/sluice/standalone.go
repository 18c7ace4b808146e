package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

func standaloneCommand(g *globalOptions) *cli.Command {
	cfg := embed.DefaultStandaloneConfig()
	var keys s3Keys
	var pprofAddr string
	return &cli.Command{
		Name:  "standalone",
		Usage: "run a controller (embedded metadata store) and a node in one process",
		Flags: append(standaloneFlags(&cfg, &keys), pprofFlag(&pprofAddr)),
		Action: func(c *cli.Context) error {
			var err error
			if cfg.S3.Credentials, err = keys.load(); err != nil {
				return err
			}
			stop, err := servePprof(c, pprofAddr)
			if err != nil {
				return err
			}
			defer stop()
			return runStandalone(c, g, cfg)
		},
	}
}

// standaloneFlags are the flags of `sluice standalone`, into cfg's fields,
// with DefaultStandaloneConfig's values as defaults. The fields without a
// flag keep what cfg holds.
func standaloneFlags(cfg *embed.StandaloneConfig, keys *s3Keys) []cli.Flag {
	d := embed.DefaultStandaloneConfig()
	heads := append([]cli.Flag{
		&cli.StringFlag{Name: "nfs-addr", Usage: "serve the NFS head (NFSv3 and MOUNT) on `ADDR`", Value: d.NFS.Listen, Destination: &cfg.NFS.Listen},
		&cli.BoolFlag{Name: "no-nfs-head", Usage: "do not serve tier 2 over NFS", Destination: &cfg.NoNFS},
		&cli.StringFlag{Name: "s3-addr", Usage: "serve the S3 head on `ADDR` (without --s3-credentials, to unsigned requests)", Value: d.S3.Listen, Destination: &cfg.S3.Listen},
		&cli.BoolFlag{Name: "no-s3-head", Usage: "do not serve tier 2 over S3", Destination: &cfg.NoS3},
	}, s3Flags("s3-", &cfg.S3, keys)...)
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "data", Usage: "`DIR` for the node's logs and the controller's metadata", Value: d.DataDir, Destination: &cfg.DataDir},
		&cli.StringFlag{Name: "controller-addr", Usage: "serve the REST API on `ADDR` (port 0: pick a free one)", Value: d.Controller.Listen, Destination: &cfg.Controller.Listen},
		&cli.StringFlag{Name: "node-addr", Usage: "serve segments on `ADDR` (port 0: pick a free one)", Value: d.Node.Listen, Destination: &cfg.Node.Listen},
		&cli.IntFlag{Name: "containers", Usage: "number of segment containers `N`", Value: d.Node.Containers, Destination: &cfg.Node.Containers},
		sizeFlag("cache-size", "node block cache size in `BYTES`", d.Node.CacheSize, &cfg.Node.CacheSize),
		memoryLimitFlag(&cfg.Node.MemoryLimit),
		reclaimRateFlag(d.Node.ReclaimRate, &cfg.Node.ReclaimRate),
		writerTimeoutFlag(d.Controller.WriterTimeout, &cfg.Controller.WriterTimeout),
		&cli.StringFlag{Name: "hdfs-rpc-addr", Usage: "serve the HDFS head's NameNode RPC on `ADDR` (hdfs://ADDR/; port 0: pick a free one)", Value: d.HDFS.RPCListen, Destination: &cfg.HDFS.RPCListen},
		&cli.StringFlag{Name: "hdfs-data-addr", Usage: "serve the HDFS head's block reads (data transfer) on `ADDR`", Value: d.HDFS.DataListen, Destination: &cfg.HDFS.DataListen},
		&cli.StringFlag{Name: "webhdfs-addr", Usage: "serve WebHDFS on `ADDR` (webhdfs://ADDR/)", Value: d.HDFS.HTTPListen, Destination: &cfg.HDFS.HTTPListen},
		&cli.BoolFlag{Name: "no-hdfs-head", Usage: "do not serve tier 2 over HDFS and WebHDFS", Destination: &cfg.NoHDFS},
	}, heads...), append(append(tierFlags(&cfg.Node.Tier, "tier-2 storage `URI`: a directory, file:///DIR, hdfs://HOST:PORT/DIR or hdfs://NAMESERVICE/DIR (default DIR/tier2 under --data; none: off)"),
		append(autoScaleFlags(&cfg.Controller.AutoScale, d.Controller.AutoScale), rateWindowsFlag(&cfg.Node.RateWindows, d.Node.RateWindows))...),
		serverFlags(&cfg.Node.Server)...)...)
}

// runStandalone completes the config the flags filled and runs a node
// and a controller in one process (embed.StartStandalone), after locking
// DIR, DIR/node and DIR/controller against a second process: the node
// recovers its containers from DIR/node, the controller its metadata from
// DIR/controller/controller.db and finishes any workflow left half done,
// then both serve until SIGINT or SIGTERM, with the HDFS, NFS and S3 heads
// over tier 2 beside them unless turned off. It prints "node listening on
// ADDR", the heads' addresses, and last "controller listening on ADDR";
// GET /health answers 200 from then.
func runStandalone(c *cli.Context, g *globalOptions, cfg embed.StandaloneConfig) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	cfg.Logger, cfg.Node.Server.Logger = log, log
	cfg.Controller.API = apiConfig()
	logLimit := applyProcessLimits(log, cfg.Node)
	return serveRole(c, "standalone", log, func(ctx context.Context) (role, error) {
		s, err := embed.StartStandalone(ctx, cfg)
		if err != nil {
			return nil, err
		}
		logLimit()
		fmt.Fprintf(c.App.Writer, "node listening on %s\n", s.NodeAddr())
		if h := s.HDFS(); h != nil {
			printHeadAddrs(c, h)
		}
		if h := s.NFS(); h != nil {
			printNFSAddr(c, h)
		}
		if h := s.S3(); h != nil {
			printS3Addr(c, h)
		}
		fmt.Fprintf(c.App.Writer, "controller listening on %s\n", s.Controller().Addr())
		return s, nil
	})
}
