package noderole

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/membership"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/node/tiering"
	"github.com/sluice-streams/sluice/node/vfs/reclaim"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// Node is a running node role: the node, its server and, in cluster mode,
// its membership. Stop ends it.
type Node struct {
	cfg     Config
	log     logrus.FieldLogger
	tierURI string
	tier    tier2.Storage      // closed after the node; nil without tier 2
	reclaim *reclaim.Reclaimer // closed last; nil if ReclaimRate is 0
	node    *node.Node
	l       net.Listener
	srv     *server.Server
	member  *membership.Member // nil unless in a cluster

	served   chan struct{} // closed when Serve returned
	serveErr error         // Serve's error, set before served is closed
	stopping chan struct{} // closed by Stop before it closes the server
	stopOnce sync.Once
	stopErr  error

	closeServerOnce sync.Once
	closeServerErr  error
}

// Start validates cfg, opens the tier-2 storage and the node (recovering
// its containers), listens on cfg.Listen and serves; in cluster mode it
// then registers in ZooKeeper and returns once the node hosts what the
// current assignment gives it (ctx bounds that). On any failure it closes
// what it opened, in the reverse order, and returns the error.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	if cfg.Server.Logger == nil {
		cfg.Server.Logger = cfg.Logger
	}
	n := &Node{cfg: cfg, log: cfg.Logger, served: make(chan struct{}), stopping: make(chan struct{})}
	defer func() {
		if err != nil {
			n.closeOpened()
		}
	}()
	if cfg.ReclaimRate > 0 {
		n.reclaim = reclaim.New(reclaim.Config{Rate: cfg.ReclaimRate, Logger: cfg.Logger})
	}
	ncfg := node.Config{
		Dir: cfg.DataDir, Containers: cfg.Containers, CacheSize: cfg.CacheSize,
		WALFileSize: cfg.WALFileSize, WALPreallocate: cfg.WALPreallocate,
		CheckpointBytes: cfg.CheckpointBytes, Logger: cfg.Logger, Rates: cfg.rates(),
		Reclaim: n.reclaim,
	}
	if err := n.openTier(&ncfg); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	id := cfg.Cluster.ID
	if cfg.Cluster.Enabled() {
		ncfg.Hosted = []int{} // the assignment decides
		if id == "" {
			h, err := os.Hostname()
			if err != nil {
				return nil, fmt.Errorf("node: no cluster id and no host name: %w", err)
			}
			id = h
		}
	}
	if n.node, err = node.Open(ncfg); err != nil {
		return nil, err
	}
	if n.l, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("node: listen on %s: %w", cfg.Listen, err)
	}
	n.srv = server.New(n.node, cfg.Server)
	go func() {
		err := n.srv.Serve(n.l)
		select {
		case <-n.stopping: // stopped by Stop: not an error of its own
		default:
			n.serveErr = err
		}
		close(n.served)
	}()
	if cfg.OnListen != nil {
		cfg.OnListen(n.Addr())
	}
	cfg.Logger.WithFields(logrus.Fields{"addr": n.Addr(), "data": cfg.DataDir, "containers": cfg.Containers}).Info("node: serving")
	if cfg.Cluster.Enabled() {
		addr := cfg.Cluster.Advertise
		if addr == "" {
			addr = n.Addr()
		}
		if n.member, err = n.join(ctx, id, addr); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// openTier opens the tier-2 storage of n.cfg, if any, and sets it in ncfg.
func (n *Node) openTier(ncfg *node.Config) error {
	t := n.cfg.Tier
	if t.Off() {
		return nil
	}
	uri, err := backend.URI(t.URI)
	if err != nil {
		return err
	}
	st, err := backend.Open(uri)
	if err != nil {
		return fmt.Errorf("tier 2: %w", err)
	}
	n.tierURI, n.tier = uri, st
	if local, ok := st.(*fs.Storage); ok && n.reclaim != nil {
		if err := local.SetReclaimer(n.reclaim, fs.ReadGrace); err != nil {
			return fmt.Errorf("tier 2: %w", err)
		}
	}
	ncfg.Tier2 = st
	ncfg.TierPolicy = tiering.Policy{MaxLag: t.MaxLag, SegmentBytes: t.SegmentBytes, ChunkBytes: t.ChunkBytes}
	ncfg.MaxUntieredBytes = t.MaxUntiered
	if t.Compress {
		ncfg.TierCompression = seqfile.Block
	}
	return nil
}

// join opens a ZooKeeper session and starts following the container
// assignment; it returns once the node is registered and hosts what the
// current assignment gives it.
func (n *Node) join(ctx context.Context, id, addr string) (*membership.Member, error) {
	c := n.cfg.Cluster
	open := zkstore.Opener(c.Servers, c.Root, c.SessionTimeout, n.log)
	st, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("node: ZooKeeper %s: %w", strings.Join(c.Servers, ","), err)
	}
	m, err := membership.Start(ctx, membership.Config{
		Store: st, Reopen: open, ID: id, Addr: addr, Node: n.node, Logger: n.log,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	n.log.WithFields(logrus.Fields{"id": id, "zk": strings.Join(c.Servers, ","), "root": c.Root, "advertise": addr}).
		Info("node: following the container assignment")
	return m, nil
}

// Addr is the address the node listens on (the port picked for port 0).
func (n *Node) Addr() string { return n.l.Addr().String() }

// Node is the node itself, for tests that reach into it.
func (n *Node) Node() *node.Node { return n.node }

// TierURI is the canonical URI of the node's tier-2 storage, "" without.
func (n *Node) TierURI() string { return n.tierURI }

// Done is closed once the node's server stopped serving: by Stop, or on
// its own after a fatal error (Err).
func (n *Node) Done() <-chan struct{} { return n.served }

// Err is the error the server stopped with on its own, once Done is
// closed; nil if Stop stopped it.
func (n *Node) Err() error {
	select {
	case <-n.served:
		return n.serveErr
	default:
		return nil
	}
}

// Stop shuts the node down: it tiers what is durable (for at most
// Tier.ShutdownFlush, and while ctx lasts), leaves the cluster, closes the
// server (every connection breaks) and waits for it, closes the node (each
// container writes a last checkpoint) and then the tier-2 storage. It
// returns the first error; calling it again returns the same.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() { n.stopErr = n.stop(ctx) })
	return n.stopErr
}

func (n *Node) stop(ctx context.Context) error {
	if n.node.HasTier2() {
		// Leave tier 2 up to date for its readers while the node is away;
		// the logs keep everything in any case.
		fctx, cancel := context.WithTimeout(ctx, n.cfg.Tier.ShutdownFlush)
		if err := n.node.FlushTier(fctx); err != nil {
			n.log.WithError(err).Warn("node: tier 2 not flushed before shutdown; the logs keep what is missing")
		}
		cancel()
	}
	return n.closeOpened()
}

// CloseServer stops serving clients: it closes the listener and every
// connection and waits for the server. Stop does it too, after the
// shutdown flush; the standalone calls it before Stop, so that no append
// arrives while tier 2 is flushed. Calling it again returns the same.
func (n *Node) CloseServer() error {
	n.closeServerOnce.Do(func() {
		if n.srv != nil {
			close(n.stopping)
			n.closeServerErr = n.srv.Close()
			<-n.served
		} else if n.l != nil {
			n.closeServerErr = n.l.Close()
		}
	})
	return n.closeServerErr
}

// closeOpened closes, in the reverse order, whatever Start opened.
func (n *Node) closeOpened() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if n.member != nil {
		keep(n.member.Close())
	}
	keep(n.CloseServer())
	if n.node != nil {
		keep(n.node.Close())
	}
	if n.tier != nil {
		n.tier.Close() // as the node's program always did: its error says nothing new
	}
	keep(n.reclaim.Close()) // what it did not free waits in the trash for the next start
	return first
}
