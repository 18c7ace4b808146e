package embed_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/internal/dirlock"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// nodeConfig is a node on a temporary directory and a free loopback port,
// without preallocated WAL files (they would cost the test 64 MiB each).
func nodeConfig(t *testing.T) embed.NodeConfig {
	cfg := embed.DefaultNodeConfig()
	cfg.DataDir, cfg.Listen, cfg.WALPreallocate, cfg.Logger = t.TempDir(), "127.0.0.1:0", false, quiet()
	return cfg
}

func controllerConfig(t *testing.T, nodeAddr string) embed.ControllerConfig {
	cfg := embed.DefaultControllerConfig()
	cfg.DataDir, cfg.Listen, cfg.Node, cfg.Logger = t.TempDir(), "127.0.0.1:0", nodeAddr, quiet()
	return cfg
}

func standaloneConfig(dir string) embed.StandaloneConfig {
	cfg := embed.DefaultStandaloneConfig()
	cfg.DataDir, cfg.Logger = dir, quiet()
	cfg.Node.Listen, cfg.Node.WALPreallocate = "127.0.0.1:0", false
	cfg.Controller.Listen = "127.0.0.1:0"
	cfg.HDFS.RPCListen, cfg.HDFS.DataListen, cfg.HDFS.HTTPListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.NFS.Listen, cfg.S3.Listen = "127.0.0.1:0", "127.0.0.1:0"
	return cfg
}

// createStream creates scope and its one-segment stream "events" through
// ctl, and returns the name of that segment.
func createStream(ctx context.Context, t *testing.T, ctl *ctlclient.Client, scope string) string {
	t.Helper()
	if err := ctl.CreateScope(ctx, scope); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: "events",
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 1}}); err != nil {
		t.Fatal(err)
	}
	return protocol.SegmentName(scope, "events", 0, 0)
}

// firstEvent reads seg from its start through conn and returns its first
// event.
func firstEvent(ctx context.Context, t *testing.T, conn *segclient.Conn, seg string) string {
	t.Helper()
	r, err := conn.ReadSegment(ctx, seg, 0, 1024, 0)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, d := range r.Data {
		data = append(data, d...)
	}
	e, _, err := protocol.NextEvent(data)
	if err != nil {
		t.Fatalf("first event of %s: %v", seg, err)
	}
	return string(e)
}

