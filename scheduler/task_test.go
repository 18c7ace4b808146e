package scheduler

import (
	"os/exec"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

func TestTaskCommand(t *testing.T) {
	cfg := Config{
		ZK: []string{"zk1:2181", "zk2:2181"}, ZKRoot: "/dcos-service-a__b",
		Binary: "./sluice", ArtifactURI: "https://example.invalid/sluice.tgz",
		HDFSConfigURL: "http://hdfs/v1/endpoints/", Containers: 8, Tier2: "hdfs://nn:9001/dir?x=1&y='2'",
	}
	ep := Endpoint{TaskID: "node-1__2", Host: "agent-7", Port: 31005}
	node := plan.Op{Kind: plan.OpLaunch, Pod: "node-1", PodKind: plan.Node, TaskID: "node-1__2", Volume: &plan.Volume{ContainerPath: "wal"}}
	ci := cfg.TaskCommand(node, ep)
	if !ci.GetShell() {
		t.Fatal("not a shell command")
	}
	// The shell turns the command into exactly these arguments.
	out, err := exec.Command("/bin/sh", "-c", "MESOS_SANDBOX=/sb; set -- "+strings.TrimPrefix(ci.GetValue(), "./sluice ")+`; printf '%s\n' "$@"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"executor", "--role", "node", "--", "node", "--data", "/sb/wal",
		"--zk", "zk1:2181,zk2:2181", "--zk-root", "/dcos-service-a__b/cluster", "--id", "node-1",
		"--listen", "0.0.0.0:31005", "--advertise", "agent-7:31005", "--containers", "8",
		"--tier2", "hdfs://nn:9001/dir?x=1&y='2'"}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("arguments\n got %q\nwant %q", got, want)
	}
	var uris []string
	for _, u := range ci.URIs {
		uris = append(uris, u.Value)
	}
	if strings.Join(uris, " ") != "https://example.invalid/sluice.tgz http://hdfs/v1/endpoints/hdfs-site.xml http://hdfs/v1/endpoints/core-site.xml" || !ci.URIs[0].GetExtract() || ci.URIs[1].GetExtract() {
		t.Fatalf("uris %+v", ci.URIs)
	}

	ctrl := plan.Op{Kind: plan.OpLaunch, Pod: "controller-0", PodKind: plan.Controller, TaskID: "controller-0__1"}
	args := cfg.RoleArgs(ctrl, Endpoint{Host: "h", Port: 10080}, "")
	if args[0] != "controller" || strings.Contains(strings.Join(args, " "), "--data") || !strings.Contains(strings.Join(args, " "), "--advertise h:10080") {
		t.Fatalf("controller args %q", args)
	}
	ti := cfg.executorTask(ctrl, Endpoint{Host: "h", Port: 10080}, nil)
	if ti.Executor == nil || ti.Command != nil || ti.Executor.ExecutorID.Value != "controller-0__1" || ti.Executor.GetType() != mesos.ExecutorInfo_CUSTOM {
		t.Fatalf("task %+v", ti)
	}
}

func TestPortFrom(t *testing.T) {
	r := mesos.RANGES
	o := &mesos.Offer{Resources: []mesos.Resource{{Name: "ports", Type: &r, Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 31002}}}}}}
	used := map[int]bool{}
	for _, c := range []struct{ want, got int }{{0, 31000}, {0, 31001}, {31002, 31002}, {0, 0}, {10080, 10080}} {
		p, res := portFrom(o, c.want, used)
		if p != c.got || (res == nil) != (c.got == 0 || c.got == 10080) {
			t.Fatalf("portFrom(%d) = %d, %v; want %d", c.want, p, res, c.got)
		}
	}
}
