package embed

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/embed/noderole"
	"github.com/sluice-streams/sluice/internal/dirlock"
	"github.com/sluice-streams/sluice/internal/logs"
)

// DefaultStandaloneDataDir is the default StandaloneConfig.DataDir.
const DefaultStandaloneDataDir = "./.data/standalone"

// StandaloneConfig is a node and a controller in one process, on one data
// directory: everything `sluice standalone` sets from its flags. What ties
// the two is set by StartStandalone, whatever the configs hold: the node's
// data directory is DataDir/node, the controller's DataDir/controller;
// the controller sends every segment to the node, with the node's
// containers and tier-2 URI.
type StandaloneConfig struct {
	// DataDir holds node/ (the containers' logs), controller/ (the
	// metadata store) and, by default, tier2/; each of the three
	// directories has a LOCK file, so one process at a time uses them.
	DataDir string
	// Node is the node; its DataDir is ignored, its Tier.URI is
	// DataDir/tier2 if empty ("none": no tier 2), and it has no cluster.
	Node NodeConfig
	// Controller is the controller; its DataDir, Node, NodeAdvertise,
	// Containers, Tier2 and ResumeFirst are ignored (it resumes first),
	// and it has no cluster.
	Controller ControllerConfig
	// HDFS is the HDFS head, on by default (NoHDFS turns it off): tier 2
	// served read-only over HDFS's protocols and WebHDFS. Its Controller
	// and Tier2 are the standalone's; with no tier 2 there is no head.
	HDFS   HDFSConfig
	NoHDFS bool
	// NFS is the NFS head and S3 the S3 head, on by default like the
	// HDFS head (NoNFS, NoS3 turn them off), with the standalone's
	// controller and tier 2. An S3 head given no credentials serves
	// unsigned requests (Anonymous is set for it): a standalone is a
	// laptop's, on loopback unless told otherwise.
	NFS   NFSConfig
	NoNFS bool
	S3    S3Config
	NoS3  bool
	// Logger is every role's logger where theirs is nil;
	// nothing is logged if nil too (internal/logs).
	Logger logrus.FieldLogger
}

// DefaultStandaloneConfig returns the defaults of `sluice standalone`:
// data in ./.data/standalone, the REST API on 127.0.0.1:10080, the node on
// 127.0.0.1:12345, tier 2 in ./.data/standalone/tier2, the HDFS head on
// Hadoop's ports of 127.0.0.1 (8020, 9866, 9870), the NFS head on
// 127.0.0.1:12049 and the S3 head on 127.0.0.1:9000. The node's WAL file size
// and checkpoint interval are the WAL's and the container's defaults.
func DefaultStandaloneConfig() StandaloneConfig {
	n := DefaultNodeConfig()
	n.WALFileSize, n.CheckpointBytes = 0, 0
	n.RateWindows = noderole.StandaloneRateWindows
	ctl := DefaultControllerConfig()
	ctl.AutoScale = StandaloneAutoScale
	return StandaloneConfig{DataDir: DefaultStandaloneDataDir, Node: n, Controller: ctl,
		HDFS: DefaultHDFSConfig(), NFS: DefaultNFSConfig(), S3: DefaultS3Config()}
}

// StandaloneAutoScale is the standalone's auto-scaler: every 2 s, at most
// one scale per stream every 10 s, up to 16 segments. With the
// standalone's rate windows (noderole.StandaloneRateWindows) a segment
// written at 10 times its target splits within seconds (and its hot parts
// again every 10 s), and a stream that goes quiet merges back, one pair
// per scale, once its longest window (1 min) has decayed below half the
// target: within a few minutes.
var StandaloneAutoScale = controller.AutoScaleOptions{Interval: 2 * time.Second, Cooldown: 10 * time.Second, MaxSegments: 16}

// hdfs returns the HDFS head's config as StartStandalone runs it, for the
// controller at url and tier 2 at tierURI.
func (c StandaloneConfig) hdfs(url, tierURI string, api APIConfig) HDFSConfig {
	h := c.HDFS
	h.Controller, h.Tier2, h.API = url, tierURI, api
	if h.Logger == nil {
		h.Logger = c.Logger
	}
	return h
}

// nfs returns the NFS head's config as StartStandalone runs it.
func (c StandaloneConfig) nfs(url, tierURI string) NFSConfig {
	h := c.NFS
	h.Controller, h.Tier2 = url, tierURI
	if h.Logger == nil {
		h.Logger = c.Logger
	}
	return h
}

