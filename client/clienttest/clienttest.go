// Package clienttest runs a whole Sluice deployment in the test's process
// for the client library's tests: a node (4 containers, temporary data
// directory) and a controller (bbolt store, Service, REST API), both on
// 127.0.0.1, started through package embed as `sluice standalone` does. The node can be stopped and started again on the same
// data directory and address, to test reconnection; with ThroughProxy the
// controller sends clients to a Proxy in front of the node that the test
// can freeze, to test a node that stops answering. Everything stops at the
// end of the test.
package clienttest

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/node/server"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Containers is the number of segment containers of the node.
const Containers = 4

// Deployment is a node and a controller running for one test.
type Deployment struct {
	// URL is the controller's base URL (http://127.0.0.1:PORT).
	URL string
	// NodeAddr is the node's address; it stays the same across
	// StopNode/StartNode.
	NodeAddr string
	// Controller is a REST client of URL.
	Controller *ctlclient.Client
	// Service is the controller itself.
	Service *controller.Service
	// Store is the controller's metadata store.
	Store cluster.Store

	// Proxy is the proxy in front of the node that the controller names
	// to clients (ThroughProxy), or nil.
	Proxy *Proxy

	t           testing.TB
	nodeDir     string
	rateWindows [4]time.Duration // the node's (zero: the default)

	mu      sync.Mutex
	node    *embed.Node
	running bool
}

// Quiet returns a logger that writes nothing.
func Quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// Option configures a Deployment (Start).
type Option func(*options)

type options struct {
	proxy                       bool
	markInterval, writerTimeout time.Duration
	rateWindows                 [4]time.Duration
	autoScale                   *controller.AutoScaleOptions
	txnSweep                    time.Duration
}

// WithWatermarks sets the controller's watermark interval and writer
// timeout (controller.Options.WatermarkInterval, WriterTimeout).
func WithWatermarks(interval, writerTimeout time.Duration) Option {
	return func(o *options) { o.markInterval, o.writerTimeout = interval, writerTimeout }
}

// WithAutoScale runs the node with rate windows (shortest first) and the
// controller's auto-scaler with opts, so tests see streams scale in
// seconds. It also runs the transaction sweeper (every 200 ms; off in
// other deployments), as a real controller does: a pending scale waits
// for the stream's open transactions, and one whose lease ran out is
// ended only by the sweeper.
func WithAutoScale(windows [4]time.Duration, opts controller.AutoScaleOptions) Option {
	return func(o *options) { o.rateWindows, o.autoScale, o.txnSweep = windows, &opts, 200*time.Millisecond }
}

// ThroughProxy puts a Proxy in front of the node (Deployment.Proxy) and
// makes the controller name the proxy as every segment's node, so that
// clients reach the node only through it. NodeAddr stays the node's own
// address.
func ThroughProxy() Option { return func(o *options) { o.proxy = true } }

// Start runs a node and a controller and stops both when the test ends.
func Start(t testing.TB, opts ...Option) *Deployment {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	d := &Deployment{t: t, nodeDir: filepath.Join(t.TempDir(), "node"), rateWindows: o.rateWindows}
	if err := d.startNode("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	d.NodeAddr = d.node.Addr()
	t.Cleanup(d.StopNode)
	advertised := d.NodeAddr
	if o.proxy {
		d.Proxy = NewProxy(t, d.NodeAddr)
		advertised = d.Proxy.Addr()
	}

	cfg := embed.DefaultControllerConfig()
	cfg.Listen, cfg.DataDir, cfg.Containers = "127.0.0.1:0", t.TempDir(), Containers
	cfg.Node, cfg.NodeAdvertise = d.NodeAddr, advertised
	cfg.Logger, cfg.TxnSweepInterval, cfg.ResumeFirst = Quiet(), -1, true
	cfg.WatermarkInterval, cfg.WriterTimeout = o.markInterval, o.writerTimeout
	cfg.AutoScale.Off = true // tests scale when they ask, unless WithAutoScale
	if o.autoScale != nil {
		cfg.AutoScale, cfg.TxnSweepInterval = *o.autoScale, o.txnSweep
	}
	ctl, err := embed.StartController(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctl.Stop(context.Background()); err != nil {
			t.Errorf("clienttest: stop the controller: %v", err)
		}
	})
	d.URL = ctl.URL()
	d.Service = ctl.Service()
	d.Store = ctl.Store()
	d.Controller = ctlclient.NewClient(d.URL)
	return d
}

