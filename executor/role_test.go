package executor_test

import (
	"context"
	"net"
	"testing"

	sluiceexec "github.com/sluice-streams/sluice/executor"
)

// TestHDFSHeadRole: the head role is known, names its RPC listen line,
// and is healthy when its port accepts a TCP connection.
func TestHDFSHeadRole(t *testing.T) {
	r := sluiceexec.RoleHDFSHead
	if !r.Valid() || r.ListenPrefix() != "hdfs head (rpc) listening on " || sluiceexec.Role("hdfs").Valid() {
		t.Fatalf("role %q: valid %v, prefix %q", r, r.Valid(), r.ListenPrefix())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			err = c.Close()
		}
		accepted <- err
	}()
	if err := sluiceexec.Probe(context.Background(), r, addr); err != nil {
		t.Fatalf("probe of a listening head: %v", err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	if err := sluiceexec.Probe(context.Background(), r, "127.0.0.1:1"); err == nil {
		t.Fatal("probe of a port nothing listens on succeeded")
	}
}
