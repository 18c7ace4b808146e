package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/node/server"
)

// parseFlags runs flags over args as a command would, so that their
// destinations hold what the command's Action would get.
func parseFlags(t *testing.T, flags []cli.Flag, args ...string) {
	t.Helper()
	app := &cli.App{Flags: flags, Action: func(*cli.Context) error { return nil }}
	if err := app.Run(append([]string{"x"}, args...)); err != nil {
		t.Fatal(err)
	}
}

// serverDefaults is what the server flags put in server.Options when
// none is given: the server's defaults, spelt out (the zero Options of
// the embed defaults means the same).
var serverDefaults = server.Options{MaxConnections: server.DefaultMaxConnections, MaxConnsPerPeer: server.DefaultMaxConnsPerPeer,
	HandshakeTimeout: server.DefaultHandshakeTimeout, IdleTimeout: server.DefaultIdleTimeout, FrameTimeout: server.DefaultFrameTimeout,
	WriteTimeout: server.DefaultWriteTimeout, RequestMemory: server.DefaultRequestMemory}

// Without flags, the node's flags leave its config at the defaults; with
// every flag set, each value lands in its own field.
func TestNodeFlagsFillTheConfig(t *testing.T) {
	var cfg embed.NodeConfig
	var o clusterFlags
	parseFlags(t, nodeFlags(&cfg, &o))
	want := embed.DefaultNodeConfig()
	want.Server = serverDefaults
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", cfg, want)
	}

	cfg, o = embed.NodeConfig{}, clusterFlags{}
	parseFlags(t, nodeFlags(&cfg, &o), "--data", "d", "--listen", "l:1", "--containers", "7", "--cache-size", "1MiB",
		"--memory-limit", "300MiB", "--wal-file-size", "2MiB", "--wal-preallocate=false", "--checkpoint-bytes", "3MiB", "--reclaim-rate", "7MiB",
		"--zk", "a:1,b:2", "--zk-root", "/r", "--zk-session-timeout", "4s", "--id", "n9", "--advertise", "adv:2",
		"--tier2", "/t", "--tier-max-lag", "5s", "--tier-segment-bytes", "4MiB", "--tier-chunk-bytes", "5MiB",
		"--tier-max-untiered", "6MiB", "--tier-compress", "--tier-shutdown-flush", "6s",
		"--max-conns", "100", "--max-conns-per-peer", "10", "--handshake-timeout", "7s", "--idle-timeout", "8s",
		"--frame-timeout", "9s", "--write-timeout", "10s", "--request-memory", "64MiB", "--peer-request-memory", "32MiB",
		"--rate-windows", "1s,2s,3s,4s")
	want = embed.NodeConfig{
		RateWindows: [4]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
		DataDir:     "d", Listen: "l:1", Containers: 7, CacheSize: 1 << 20, MemoryLimit: 300 << 20, WALFileSize: 2 << 20, CheckpointBytes: 3 << 20, ReclaimRate: 7 << 20,
		Tier: embed.TierConfig{URI: "/t", MaxLag: 5 * time.Second, SegmentBytes: 4 << 20, ChunkBytes: 5 << 20,
			MaxUntiered: 6 << 20, Compress: true, ShutdownFlush: 6 * time.Second},
		Server: server.Options{MaxConnections: 100, MaxConnsPerPeer: 10, HandshakeTimeout: 7 * time.Second,
			IdleTimeout: 8 * time.Second, FrameTimeout: 9 * time.Second, WriteTimeout: 10 * time.Second,
			RequestMemory: 64 << 20, PeerRequestMemory: 32 << 20},
		Cluster: embed.ClusterConfig{Root: "/r", SessionTimeout: 4 * time.Second, ID: "n9", Advertise: "adv:2"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("every flag set:\n got %+v\nwant %+v", cfg, want)
	}
	if o.ZK != "a:1,b:2" {
		t.Fatalf("--zk %q", o.ZK)
	}
}

func TestControllerFlagsFillTheConfig(t *testing.T) {
	var cfg embed.ControllerConfig
	var o clusterFlags
	parseFlags(t, controllerFlags(&cfg, &o))
	want := embed.DefaultControllerConfig()
	want.API = embed.APIConfig{} // not a flag: runController sets it
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", cfg, want)
	}

	cfg, o = embed.ControllerConfig{}, clusterFlags{}
	parseFlags(t, controllerFlags(&cfg, &o), "--listen", "9", "--data", "d", "--node", "n:1", "--containers", "7",
		"--zk", "a:1", "--zk-root", "/r", "--zk-session-timeout", "4s", "--id", "c9", "--advertise", "adv:2", "--tier2", "/t", "--writer-timeout", "3m",
		"--autoscale-interval", "5s", "--autoscale-cooldown", "6s", "--autoscale-max-segments", "9", "--no-autoscale", "--autoscale-pending-timeout", "8m")
	want = embed.ControllerConfig{Listen: "9", DataDir: "d", Node: "n:1", Containers: 7, Tier2: "/t", WriterTimeout: 3 * time.Minute,
		AutoScale: controller.AutoScaleOptions{Off: true, Interval: 5 * time.Second, Cooldown: 6 * time.Second, MaxSegments: 9, PendingTimeout: 8 * time.Minute},
		Cluster:   embed.ClusterConfig{Root: "/r", SessionTimeout: 4 * time.Second, ID: "c9", Advertise: "adv:2"}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("every flag set:\n got %+v\nwant %+v", cfg, want)
	}
	// What the flags do not bind: a bare port, --zk, the API bounds.
	completeController(&cfg, &o, nil)
	if cfg.Listen != "127.0.0.1:9" || !reflect.DeepEqual(cfg.Cluster.Servers, []string{"a:1"}) || cfg.API != apiConfig() {
		t.Fatalf("completed: listen %q, servers %q, API %+v", cfg.Listen, cfg.Cluster.Servers, cfg.API)
	}
}