// s3 returns the S3 head's config as StartStandalone runs it: anonymous
// if it has no credentials.
func (c StandaloneConfig) s3(url, tierURI string, api APIConfig) S3Config {
	h := c.S3
	h.Controller, h.Tier2, h.API = url, tierURI, api
	if len(h.Credentials) == 0 {
		h.Anonymous = true
	}
	if h.Logger == nil {
		h.Logger = c.Logger
	}
	return h
}

// tied returns the node's and the controller's configs as StartStandalone
// runs them (the controller's Node is set once the node listens).
func (c StandaloneConfig) tied() (NodeConfig, ControllerConfig) {
	n, ctl := c.Node, c.Controller
	n.DataDir = filepath.Join(c.DataDir, "node")
	if n.Tier.URI == "" {
		n.Tier.URI = filepath.Join(c.DataDir, "tier2")
	}
	ctl.DataDir = filepath.Join(c.DataDir, "controller")
	ctl.Node, ctl.NodeAdvertise, ctl.Tier2 = n.Listen, "", ""
	ctl.Containers, ctl.ResumeFirst = n.Containers, true
	if ctl.Containers <= 0 {
		ctl.Containers = DefaultNodeConfig().Containers // as the node does
	}
	if n.Logger == nil {
		n.Logger = c.Logger
	}
	if ctl.Logger == nil {
		ctl.Logger = c.Logger
	}
	return n, ctl
}

// Validate returns an error naming the first field out of its range, or
// nil. StartStandalone calls it first.
func (c StandaloneConfig) Validate() error {
	if c.DataDir == "" {
		return invalidf("data directory: want a path")
	}
	if c.Node.Cluster.Enabled() || c.Controller.Cluster.Enabled() {
		return invalidf("cluster servers: a standalone is in no cluster")
	}
	n, ctl := c.tied()
	if err := n.Validate(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := ctl.Validate(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if !c.NoHDFS {
		if err := c.hdfs("http://"+ctl.Listen, "", ctl.API).Validate(); err != nil {
			return fmt.Errorf("hdfs head: %w", err)
		}
	}
	if !c.NoNFS {
		if err := c.nfs("http://"+ctl.Listen, "").Validate(); err != nil {
			return fmt.Errorf("nfs head: %w", err)
		}
	}
	if !c.NoS3 {
		if err := c.s3("http://"+ctl.Listen, "", ctl.API).Validate(); err != nil {
			return fmt.Errorf("s3 head: %w", err)
		}
	}
	return nil
}

// Standalone is a running node and controller in one process. Stop ends
// both.
type Standalone struct {
	cfg  StandaloneConfig
	lock *dirlock.Lock // on DataDir
	node *Node
	ctl  *Controller
	hdfs *HDFSHead // nil without
	nfs  *NFSHead  // nil without
	s3   *S3Head   // nil without

	done     chan struct{} // closed once either role stopped serving
	stopOnce sync.Once
	stopErr  error
}

// StartStandalone locks cfg.DataDir against a second process, starts the
// node on DataDir/node (recovering its containers) and the controller on
// DataDir/controller (recovering its metadata and finishing any workflow
// left half done before its API serves). On any failure it closes what it
// opened, in the reverse order, and returns the error.
func StartStandalone(ctx context.Context, cfg StandaloneConfig) (_ *Standalone, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("standalone: %w", err)
	}
	cfg.Logger = logs.OrDiscard(cfg.Logger)
	ncfg, ccfg := cfg.tied()
	s := &Standalone{cfg: cfg, done: make(chan struct{})}
	defer func() {
		if err != nil {
			for _, h := range s.heads() {
				h.Stop(context.Background())
			}
			if s.ctl != nil {
				s.ctl.Stop(context.Background())
			}
			if s.node != nil {
				s.node.Stop(context.Background())
			}
			if s.lock != nil {
				s.lock.Release()
			}
		}
	}()
	// The whole data directory is this process's; the node and the
	// controller lock their own directories under it.
	if s.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("standalone: %w", err)
	}
	if s.node, err = StartNode(ctx, ncfg); err != nil {
		return nil, fmt.Errorf("standalone: %w", err)
	}
	ccfg.Node, ccfg.Tier2 = s.node.Addr(), s.node.TierURI()
	if s.ctl, err = StartController(ctx, ccfg); err != nil {
		s.ctl = nil
		return nil, fmt.Errorf("standalone: %w", err)
	}
	if err := s.startHeads(ctx, cfg, ccfg.API); err != nil {
		return nil, err
	}
	heads := s.heads()
	go func() {
		done := []<-chan struct{}{s.node.Done(), s.ctl.Done()}
		for _, h := range heads {
			done = append(done, h.Done())
		}
		waitAny(done)
		close(s.done)
	}()
	cfg.Logger.WithFields(logrus.Fields{"controller": s.ctl.URL(), "node": s.node.Addr(), "data": cfg.DataDir, "tier2": s.node.TierURI()}).
		Info("standalone: serving")
	return s, nil
}

