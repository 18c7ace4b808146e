package executor_test

import (
	"context"
	"net"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

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

// TestHDFSHeadTask runs a head task as the scheduler launches one
// (--role hdfs-gateway --health-addr 127.0.0.1:PORT) under the fake
// agent. A controller stands in for `sluice hdfs-gateway` (the child
// only has to run until killed) and the test's own listener for its RPC
// port, so no port is chosen and freed: RUNNING once the port accepts
// connections, KILLED on KILL.
func TestHDFSHeadTask(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed below
			}
			c.Close()
		}
	}()
	defer func() { l.Close(); <-accepting }()
	h := newHarness(t)
	h.launch("hdfs-head-0", "--role hdfs-gateway --health-interval 100ms --health-addr "+l.Addr().String()+" -- controller --listen 127.0.0.1:0 --data $MESOS_SANDBOX/meta --node 127.0.0.1:1")
	h.update(mesos.TASK_STARTING)
	running := h.update(mesos.TASK_RUNNING)
	if !strings.Contains(running.GetMessage(), "hdfs-gateway is healthy") {
		t.Fatalf("TASK_RUNNING message %q", running.GetMessage())
	}
	h.call(calls.Kill("hdfs-head-0", "a1"))
	h.update(mesos.TASK_KILLED)
	h.awaitTaskCompleted("hdfs-head-0")
}