// startNode starts the node role on the deployment's data directory,
// listening on addr.
func (d *Deployment) startNode(addr string) error {
	n, err := embed.StartNode(context.Background(), embed.NodeConfig{
		DataDir: d.nodeDir, Listen: addr, Containers: Containers, RateWindows: d.rateWindows,
		Logger: Quiet(), Server: server.Options{Logger: Quiet()},
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.node, d.running = n, true
	d.mu.Unlock()
	return nil
}

// StopNode closes the node's server (every connection breaks) and the node.
// Stopping a stopped node does nothing.
func (d *Deployment) StopNode() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running {
		return
	}
	d.running = false
	if err := d.node.Stop(context.Background()); err != nil {
		d.t.Errorf("clienttest: close node: %v", err)
	}
}

// StartNode starts the node again on its data directory and address. The
// address was freed by StopNode; listening is retried for up to 10 s in
// case the kernel holds it a moment longer.
func (d *Deployment) StartNode() {
	d.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := d.startNode(d.NodeAddr)
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			d.t.Fatalf("clienttest: start the node again on %s: %v", d.NodeAddr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the port, not synchronisation
	}
}

// CreateStream creates scope (if needed) and a stream of segments fixed
// segments.
func (d *Deployment) CreateStream(scope, stream string, segments int) {
	d.t.Helper()
	ctx := context.Background()
	if err := d.Controller.CreateScope(ctx, scope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		d.t.Fatal(err)
	}
	_, err := d.Controller.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(segments)}})
	if err != nil {
		d.t.Fatal(err)
	}
}

// AllowMerge lowers a fixed stream's minimum segment count to 1, so a test
// can merge it below the count it was created with (no scale goes below
// the minimum).
func (d *Deployment) AllowMerge(scope, stream string) {
	d.t.Helper()
	_, err := d.Controller.UpdateStream(context.Background(), scope, stream, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 1}})
	if err != nil {
		d.t.Fatal(err)
	}
}

// SealWhenIdle seals a stream that the auto-scaler may be scaling: the
// seal is refused (ErrConflict) while a scale workflow runs, so it is
// tried again until it passes or ctx ends.
func (d *Deployment) SealWhenIdle(ctx context.Context, scope, stream string) {
	d.t.Helper()
	for {
		err := d.Controller.SealStream(ctx, scope, stream)
		if err == nil {
			return
		}
		if !errors.Is(err, ctlclient.ErrConflict) || ctx.Err() != nil {
			d.t.Fatalf("clienttest: seal %s/%s: %v", scope, stream, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // the scale's next step
		}
	}
}

// Dial returns a new connection to the node, closed at the end of the test.
func (d *Deployment) Dial() *segclient.Conn {
	d.t.Helper()
	c, err := segclient.Dial(context.Background(), d.NodeAddr)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { c.Close() })
	return c
}

// ReadAll reads every event of segment from its start to its current
// durable end.
func (d *Deployment) ReadAll(conn *segclient.Conn, segment string) [][]byte {
	d.t.Helper()
	return ReadEvents(d.t, context.Background(), conn, segment)
}

// ReadEvents reads every event of segment, through conn to any node that
// serves it, from its start to its current durable end.
func ReadEvents(t testing.TB, ctx context.Context, conn *segclient.Conn, segment string) [][]byte {
	t.Helper()
	info, err := conn.GetSegmentInfo(ctx, segment)
	if err != nil {
		t.Fatalf("info %s: %v", segment, err)
	}
	var data []byte
	for off := info.StartOffset; off < info.Length; {
		r, err := conn.ReadSegment(ctx, segment, off, 1<<20, 0)
		if err != nil {
			t.Fatalf("read %s at %d: %v", segment, off, err)
		}
		n := 0
		for _, b := range r.Data {
			data = append(data, b...)
			n += len(b)
		}
		if n == 0 {
			break
		}
		off += int64(n)
	}
	var events [][]byte
	for len(data) > 0 {
		ev, rest, err := protocol.NextEvent(data)
		if err != nil {
			t.Fatalf("segment %s: %v", segment, err)
		}
		events = append(events, ev)
		data = rest
	}
	return events
}