// roundTrip creates scope/stream through the REST API at url, appends one
// event to the stream's first segment on the node the API names for it,
// and reads it back.
func roundTrip(t *testing.T, url, scope string) {
	t.Helper()
	ctx := ctxT(t)
	ctl := ctlclient.NewClient(url)
	seg := createStream(ctx, t, ctl, scope)
	uri, err := ctl.SegmentURI(ctx, seg)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := segclient.Dial(ctx, uri.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.SetupAppend(ctx, "w", seg); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Append(ctx, "w", 0, 1, protocol.AppendEvent(nil, []byte("round trip")), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	if e := firstEvent(ctx, t, conn, seg); e != "round trip" {
		t.Fatalf("event read back: %q", e)
	}
}

func TestNodeAndControllerRoundTrip(t *testing.T) {
	n, err := embed.StartNode(ctxT(t), nodeConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())
	if strings.HasSuffix(n.Addr(), ":0") {
		t.Fatalf("node address %s: want the bound port", n.Addr())
	}
	c, err := embed.StartController(ctxT(t), controllerConfig(t, n.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	if c.URL() != "http://"+c.Addr() || strings.HasSuffix(c.Addr(), ":0") {
		t.Fatalf("controller URL %s, address %s: want the bound port", c.URL(), c.Addr())
	}
	roundTrip(t, c.URL(), "pair")
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Err() != nil || c.Err() != nil {
		t.Fatalf("after Stop: node Err %v, controller Err %v; want nil", n.Err(), c.Err())
	}
}

// TestStandaloneRoundTrip also checks that the data outlive a stop: a
// second standalone on the same directory finds the stream.
func TestStandaloneRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := embed.StartStandalone(ctxT(t), standaloneConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	if s.URL() != s.Controller().URL() || s.NodeAddr() != s.Node().Addr() {
		t.Fatalf("URL %s / %s, node %s / %s", s.URL(), s.Controller().URL(), s.NodeAddr(), s.Node().Addr())
	}
	if !strings.HasPrefix(s.Node().TierURI(), "file://") {
		t.Fatalf("tier 2 %q: want DIR/tier2 by default", s.Node().TierURI())
	}
	roundTrip(t, s.URL(), "solo")
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	s, err = embed.StartStandalone(ctxT(t), standaloneConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	info, err := ctlclient.NewClient(s.URL()).GetStream(ctxT(t), "solo", "events")
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	if info.StreamName != "events" {
		t.Fatalf("stream after restart: %+v", info)
	}
}

func TestValidate(t *testing.T) {
	for name, err := range map[string]error{
		"node":       embed.DefaultNodeConfig().Validate(),
		"controller": embed.DefaultControllerConfig().Validate(),
		"standalone": embed.DefaultStandaloneConfig().Validate(),
	} {
		if err != nil {
			t.Errorf("default %s config: %v", name, err)
		}
	}
	zk := embed.DefaultClusterConfig()
	zk.Servers = []string{"127.0.0.1:2181"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"node data dir", func() error { c := embed.DefaultNodeConfig(); c.DataDir = ""; return c.Validate() }(), "data directory"},
		{"node listen", func() error { c := embed.DefaultNodeConfig(); c.Listen = ""; return c.Validate() }(), "listen address"},
		{"node server", func() error { c := embed.DefaultNodeConfig(); c.Server.MaxConnections = -1; return c.Validate() }(), "max connections -1 is negative"},
		{"node request memory", func() error { c := embed.DefaultNodeConfig(); c.Server.RequestMemory = 1000; return c.Validate() }(), "request memory 1000 bytes is below"},
		{"node tier URI", func() error { c := embed.DefaultNodeConfig(); c.Tier.URI = "ftp://x/y"; return c.Validate() }(), `scheme "ftp"`},
		{"node cluster root", func() error {
			c := embed.DefaultNodeConfig()
			c.Cluster, c.Cluster.Root = zk, "sluice"
			return c.Validate()
		}(), `cluster root "sluice"`},
		{"node cluster session", func() error {
			c := embed.DefaultNodeConfig()
			c.Cluster, c.Cluster.SessionTimeout = zk, 0
			return c.Validate()
		}(), "cluster session timeout 0s"},
		{"node cluster server", func() error {
			c := embed.DefaultNodeConfig()
			c.Cluster, c.Cluster.Servers = zk, []string{"a:1", ""}
			return c.Validate()
		}(), "cluster servers"},
		{"controller containers", func() error { c := embed.DefaultControllerConfig(); c.Containers = 0; return c.Validate() }(), "containers 0: want at least 1"},
		{"controller listen", func() error { c := embed.DefaultControllerConfig(); c.Listen = ""; return c.Validate() }(), "listen address"},
		{"controller data dir", func() error { c := embed.DefaultControllerConfig(); c.DataDir = ""; return c.Validate() }(), "data directory"},
		{"controller node", func() error { c := embed.DefaultControllerConfig(); c.Node = ""; return c.Validate() }(), "node address"},
		{"controller tier 2", func() error { c := embed.DefaultControllerConfig(); c.Tier2 = "hdfs:///x"; return c.Validate() }(), "tier 2 URI"},
		{"controller API", func() error { c := embed.DefaultControllerConfig(); c.API.ReadTimeout = 0; return c.Validate() }(), "API read timeout 0s"},
		{"controller API header", func() error { c := embed.DefaultControllerConfig(); c.API.MaxHeaderBytes = -1; return c.Validate() }(), "API max header bytes -1"},
		{"controller cluster", func() error {
			c := embed.DefaultControllerConfig()
			c.Cluster, c.Cluster.Root = zk, ""
			return c.Validate()
		}(), "cluster root"},
		{"standalone data dir", func() error { c := embed.DefaultStandaloneConfig(); c.DataDir = ""; return c.Validate() }(), "data directory"},
		{"standalone cluster", func() error { c := embed.DefaultStandaloneConfig(); c.Node.Cluster = zk; return c.Validate() }(), "no cluster"},
		{"standalone node", func() error {
			c := embed.DefaultStandaloneConfig()
			c.Node.Server.PeerRequestMemory = 1
			return c.Validate()
		}(), "node: server: invalid options: request memory per peer 1 bytes"},
		{"standalone controller", func() error {
			c := embed.DefaultStandaloneConfig()
			c.Controller.API.IdleTimeout = -time.Second
			return c.Validate()
		}(), "controller: API idle timeout -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, embed.ErrInvalidConfig) || !strings.Contains(tt.err.Error(), tt.want) {
				t.Fatalf("Validate: %v; want ErrInvalidConfig saying %q", tt.err, tt.want)
			}
		})
	}
	// A server limit's error still matches the server's own sentinel.
	c := embed.DefaultNodeConfig()
	c.Server.MaxConnections = -1
	if err := c.Validate(); !errors.Is(err, server.ErrInvalidOptions) {
		t.Fatalf("Validate: %v; want server.ErrInvalidOptions too", err)
	}
}

// An invalid config is refused before anything is opened: the data
// directory is not even created.
func TestStartRefusesInvalidConfig(t *testing.T) {
	cfg := standaloneConfig(t.TempDir() + "/never")
	cfg.Node.Server.MaxConnections = -1
	if _, err := embed.StartStandalone(ctxT(t), cfg); !errors.Is(err, embed.ErrInvalidConfig) {
		t.Fatalf("StartStandalone: %v; want ErrInvalidConfig", err)
	}
	ccfg := controllerConfig(t, "127.0.0.1:1")
	ccfg.Containers = 0
	if _, err := embed.StartController(ctxT(t), ccfg); !errors.Is(err, embed.ErrInvalidConfig) {
		t.Fatalf("StartController: %v; want ErrInvalidConfig", err)
	}
}

// waitGoroutines waits until no more than n goroutines run, for at most
// 20 s (goroutines of closed connections end on their own schedule), and
// fails with a dump of them if they don't.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines after Stop, %d before:\n%s", runtime.NumGoroutine(), n, buf.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a count that has no event to wait on
	}
}

