package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

// nodeOptions are the flags of `sluice node`.
type nodeOptions struct {
	// DataDir holds the node's WAL and metadata (--data), and its lock,
	// DataDir/LOCK: one process at a time (node.Open takes it).
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
	// ZK is the ZooKeeper ensemble, "host:port,host:port" (--zk): cluster
	// mode. Empty: standalone, every container hosted.
	ZK string
	// ZKRoot is the root znode of the cluster's keys (--zk-root).
	ZKRoot string
	// ZKSessionTimeout is the ZooKeeper session timeout (--zk-session-timeout).
	ZKSessionTimeout time.Duration
	// ID is the node's id in the assignment (--id); it must stay the same
	// across restarts on one data directory.
	ID string
	// Advertise is the address clients reach the node at (--advertise);
	// the listener's address if empty.
	Advertise string
	// Tier is tier 2 (--tier2 and --tier-*); none by default.
	Tier tierOptions
	// Server holds the connection and memory limits (--max-conns...).
	Server serverOptions
}

func nodeCommand(g *globalOptions) *cli.Command {
	o := &nodeOptions{}
	return &cli.Command{
		Name:  "node",
		Usage: "run a segment store node (the data plane)",
		Flags: append([]cli.Flag{
			&cli.StringFlag{
				Name:        "data",
				Usage:       "`DIR` for the node's WAL and metadata",
				Value:       embed.DefaultNodeConfig().DataDir,
				Destination: &o.DataDir,
			},
			&cli.StringFlag{
				Name:        "listen",
				Usage:       "listen on `ADDR` (port 0: pick a free one and print it)",
				Value:       embed.DefaultNodeConfig().Listen,
				Destination: &o.Listen,
			},
			&cli.IntFlag{
				Name:        "containers",
				Usage:       "number of segment containers `N` in the whole system; every node and controller of a cluster must use the same N",
				Value:       embed.DefaultNodeConfig().Containers,
				Destination: &o.Containers,
			},
			sizeFlag("cache-size", "read cache size in `BYTES`", embed.DefaultNodeConfig().CacheSize, &o.CacheSize),
			sizeFlag("wal-file-size", "cut WAL files at `BYTES`", embed.DefaultNodeConfig().WALFileSize, &o.WALFileSize),
			&cli.BoolFlag{
				Name:        "wal-preallocate",
				Usage:       "zero-fill the next WAL file ahead of time, so appends need only fdatasync",
				Value:       embed.DefaultNodeConfig().WALPreallocate,
				Destination: &o.WALPreallocate,
			},
			sizeFlag("checkpoint-bytes", "checkpoint a container's metadata after every `BYTES` of log (bounds restart replay)", embed.DefaultNodeConfig().CheckpointBytes, &o.CheckpointBytes),
			&cli.StringFlag{
				Name:        "zk",
				Usage:       "cluster mode: ZooKeeper `HOSTS` (host:port,...); the node starts with no container and serves what the leader controller assigns it",
				Destination: &o.ZK,
			},
			&cli.StringFlag{
				Name:        "zk-root",
				Usage:       "root `ZNODE` of the cluster's keys",
				Value:       embed.DefaultClusterConfig().Root,
				Destination: &o.ZKRoot,
			},
			durationFlag("zk-session-timeout", "ZooKeeper session `TIMEOUT`: how long the node may be cut off before it stops taking writes and the cluster counts it dead", embed.DefaultClusterConfig().SessionTimeout, &o.ZKSessionTimeout),
			&cli.StringFlag{
				Name:        "id",
				Usage:       "node `ID` in the container assignment (cluster mode; default: the host name); keep it across restarts on one data directory",
				Destination: &o.ID,
			},
			&cli.StringFlag{
				Name:        "advertise",
				Usage:       "`ADDR` clients reach this node at (cluster mode; default: the listener's address)",
				Destination: &o.Advertise,
			},
		}, append(o.Tier.flags("tier-2 storage `URI`: a directory, file:///DIR or hdfs://HOST:PORT/DIR (default: none, the logs keep everything)", ""),
			o.Server.flags()...)...),
		Action: func(c *cli.Context) error { return runNode(c, g, o) },
	}
}

// runNode maps the flags into an embed.NodeConfig and runs the node
// (embed.StartNode) until SIGINT or SIGTERM, then stops it cleanly (each
// container writes a last checkpoint). The line "node listening on ADDR"
// on stdout tells scripts and tests which port was picked.
//
// With --zk the node opens no container itself: it registers in ZooKeeper
// and hosts the containers the published assignment gives it
// (package node/membership).
func runNode(c *cli.Context, _ *globalOptions, o *nodeOptions) error {
	cfg := o.config(logrus.StandardLogger())
	cfg.OnListen = func(addr string) { fmt.Fprintf(c.App.Writer, "node listening on %s\n", addr) }
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := embed.StartNode(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-n.Done():
		err = n.Err()
	case <-ctx.Done():
		logrus.Info("node: shutting down")
	}
	if serr := n.Stop(context.Background()); err == nil {
		err = serr
	}
	return err
}

// config maps the flags into the node's config.
func (o *nodeOptions) config(log logrus.FieldLogger) embed.NodeConfig {
	cfg := embed.NodeConfig{
		DataDir: o.DataDir, Listen: o.Listen, Containers: o.Containers, CacheSize: o.CacheSize,
		WALFileSize: o.WALFileSize, WALPreallocate: o.WALPreallocate, CheckpointBytes: o.CheckpointBytes,
		Tier: o.Tier.config(), Server: o.Server.options(log), Logger: log,
		Cluster: embed.ClusterConfig{Root: o.ZKRoot, SessionTimeout: o.ZKSessionTimeout, ID: o.ID, Advertise: o.Advertise},
	}
	if o.ZK != "" {
		cfg.Cluster.Servers = strings.Split(o.ZK, ",")
	}
	return cfg
}
