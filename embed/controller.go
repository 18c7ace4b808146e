package embed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/leader"
	"github.com/sluice-streams/sluice/controller/rest"
	"github.com/sluice-streams/sluice/internal/dirlock"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/tier2/backend"
)

// Defaults of ControllerConfig (DefaultControllerConfig), the flags'
// defaults of `sluice controller`.
const (
	DefaultControllerListen  = "127.0.0.1:10080"
	DefaultControllerDataDir = "./.data/controller"
	DefaultControllerNode    = "127.0.0.1:12345"
)

// ControllerConfig is the controller role: everything `sluice controller`
// sets from its flags.
type ControllerConfig struct {
	// Listen is the REST API address; port 0 picks a free port, which
	// Controller.Addr reports.
	Listen string
	// DataDir holds the embedded metadata store, DataDir/controller.db,
	// and its lock, DataDir/LOCK: one process at a time. Not used in a
	// cluster.
	DataDir string
	// Node is the address of the one node every segment lives on. Not
	// used in a cluster.
	Node string
	// NodeAdvertise is the node address the API gives clients (tests put
	// a proxy there); Node if empty. Not used in a cluster.
	NodeAdvertise string
	// Containers is the number of segment containers; it must equal the
	// nodes' (segments are hashed to containers with it). At least 1.
	Containers int
	// Cluster is cluster mode: the metadata in ZooKeeper, registration,
	// leader election, and segments found through the container
	// assignment. ID defaults to the advertised address.
	Cluster ClusterConfig
	// Tier2 is the nodes' tier-2 URI, which the API reports for readers
	// of tier 2 ("" if none).
	Tier2 string
	// API bounds the REST API's HTTP server.
	API APIConfig
	// Logger; nothing is logged if nil (internal/logs).
	Logger logrus.FieldLogger

	// ResumeFirst finishes the workflows an earlier run left unfinished
	// before the API serves, so nobody sees a stream stuck in one
	// (standalone and the test harnesses); otherwise they are resumed in
	// the background while the API serves. Not used in a cluster, where
	// the leader resumes them.
	ResumeFirst bool

	// StepHook is controller.Options.StepHook: a test's hook before every
	// workflow step (nil: none).
	StepHook func(workflow, step string) error
	// TxnSweepInterval is controller.Options.TxnSweepInterval (the
	// default if 0; negative: no sweeper).
	TxnSweepInterval time.Duration
	// WatermarkInterval and WriterTimeout are controller.Options' (the
	// defaults if 0): how often watermarks are computed, and how long a
	// writer may go without noting a time before they stop waiting for it.
	WatermarkInterval, WriterTimeout time.Duration
	// AutoScale is controller.Options.AutoScale: the auto-scaler's poll
	// interval (negative: off), cooldown and maximum of segments; the
	// controller's conservative defaults for `sluice controller`,
	// StandaloneAutoScale for the standalone.
	AutoScale controller.AutoScaleOptions

	// Later features (security, metrics) get their field group here,
	// each with its own Validate check and its place in StartController.
}

// DefaultControllerConfig returns the defaults of `sluice controller`:
// an embedded store in ./.data/controller, the node at 127.0.0.1:12345,
// four containers.
func DefaultControllerConfig() ControllerConfig {
	return ControllerConfig{
		Listen: DefaultControllerListen, DataDir: DefaultControllerDataDir, Node: DefaultControllerNode,
		Containers: node.DefaultContainers, Cluster: DefaultClusterConfig(), API: DefaultAPIConfig(),
		WriterTimeout: controller.DefaultWriterTimeout,
		AutoScale:     controller.DefaultAutoScaleOptions(),
	}
}

// Validate returns an error naming the first field out of its range, or
// nil. StartController calls it first.
func (c ControllerConfig) Validate() error {
	if c.Listen == "" {
		return invalidf("listen address: want host:port")
	}
	if c.Containers < 1 {
		return invalidf("containers %d: want at least 1", c.Containers)
	}
	if !c.Cluster.Enabled() {
		if c.DataDir == "" {
			return invalidf("data directory: want a path")
		}
		if c.Node == "" {
			return invalidf("node address: want host:port")
		}
	}
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	if c.Tier2 != "" {
		if _, err := backend.URI(c.Tier2); err != nil {
			return invalidf("tier 2 URI: %w", err)
		}
	}
	if err := c.AutoScale.Validate(); err != nil {
		return invalidf("%w", err)
	}
	return c.API.Validate()
}

