package nfsexport

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// fixture is tier 2 in a temp dir, a view over it and a head serving it.
type fixture struct {
	st   *fs.Storage
	cat  *viewtest.Catalog
	v    *view.View
	srv  *Server
	port int
	cfg  Config // of the next start; its Logger is the test's
}

// newFixture starts a head over an empty tier 2 with the catalog m.
func newFixture(t testing.TB, m map[string][]string) *fixture {
	t.Helper()
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, cat: viewtest.NewCatalog(m)}
	f.v = view.New(st, f.cat, view.Options{CatalogTTL: -1})
	f.start(t)
	return f
}

// start (re)starts the head on a new port over the same tier 2.
func (f *fixture) start(t testing.TB) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(testWriter{t})
	cfg := f.cfg
	cfg.Logger = log
	srv := New(f.v, cfg)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != ErrClosed {
			t.Errorf("Serve: %v, want ErrClosed", err)
		}
	})
	f.srv, f.port = srv, l.Addr().(*net.TCPAddr).Port
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// url is the libnfs URL of path (under export "/") on the head.
func (f *fixture) url(path string) string {
	return fmt.Sprintf("nfs://127.0.0.1%s?version=3&nfsport=%d&mountport=%d&auto-traverse-mounts=0", path, f.port, f.port)
}

// run runs a client tool and returns its standard output; stderr goes to
// the error.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
