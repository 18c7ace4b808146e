// Package resttest starts the real pieces behind the controller's REST API
// for tests: a node on a temporary directory and a controller (bbolt store,
// Service, REST handler) served on 127.0.0.1. Everything stops at the end of
// the test.
package resttest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/internal/nodetest"
	"github.com/sluice-streams/sluice/controller/rest"
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

// Option changes the controller.Options of StartController.
type Option func(*controller.Options)

// WithTier2 sets the controller's tier-2 URI (GET /v1/tier2).
func WithTier2(uri string) Option { return func(o *controller.Options) { o.Tier2URI = uri } }

// StartController runs a controller over a new bbolt store, with the node
// at nodeAddr, served by rest.NewHandler on 127.0.0.1.
func StartController(t testing.TB, nodeAddr string, opts ...Option) *Controller {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "controller.db"))
	if err != nil {
		t.Fatal(err)
	}
	segs := controller.NewNodeSegments(controller.StaticLocator(nodeAddr))
	o := controller.Options{Logger: QuietLogger(), TxnSweepInterval: -1}
	for _, opt := range opts {
		opt(&o)
	}
	svc := controller.New(st, segs, o)
	h := rest.NewHandler(svc, QuietLogger(), rest.WithLocator(controller.StaticNode{Addr: nodeAddr, Containers: 4}))
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
		segs.Close()
		st.Close()
	})
	return &Controller{URL: srv.URL, Store: st, Service: svc, Handler: h}
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
