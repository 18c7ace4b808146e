// Package resttest starts the real pieces behind the controller's REST API
// for tests, through package embed as the binary does: a node on a
// temporary directory and a controller (bbolt store, Service, REST handler)
// served on 127.0.0.1. Everything stops at the end of the test.
package resttest

import (
	"context"
	"net/http"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/internal/nodetest"
	"github.com/sluice-streams/sluice/embed"
)

// QuietLogger returns a logger that writes nothing.
func QuietLogger() *logrus.Logger { return nodetest.QuietLogger() }

// StartNode runs a real node (4 containers) on a temporary directory,
// served on 127.0.0.1, and returns its address.
func StartNode(t testing.TB) string {
	t.Helper()
	return nodetest.Start(t)
}

// Controller is a controller served over HTTP for a test.
type Controller struct {
	URL     string        // http://127.0.0.1:PORT
	Store   cluster.Store // its metadata store
	Service *controller.Service
	Handler http.Handler // what URL serves, to call without a connection
}

// Option changes the embed.ControllerConfig of StartController.
type Option func(*embed.ControllerConfig)

// WithTier2 sets the controller's tier-2 URI (GET /v1/tier2).
func WithTier2(uri string) Option { return func(c *embed.ControllerConfig) { c.Tier2 = uri } }

// StartController runs a controller (embed.StartController) over a new
// bbolt store, with the node at nodeAddr, served on 127.0.0.1.
func StartController(t testing.TB, nodeAddr string, opts ...Option) *Controller {
	t.Helper()
	cfg := embed.DefaultControllerConfig()
	cfg.Listen, cfg.DataDir, cfg.Node, cfg.Containers = "127.0.0.1:0", t.TempDir(), nodeAddr, 4
	cfg.Logger, cfg.TxnSweepInterval, cfg.ResumeFirst = QuietLogger(), -1, true
	for _, opt := range opts {
		opt(&cfg)
	}
	c, err := embed.StartController(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("resttest: stop the controller: %v", err)
		}
	})
	return &Controller{URL: c.URL(), Store: c.Store(), Service: c.Service(), Handler: c.Handler()}
}

// Dump returns every key of st with its value, to compare the store before
// and after a request that must change nothing.
func Dump(t testing.TB, st cluster.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(key string)
	walk = func(key string) {
		kvs, err := st.List(context.Background(), key)
		if err != nil {
			t.Fatalf("List(%q): %v", key, err)
		}
		for _, kv := range kvs {
			out[kv.Key] = string(kv.Value)
			walk(kv.Key)
		}
	}
	walk("")
	return out
}
