// Package nodetest starts a real node for the controller's tests. It does
// not import controller, so the controller's own (internal) tests and
// resttest can both use it.
package nodetest

import (
	"io"
	"net"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/server"
)

// QuietLogger returns a logger that writes nothing.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// Start runs a real node (4 containers) on a temporary directory, served on
// 127.0.0.1, and returns its address. Cleanup stops both.
func Start(t testing.TB) string {
	t.Helper()
	n, err := node.Open(node.Config{Dir: t.TempDir(), Containers: 4, Logger: QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	srv := server.New(n, server.Options{Logger: QuietLogger()})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
		n.Close()
	})
	return l.Addr().String()
}