// Controller is a running controller role: its metadata store, its
// Service and the REST API served over HTTP. Stop ends it.
type Controller struct {
	cfg     ControllerConfig
	log     logrus.FieldLogger
	l       net.Listener
	lock    *dirlock.Lock // on DataDir; nil in a cluster
	store   cluster.Store
	locator *controller.ClusterLocator // nil unless in a cluster
	segs    *controller.NodeSegments
	svc     *controller.Service
	member  *leader.Member // nil unless in a cluster
	handler http.Handler
	srv     *http.Server

	cancel  context.CancelFunc // ends the run context of the resume below
	resumed sync.WaitGroup     // the background resume of an earlier run's workflows

	served   chan struct{} // closed when Serve returned
	serveErr error         // Serve's error (not http.ErrServerClosed), set before served is closed
	stopOnce sync.Once
	stopErr  error
}

// StartController validates cfg, listens on cfg.Listen, opens the
// metadata store and the Service, and serves the REST API. Without a
// cluster the store is a bbolt file in cfg.DataDir, one node serves every
// segment, and the workflows an earlier run left unfinished are resumed
// (see ResumeFirst). In a cluster the store is ZooKeeper; the controller
// registers and stands for election (package controller/leader), and only
// while it leads does it assign containers and resume workflows. On any
// failure it closes what it opened, in the reverse order, and returns the
// error.
func StartController(ctx context.Context, cfg ControllerConfig) (_ *Controller, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	log := cfg.Logger
	c := &Controller{cfg: cfg, log: log, served: make(chan struct{})}
	defer func() {
		if err != nil {
			c.closeRest()
		}
	}()
	if c.l, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("controller: listen on %s: %w", cfg.Listen, err)
	}
	opts := controller.Options{Logger: log, StepHook: cfg.StepHook, TxnSweepInterval: cfg.TxnSweepInterval,
		WatermarkInterval: cfg.WatermarkInterval, WriterTimeout: cfg.WriterTimeout, AutoScale: cfg.AutoScale}
	if cfg.Tier2 != "" {
		if opts.Tier2URI, err = backend.URI(cfg.Tier2); err != nil {
			return nil, fmt.Errorf("controller: tier 2 URI: %w", err)
		}
	}
	var (
		loc    controller.SegmentLocator // for the API
		segLoc controller.SegmentLocator // for the Service's requests to nodes
		fields logrus.Fields
	)
	if !cfg.Cluster.Enabled() {
		if c.lock, err = lockDataDir(cfg.DataDir); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
		if c.store, err = boltstore.Open(filepath.Join(cfg.DataDir, "controller.db")); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
		segLoc = controller.StaticNode{Addr: cfg.Node, Containers: cfg.Containers}
		loc = segLoc
		if cfg.NodeAdvertise != "" {
			loc = controller.StaticNode{Addr: cfg.NodeAdvertise, Containers: cfg.Containers}
		}
		fields = logrus.Fields{"data": cfg.DataDir, "node": cfg.Node}
	} else {
		zk := strings.Join(cfg.Cluster.Servers, ",")
		zst, err := zkstore.Open(cfg.Cluster.Servers, cfg.Cluster.Root, cfg.Cluster.SessionTimeout, log)
		if err != nil {
			return nil, fmt.Errorf("controller: ZooKeeper %s: %w", zk, err)
		}
		c.store = zst
		if c.locator, err = controller.NewClusterLocator(zst, cfg.Containers, log); err != nil {
			return nil, err
		}
		loc, segLoc = c.locator, c.locator
		fields = logrus.Fields{"zk": zk, "root": cfg.Cluster.Root}
	}
	c.segs = controller.NewNodeSegments(segLoc)
	c.svc = controller.New(c.store, c.segs, opts)

	var runCtx context.Context
	runCtx, c.cancel = context.WithCancel(context.Background())
	if !cfg.Cluster.Enabled() {
		if cfg.ResumeFirst {
			c.resume(ctx)
		} else {
			c.resumed.Add(1)
			go func() {
				defer c.resumed.Done()
				c.resume(runCtx)
			}()
		}
	} else {
		addr := cfg.Cluster.Advertise
		if addr == "" {
			addr = c.Addr()
		}
		id := cfg.Cluster.ID
		if id == "" {
			id = addr
		}
		if c.member, err = c.lead(ctx, id, addr); err != nil {
			return nil, err
		}
		fields["id"], fields["advertise"] = id, addr
	}

	c.handler = rest.NewHandler(c.svc, log, rest.WithLocator(loc))
	c.srv = NewAPIServer(c.handler, cfg.API)
	go func() {
		if err := c.srv.Serve(c.l); !errors.Is(err, http.ErrServerClosed) {
			c.serveErr = err
		}
		close(c.served)
	}()
	fields["addr"], fields["containers"] = c.Addr(), cfg.Containers
	log.WithFields(fields).Info("controller: serving")
	return c, nil
}

