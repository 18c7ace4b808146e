package datanode_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode/datanodetest"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// TestCloseEndsConnectionsAndServe: Close returns once every connection,
// idle or half-way through a request, is closed, and Serve then returns
// ErrClosed; a closed server refuses Serve.
func TestCloseEndsConnectionsAndServe(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := view.New(st, viewtest.NewCatalog(nil), view.Options{})
	s, addr := datanodetest.Start(t, v, datanode.Config{})
	var conns []net.Conn
	for _, partial := range [][]byte{nil, {0}, {0, datanode.Version, datanode.OpReadBlock, 50}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(partial); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// A round trip on a fourth connection: once it is answered, the
	// server has accepted the three before it.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{0, 1, 2})
	if _, err := bufio.NewReader(c).ReadByte(); err != nil {
		t.Fatalf("no answer to a bad version: %v", err)
	}
	s.Close()
	if n := s.Conns(); n != 0 {
		t.Fatalf("%d connections open after Close", n)
	}
	for i, c := range conns {
		// EOF, or a reset if Close came before the server read what
		// the client had sent: closed either way.
		if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(l); !errors.Is(err, datanode.ErrClosed) {
		t.Fatalf("Serve after Close = %v", err)
	}
}
