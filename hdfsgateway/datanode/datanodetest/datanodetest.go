// Package datanodetest starts the HDFS head's DataNode server
// (hdfsgateway/datanode) for tests: on 127.0.0.1, a free port, closed
// when the test ends.
package datanodetest

import (
	"errors"
	"net"
	"testing"

	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/tier2/view"
)

// Start serves v's blocks with cfg on 127.0.0.1:0 until t ends, and
// returns the server and its address ("127.0.0.1:PORT"). The cleanup
// closes the server, waits for its goroutines and fails t if Serve
// returned anything but datanode.ErrClosed.
func Start(t testing.TB, v *view.View, cfg datanode.Config) (*datanode.Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := datanode.New(v, cfg)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, datanode.ErrClosed) {
			t.Errorf("datanode: Serve returned %v, want ErrClosed", err)
		}
	})
	return s, l.Addr().String()
}