// resume finishes the workflows an earlier run left unfinished.
func (c *Controller) resume(ctx context.Context) {
	if err := c.svc.Resume(ctx); err != nil && ctx.Err() == nil {
		c.log.WithError(err).Warn("controller: an unfinished workflow could not be resumed; it is retried at the next start")
	}
}

// lead opens a ZooKeeper session of the controller's own and stands for
// election with it.
func (c *Controller) lead(ctx context.Context, id, addr string) (*leader.Member, error) {
	cl := c.cfg.Cluster
	open := zkstore.Opener(cl.Servers, cl.Root, cl.SessionTimeout, c.log)
	session, err := open(ctx)
	if err != nil {
		return nil, fmt.Errorf("controller: ZooKeeper %s: %w", strings.Join(cl.Servers, ","), err)
	}
	m, err := leader.Start(ctx, leader.Config{
		Store: session, Reopen: open, ID: id, Addr: addr,
		Containers: c.cfg.Containers, Service: c.svc, Logger: c.log,
	})
	if err != nil {
		session.Close()
		return nil, fmt.Errorf("controller: %w", err)
	}
	return m, nil
}

// Addr is the address the REST API listens on (the port picked for port 0).
func (c *Controller) Addr() string { return c.l.Addr().String() }

// URL is the REST API's base URL, http://ADDR.
func (c *Controller) URL() string { return "http://" + c.Addr() }

// Service is the controller itself, for tests that reach into it.
func (c *Controller) Service() *controller.Service { return c.svc }

// Store is the controller's metadata store.
func (c *Controller) Store() cluster.Store { return c.store }

// Handler is what URL serves, to call without a connection.
func (c *Controller) Handler() http.Handler { return c.handler }

// Done is closed once the API server stopped serving: by Stop, or on its
// own after a fatal error (Err).
func (c *Controller) Done() <-chan struct{} { return c.served }

// Err is the error the API server stopped with on its own, once Done is
// closed; nil before, and nil if Stop stopped it.
func (c *Controller) Err() error {
	select {
	case <-c.served:
		if c.serveErr != nil {
			return fmt.Errorf("controller: serve: %w", c.serveErr)
		}
	default:
	}
	return nil
}

// Stop shuts the controller down: it stops taking requests and lets
// those in flight finish (for at most API.ShutdownTimeout, and while ctx
// lasts), leaves the election, waits for the background resume, and
// closes the Service and the store. It returns the first error; calling
// it again returns the same.
func (c *Controller) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		err := c.shutdownAPI(ctx)
		if cerr := c.closeRest(); err == nil {
			err = cerr
		}
		c.stopErr = err
	})
	return c.stopErr
}

// shutdownAPI stops the API server and waits for its goroutine.
func (c *Controller) shutdownAPI(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, c.cfg.API.ShutdownTimeout)
	defer cancel()
	err := c.srv.Shutdown(sctx)
	if err != nil {
		c.srv.Close() // requests still in flight: cut them
		err = fmt.Errorf("controller: shutdown: %w", err)
	}
	<-c.served
	return err
}

// closeRest closes, in the reverse order, whatever startController opened
// besides the API server.
func (c *Controller) closeRest() error {
	if c.cancel != nil {
		c.cancel()
	}
	if c.member != nil {
		c.member.Close()
	}
	c.resumed.Wait()
	if c.svc != nil {
		c.svc.Close()
	}
	if c.segs != nil {
		c.segs.Close()
	}
	if c.locator != nil {
		c.locator.Close()
	}
	var err error
	if c.store != nil {
		err = c.store.Close()
	}
	if c.lock != nil {
		c.lock.Release()
	}
	if c.srv == nil && c.l != nil {
		c.l.Close()
	}
	if err != nil {
		return fmt.Errorf("controller: close the store: %w", err)
	}
	return nil
}