// TestStopIsIdempotentAndLeavesNoGoroutine starts and stops each role
// twice: the first time creates what the process keeps for good (the
// HTTP client's and the runtime's), the second must leave the count of
// goroutines as it found it.
func TestStopIsIdempotentAndLeavesNoGoroutine(t *testing.T) {
	run := func() {
		s, err := embed.StartStandalone(ctxT(t), standaloneConfig(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, s.URL(), "leak")
		n, err := embed.StartNode(ctxT(t), nodeConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		c, err := embed.StartController(ctxT(t), controllerConfig(t, n.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := s.Stop(context.Background()); err != nil {
				t.Fatalf("standalone Stop #%d: %v", i+1, err)
			}
			if err := c.Stop(context.Background()); err != nil {
				t.Fatalf("controller Stop #%d: %v", i+1, err)
			}
			if err := n.Stop(context.Background()); err != nil {
				t.Fatalf("node Stop #%d: %v", i+1, err)
			}
		}
		for _, done := range []<-chan struct{}{s.Done(), c.Done(), n.Done()} {
			select {
			case <-done:
			default:
				t.Fatal("Done not closed after Stop")
			}
		}
	}
	run()
	before := runtime.NumGoroutine()
	run()
	waitGoroutines(t, before)
}

// A node that cannot listen closes what it opened: the data directory can
// be opened again at once.
func TestFailedNodeStartReleasesItsDirectory(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := nodeConfig(t)
	cfg.Listen = busy.Addr().String()
	if _, err := embed.StartNode(ctxT(t), cfg); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("StartNode on a port in use: %v; want EADDRINUSE", err)
	}
	cfg.Listen = "127.0.0.1:0"
	n, err := embed.StartNode(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("StartNode again on the same directory: %v", err)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A standalone whose controller cannot listen has by then locked its
// directory and started its node: it must close both, so that another
// standalone can start on the directory. One on a directory in use fails
// naming the holder, and leaves the holder running.
func TestFailedStandaloneStartReleasesItsDirectory(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := standaloneConfig(dir)
	cfg.Controller.Listen = busy.Addr().String()
	if _, err := embed.StartStandalone(ctxT(t), cfg); !errors.Is(err, syscall.EADDRINUSE) ||
		!strings.Contains(err.Error(), "standalone: controller: listen on") {
		t.Fatalf("StartStandalone with its API port in use: %v; want EADDRINUSE", err)
	}

	s, err := embed.StartStandalone(ctxT(t), standaloneConfig(dir))
	if err != nil {
		t.Fatalf("StartStandalone again on the same directory: %v", err)
	}
	defer s.Stop(context.Background())
	if _, err := embed.StartStandalone(ctxT(t), standaloneConfig(dir)); !errors.Is(err, dirlock.ErrLocked) {
		t.Fatalf("a second StartStandalone on a directory in use: %v; want dirlock.ErrLocked", err)
	}
	roundTrip(t, s.URL(), "holder")
}

// eventually calls try until it returns nil, for at most a minute (the
// cluster's leader reconciles once a second), and fails with its last
// error.
func eventually(t *testing.T, what string, try func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster's state, which has no event to wait on here
	}
}

// TestClusterRoundTrip runs a controller and a node in cluster mode on a
// real ZooKeeper: the node joins, the controller leads and assigns it the
// containers, and a stream created through the API is written and read on
// the node the API names.
func TestClusterRoundTrip(t *testing.T) {
	zk := embed.DefaultClusterConfig()
	zk.Servers, zk.Root = []string{clustertest.StartZooKeeper(t)}, "/embedtest"

	ccfg := controllerConfig(t, "")
	ccfg.Cluster, ccfg.Cluster.ID = zk, "c1"
	c, err := embed.StartController(ctxT(t), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	ncfg := nodeConfig(t)
	ncfg.Cluster, ncfg.Cluster.ID = zk, "n1"
	n, err := embed.StartNode(ctxT(t), ncfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop(context.Background())

	ctx := ctxT(t)
	ctl := ctlclient.NewClient(c.URL())
	seg := createStream(ctx, t, ctl, "zk")
	eventually(t, "the segment served by n1", func() error {
		uri, err := ctl.SegmentURI(ctx, seg)
		if err != nil {
			return err
		}
		if uri.Endpoint != n.Addr() {
			return fmt.Errorf("segment at %q, node n1 at %q", uri.Endpoint, n.Addr())
		}
		return nil
	})
	conn, err := segclient.Dial(ctx, n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	eventually(t, "an append on n1", func() error {
		if _, err := conn.SetupAppend(ctx, "w", seg); err != nil {
			return err
		}
		_, err := conn.Append(ctx, "w", 0, 1, protocol.AppendEvent(nil, []byte("clustered")), protocol.NoExpectedOffset)
		return err
	})
	if e := firstEvent(ctx, t, conn, seg); e != "clustered" {
		t.Fatalf("event read back: %q", e)
	}
	if err := n.Stop(context.Background()); err != nil {
		t.Fatalf("node Stop: %v", err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("controller Stop: %v", err)
	}
}
