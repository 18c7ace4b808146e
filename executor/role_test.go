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

// TestHeadRoles: the head roles are known, name their listen lines,
// and are healthy when their port accepts a TCP connection.
func TestHeadRoles(t *testing.T) {
	for r, prefix := range map[sluiceexec.Role]string{
		sluiceexec.RoleHDFSHead: "hdfs head (rpc) listening on ",
		sluiceexec.RoleNFSHead:  "nfs head listening on ",
		sluiceexec.RoleS3Head:   "s3 head listening on ",
	} {
		t.Run(string(r), func(t *testing.T) { testHeadRole(t, r, prefix) })
	}
	for _, r := range []sluiceexec.Role{"hdfs", "nfs", "s3", "nfs-gateway", "s3-export"} {
		if r.Valid() || r.IsHead() {
			t.Errorf("role %q is valid", r)
		}
	}
	if got := sluiceexec.RoleList(); got != "node, controller, hdfs-gateway, nfs-export or s3-gateway" {
		t.Errorf("RoleList %q", got)
	}
}

func testHeadRole(t *testing.T, r sluiceexec.Role, prefix string) {
	if !r.Valid() || !r.IsHead() || r.ListenPrefix() != prefix {
		t.Fatalf("role %q: valid %v, head %v, prefix %q", r, r.Valid(), r.IsHead(), r.ListenPrefix())
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

// TestHeadTasks runs a task of each head role as the scheduler launches
// one (--role hdfs-gateway|nfs-export|s3-gateway --health-addr
// 127.0.0.1:PORT) under the fake agent. A controller stands in for the
// head's command (the child only has to run until killed) and the
// test's own listener for its port, so no port is chosen and freed:
// RUNNING once the port accepts connections, KILLED on KILL.
func TestHeadTasks(t *testing.T) {
	for pod, role := range map[string]string{"hdfs-head-0": "hdfs-gateway", "nfs-head-0": "nfs-export", "s3-head-0": "s3-gateway"} {
		t.Run(role, func(t *testing.T) { testHeadTask(t, pod, role) })
	}
}

func testHeadTask(t *testing.T, pod, role string) {
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
	h.launch(pod, "--role "+role+" --health-interval 100ms --health-addr "+l.Addr().String()+" -- controller --listen 127.0.0.1:0 --data $MESOS_SANDBOX/meta --node 127.0.0.1:1")
	h.update(mesos.TASK_STARTING)
	running := h.update(mesos.TASK_RUNNING)
	if !strings.Contains(running.GetMessage(), role+" is healthy") {
		t.Fatalf("TASK_RUNNING message %q", running.GetMessage())
	}
	h.call(calls.Kill(pod, "a1"))
	h.update(mesos.TASK_KILLED)
	h.awaitTaskCompleted(pod)
}
