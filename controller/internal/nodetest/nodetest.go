// Package nodetest starts a real node for the controller's tests, through
// embed/noderole, the node role's assembly. It does not import controller
// (nor package embed, which does), so the controller's own (internal)
// tests and resttest can both use it.
package nodetest

import (
	"context"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/embed/noderole"
	"github.com/sluice-streams/sluice/node/server"
)

// QuietLogger returns a logger that writes nothing.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// Start runs a real node (4 containers) on a temporary directory, served on
// 127.0.0.1, and returns its address. Cleanup stops it.
func Start(t testing.TB) string {
	t.Helper()
	n, err := noderole.Start(context.Background(), noderole.Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", Containers: 4,
		Logger: QuietLogger(), Server: server.Options{Logger: QuietLogger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(context.Background()); err != nil {
			t.Errorf("nodetest: stop the node: %v", err)
		}
	})
	return n.Addr()
}
