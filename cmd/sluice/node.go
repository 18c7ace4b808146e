package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/membership"
	"github.com/sluice-streams/sluice/node/server"
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
				Usage:       "number of segment containers `N` in the whole system; every node and controller of a cluster must use the same N",
				Value:       4,
				Destination: &o.Containers,
			},
			sizeFlag("cache-size", "read cache size in `BYTES`", 256<<20, &o.CacheSize),
			sizeFlag("wal-file-size", "cut WAL files at `BYTES`", 64<<20, &o.WALFileSize),
			&cli.BoolFlag{
				Name:        "wal-preallocate",
				Usage:       "zero-fill the next WAL file ahead of time, so appends need only fdatasync",
				Value:       true,
				Destination: &o.WALPreallocate,
			},
			sizeFlag("checkpoint-bytes", "checkpoint a container's metadata after every `BYTES` of log (bounds restart replay)", 64<<20, &o.CheckpointBytes),
			&cli.StringFlag{
				Name:        "zk",
				Usage:       "cluster mode: ZooKeeper `HOSTS` (host:port,...); the node starts with no container and serves what the leader controller assigns it",
				Destination: &o.ZK,
			},
			&cli.StringFlag{
				Name:        "zk-root",
				Usage:       "root `ZNODE` of the cluster's keys",
				Value:       "/sluice",
				Destination: &o.ZKRoot,
			},
			durationFlag("zk-session-timeout", "ZooKeeper session `TIMEOUT`: how long the node may be cut off before it stops taking writes and the cluster counts it dead", 10*time.Second, &o.ZKSessionTimeout),
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

// runNode opens the node's containers (recovering them), serves them on
// o.Listen until SIGINT or SIGTERM, then closes them cleanly (each writes a
// last checkpoint). The line "node listening on ADDR" on stdout tells
// scripts and tests which port was picked.
//
// With --zk the node opens no container itself: it registers in ZooKeeper
// and hosts the containers the published assignment gives it
// (package node/membership).
func runNode(c *cli.Context, _ *globalOptions, o *nodeOptions) error {
	srvOpts, err := o.Server.options(logrus.StandardLogger())
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	cfg := node.Config{
		Dir: o.DataDir, Containers: o.Containers, CacheSize: o.CacheSize,
		WALFileSize: o.WALFileSize, WALPreallocate: o.WALPreallocate,
		CheckpointBytes: o.CheckpointBytes, Logger: logrus.StandardLogger(),
	}
	_, tierStore, err := o.Tier.open(&cfg)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if tierStore != nil {
		defer tierStore.Close()
	}
	if o.ZK != "" {
		cfg.Hosted = []int{} // the assignment decides
		if o.ID == "" {
			h, err := os.Hostname()
			if err != nil {
				return fmt.Errorf("node: no --id and no host name: %w", err)
			}
			o.ID = h
		}
	}
	n, err := node.Open(cfg)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		n.Close()
		return fmt.Errorf("node: listen on %s: %w", o.Listen, err)
	}
	srv := server.New(n, srvOpts)
	fmt.Fprintf(c.App.Writer, "node listening on %s\n", l.Addr())
	logrus.WithFields(logrus.Fields{"addr": l.Addr().String(), "data": o.DataDir, "containers": o.Containers}).Info("node: serving")

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var member *membership.Member
	if o.ZK != "" {
		addr := o.Advertise
		if addr == "" {
			addr = l.Addr().String()
		}
		member, err = joinCluster(ctx, o, n, addr)
	}
	if err == nil {
		select {
		case err = <-served:
		case <-ctx.Done():
			logrus.Info("node: shutting down")
		}
	}
	if n.HasTier2() {
		// Leave tier 2 up to date for its readers while the node is away;
		// the logs keep everything in any case.
		fctx, cancel := context.WithTimeout(context.Background(), o.Tier.ShutdownFlush)
		if ferr := n.FlushTier(fctx); ferr != nil {
			logrus.WithError(ferr).Warn("node: tier 2 not flushed before shutdown; the logs keep what is missing")
		}
		cancel()
	}
	if member != nil {
		if cerr := member.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	if cerr := n.Close(); err == nil {
		err = cerr
	}
	return err
}

// joinCluster opens a ZooKeeper session and starts following the container
// assignment; it returns once the node is registered and hosts what the
// current assignment gives it.
func joinCluster(ctx context.Context, o *nodeOptions, n *node.Node, addr string) (*membership.Member, error) {
	servers := strings.Split(o.ZK, ",")
	open := func(context.Context) (cluster.Session, error) {
		st, err := zkstore.Open(servers, o.ZKRoot, o.ZKSessionTimeout, logrus.StandardLogger())
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("node: ZooKeeper %s: %w", o.ZK, err)
	}
	m, err := membership.Start(ctx, membership.Config{
		Store: st, Reopen: open, ID: o.ID, Addr: addr, Node: n, Logger: logrus.StandardLogger(),
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	logrus.WithFields(logrus.Fields{"id": o.ID, "zk": o.ZK, "root": o.ZKRoot, "advertise": addr}).Info("node: following the container assignment")
	return m, nil
}