// The standalone's flags fill the node's and the controller's configs and
// leave the fields without a flag as they were.
func TestStandaloneFlagsFillTheConfig(t *testing.T) {
	cfg := embed.DefaultStandaloneConfig()
	parseFlags(t, standaloneFlags(&cfg, &s3Keys{}))
	want := embed.DefaultStandaloneConfig()
	want.Node.Server = serverDefaults
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", cfg, want)
	}
	parseFlags(t, standaloneFlags(&cfg, &s3Keys{}), "--data", "d", "--controller-addr", "c:1", "--node-addr", "n:2",
		"--containers", "7", "--cache-size", "1MiB", "--memory-limit", "300MiB", "--tier2", "none", "--max-conns", "100", "--writer-timeout", "2m", "--reclaim-rate", "0")
	want = embed.DefaultStandaloneConfig()
	want.Node.Server = serverDefaults
	want.DataDir, want.Controller.Listen, want.Node.Listen = "d", "c:1", "n:2"
	want.Node.Containers, want.Node.CacheSize, want.Node.Tier.URI, want.Node.Server.MaxConnections = 7, 1<<20, "none", 100
	want.Node.MemoryLimit, want.Node.ReclaimRate = 300<<20, 0
	want.Controller.WriterTimeout = 2 * time.Minute
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("flags set:\n got %+v\nwant %+v", cfg, want)
	}
}

// stoppedRole is a role that has already stopped serving: Err and Stop
// return what the test gives them.
type stoppedRole struct {
	err, stopErr error
	stopped      bool
}

func (r *stoppedRole) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (r *stoppedRole) Err() error { return r.err }
func (r *stoppedRole) Stop(context.Context) error {
	r.stopped = true
	return r.stopErr
}

// quietLogger logs nothing.
func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// cliContext is a command's context whose Context is ctx.
func cliContext(ctx context.Context) *cli.Context {
	c := cli.NewContext(&cli.App{}, flag.NewFlagSet("x", flag.ContinueOnError), nil)
	c.Context = ctx
	return c
}

// serveRole returns the error the role stopped with on its own before
// Stop's, Stop's when the role has none, and start's without stopping
// anything; it always stops a started role.
func TestServeRoleErrors(t *testing.T) {
	errServe, errStop, errStart := errors.New("serve"), errors.New("stop"), errors.New("start")
	quiet := quietLogger()
	for _, tt := range []struct {
		name string
		role *stoppedRole
		want error
	}{
		{"serve error first", &stoppedRole{err: errServe, stopErr: errStop}, errServe},
		{"then stop error", &stoppedRole{stopErr: errStop}, errStop},
		{"none", &stoppedRole{}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := serveRole(cliContext(t.Context()), "test", quiet, func(context.Context) (role, error) { return tt.role, nil })
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("serveRole: %v, want %v", err, tt.want)
			}
			if !tt.role.stopped {
				t.Fatal("the role was not stopped")
			}
		})
	}
	if err := serveRole(cliContext(t.Context()), "test", quiet, func(context.Context) (role, error) { return nil, errStart }); !errors.Is(err, errStart) {
		t.Fatalf("serveRole with a failed start: %v, want %v", err, errStart)
	}
}

// A real node served by serveRole stops cleanly once the command's
// context ends, and gets a context that ends with it.
func TestServeRoleStopsARealNodeAtTheEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cfg := embed.DefaultNodeConfig()
	cfg.DataDir, cfg.Listen, cfg.WALPreallocate = t.TempDir(), "127.0.0.1:0", false
	var n *embed.Node
	cfg.Logger = quietLogger()
	err := serveRole(cliContext(ctx), "node", cfg.Logger, func(rctx context.Context) (role, error) {
		var err error
		if n, err = embed.StartNode(rctx, cfg); err != nil {
			return nil, err
		}
		cancel() // the end of the command's context, as SIGTERM would be
		return n, nil
	})
	if err != nil {
		t.Fatalf("serveRole: %v", err)
	}
	select {
	case <-n.Done():
	default:
		t.Fatal("the node still serves after serveRole returned")
	}
}