// startHeads starts the heads cfg has on, once the controller serves;
// with no tier 2 there is none.
func (s *Standalone) startHeads(ctx context.Context, cfg StandaloneConfig, api APIConfig) (err error) {
	url, uri := s.ctl.URL(), s.node.TierURI()
	if uri == "" {
		return nil
	}
	if !cfg.NoHDFS {
		if s.hdfs, err = StartHDFS(ctx, cfg.hdfs(url, uri, api)); err != nil {
			return fmt.Errorf("standalone: %w", err)
		}
	}
	if !cfg.NoNFS {
		if s.nfs, err = StartNFS(ctx, cfg.nfs(url, uri)); err != nil {
			s.nfs = nil
			return fmt.Errorf("standalone: %w", err)
		}
	}
	if !cfg.NoS3 {
		if s.s3, err = StartS3(ctx, cfg.s3(url, uri, api)); err != nil {
			s.s3 = nil
			return fmt.Errorf("standalone: %w", err)
		}
	}
	return nil
}

// head is what the standalone needs of each head.
type head interface {
	Done() <-chan struct{}
	Err() error
	Stop(context.Context) error
}

// heads are the heads running, in the order they started.
func (s *Standalone) heads() []head {
	var hs []head
	if s.hdfs != nil {
		hs = append(hs, s.hdfs)
	}
	if s.nfs != nil {
		hs = append(hs, s.nfs)
	}
	if s.s3 != nil {
		hs = append(hs, s.s3)
	}
	return hs
}

// waitAny returns once one of cs is closed.
func waitAny(cs []<-chan struct{}) {
	cases := make([]reflect.SelectCase, len(cs))
	for i, c := range cs {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)}
	}
	reflect.Select(cases)
}

// Node is the node role.
func (s *Standalone) Node() *Node { return s.node }

// Controller is the controller role.
func (s *Standalone) Controller() *Controller { return s.ctl }

// NodeAddr is the address the node listens on.
func (s *Standalone) NodeAddr() string { return s.node.Addr() }

// HDFS is the HDFS head; nil if it is off (NoHDFS, or no tier 2).
func (s *Standalone) HDFS() *HDFSHead { return s.hdfs }

// NFS is the NFS head; nil if it is off (NoNFS, or no tier 2).
func (s *Standalone) NFS() *NFSHead { return s.nfs }

// S3 is the S3 head; nil if it is off (NoS3, or no tier 2).
func (s *Standalone) S3() *S3Head { return s.s3 }

// URL is the REST API's base URL.
func (s *Standalone) URL() string { return s.ctl.URL() }

// Done is closed once either role stopped serving: by Stop, or on its own
// after a fatal error (Err).
func (s *Standalone) Done() <-chan struct{} { return s.done }

// Err is the error a role stopped with on its own, once Done is closed;
// nil before, and nil if Stop stopped them.
func (s *Standalone) Err() error {
	if err := s.ctl.Err(); err != nil {
		return fmt.Errorf("standalone: %w", err)
	}
	if err := s.node.Err(); err != nil {
		return fmt.Errorf("standalone: node: serve: %w", err)
	}
	for _, h := range s.heads() {
		if err := h.Err(); err != nil {
			return fmt.Errorf("standalone: %w", err)
		}
	}
	return nil
}

// Stop shuts the roles down: the heads first (their clients read
// through the controller and the node's tier 2), the REST API (requests
// in flight finish), then the node's server (no more appends), then the node
// (tiering what is durable, then closing its containers), then the controller's Service and store, and last the data
// directory's lock. It returns the first error; calling it again returns
// the same.
func (s *Standalone) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		var first error
		keep := func(err error) {
			if err != nil && first == nil {
				first = fmt.Errorf("standalone: %w", err)
			}
		}
		for _, h := range s.heads() {
			keep(h.Stop(ctx))
		}
		keep(s.ctl.shutdownAPI(ctx))
		keep(s.node.CloseServer())
		keep(s.node.Stop(ctx))
		keep(s.ctl.closeRest())
		s.ctl.stopOnce.Do(func() {}) // its parts are stopped: a later Controller().Stop does nothing
		<-s.done
		s.lock.Release()
		s.stopErr = first
	})
	return s.stopErr
}
