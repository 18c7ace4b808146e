package nfsexport

import (
	"net"
	"testing"

	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

func TestServeAfterClose(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := New(view.New(st, viewtest.NewCatalog(nil), view.Options{}), Config{})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(l); err != ErrClosed {
		t.Fatalf("Serve after Close: %v, want ErrClosed", err)
	}
	if _, err := l.Accept(); err == nil {
		t.Error("Serve after Close left the listener open")
	}
}
