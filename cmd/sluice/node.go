package main

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

func nodeCommand(g *globalOptions) *cli.Command {
	cfg, o := embed.DefaultNodeConfig(), &clusterFlags{}
	return &cli.Command{
		Name:   "node",
		Usage:  "run a segment store node (the data plane)",
		Flags:  nodeFlags(&cfg, o),
		Action: func(c *cli.Context) error { return runNode(c, g, o, cfg) },
	}
}

// nodeFlags are the flags of `sluice node`: --zk into o, the rest into
// cfg's fields, with DefaultNodeConfig's values as defaults. Without --zk
// the node is alone and hosts every container.
func nodeFlags(cfg *embed.NodeConfig, o *clusterFlags) []cli.Flag {
	d := embed.DefaultNodeConfig()
	flags := []cli.Flag{
		&cli.StringFlag{
			Name:        "data",
			Usage:       "`DIR` for the node's WAL and metadata",
			Value:       d.DataDir,
			Destination: &cfg.DataDir,
		},
		&cli.StringFlag{
			Name:        "listen",
			Usage:       "listen on `ADDR` (port 0: pick a free one and print it)",
			Value:       d.Listen,
			Destination: &cfg.Listen,
		},
		&cli.IntFlag{
			Name:        "containers",
			Usage:       "number of segment containers `N` in the whole system; every node and controller of a cluster must use the same N",
			Value:       d.Containers,
			Destination: &cfg.Containers,
		},
		sizeFlag("cache-size", "read cache size in `BYTES`", d.CacheSize, &cfg.CacheSize),
		memoryLimitFlag(&cfg.MemoryLimit),
		sizeFlag("wal-file-size", "cut WAL files at `BYTES`", d.WALFileSize, &cfg.WALFileSize),
		&cli.BoolFlag{
			Name:        "wal-preallocate",
			Usage:       "zero-fill the next WAL file ahead of time, so appends need only fdatasync",
			Value:       d.WALPreallocate,
			Destination: &cfg.WALPreallocate,
		},
		reclaimRateFlag(d.ReclaimRate, &cfg.ReclaimRate),
		sizeFlag("checkpoint-bytes", "checkpoint a container's metadata after every `BYTES` of log (bounds restart replay)", d.CheckpointBytes, &cfg.CheckpointBytes),
	}
	flags = append(flags, o.flags(&cfg.Cluster, clusterUsage{
		ZK:             "cluster mode: ZooKeeper `HOSTS` (host:port,...); the node starts with no container and serves what the leader controller assigns it",
		SessionTimeout: "ZooKeeper session `TIMEOUT`: how long the node may be cut off before it stops taking writes and the cluster counts it dead",
		ID:             "node `ID` in the container assignment (cluster mode; default: the host name); keep it across restarts on one data directory",
		Advertise:      "`ADDR` clients reach this node at (cluster mode; default: the listener's address)",
	})...)
	flags = append(flags, tierFlags(&cfg.Tier, "tier-2 storage `URI`: a directory, file:///DIR, hdfs://HOST:PORT/DIR or hdfs://NAMESERVICE/DIR (default: none, the logs keep everything)")...)
	flags = append(flags, rateWindowsFlag(&cfg.RateWindows, d.RateWindows))
	return append(flags, serverFlags(&cfg.Server)...)
}

// runNode completes the config the flags filled and runs the node
// (embed.StartNode) until SIGINT or SIGTERM, then stops it cleanly (each
// container writes a last checkpoint). The line "node listening on ADDR"
// on stdout tells scripts and tests which port was picked.
//
// With --zk the node opens no container itself: it registers in ZooKeeper
// and hosts the containers the published assignment gives it
// (package node/membership).
func runNode(c *cli.Context, _ *globalOptions, o *clusterFlags, cfg embed.NodeConfig) error {
	log := logrus.StandardLogger()
	cfg.Logger, cfg.Server.Logger = log, log
	o.apply(&cfg.Cluster)
	logLimit := applyProcessLimits(log, cfg)
	cfg.OnListen = func(addr string) { fmt.Fprintf(c.App.Writer, "node listening on %s\n", addr) }
	return serveRole(c, "node", log, func(ctx context.Context) (role, error) {
		n, err := embed.StartNode(ctx, cfg)
		if err != nil {
			return nil, err
		}
		logLimit()
		return n, nil
	})
}
