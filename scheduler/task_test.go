package scheduler

import (
	"errors"
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

// TestHeadTaskCommand: a head's executor command (the full path is in
// TestHeads); without a controller URL the flag is left out rather than
// given empty.
func TestHeadTaskCommand(t *testing.T) {
	cfg := Config{Binary: "./sluice"}
	op := plan.Op{Kind: plan.OpLaunch, Pod: "hdfs-head-0", PodKind: plan.HDFSHead, TaskID: "hdfs-head-0__1"}
	ep := Endpoint{TaskID: "hdfs-head-0__1", Host: "agent-1", Port: 8020, DataPort: 9866, HTTPPort: 9870}
	ci := cfg.TaskCommand(op, ep)
	want := "./sluice executor --role hdfs-gateway --health-addr 127.0.0.1:8020 -- hdfs-gateway --rpc-addr 0.0.0.0:8020 --data-addr 0.0.0.0:9866 --http-addr 0.0.0.0:9870 --advertise agent-1"
	if ci.GetValue() != want {
		t.Fatalf("command\n got %s\nwant %s", ci.GetValue(), want)
	}
	ti := cfg.executorTask(op, ep, nil)
	if ti.Name != "hdfs-head-0" || ti.Executor.GetName() != "sluice-hdfs-gateway hdfs-head-0" {
		t.Fatalf("task %q, executor %q", ti.Name, ti.Executor.GetName())
	}
}

func TestHeadConfig(t *testing.T) {
	base := Config{Name: "s", Role: "r", User: "u", Master: "http://m:5050", ZK: []string{"zk:2181"}, ZKRoot: "/s", Containers: 1,
		Spec: plan.Spec{Controllers: 1, Nodes: 1, Heads: 1, Head: plan.Resources{CPUs: 1, MemMB: 512},
			Controller: plan.Resources{CPUs: 0.5, MemMB: 256}, Node: plan.Resources{CPUs: 1, MemMB: 512, DiskMB: 1024}}}
	if _, err := base.withDefaults(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Config){
		"negative heads":     func(c *Config) { c.Spec.Heads = -1 },
		"unknown disk type":  func(c *Config) { c.Spec.NodeDiskType = "SSD" },
		"no head cpus":       func(c *Config) { c.Spec.Head.CPUs = 0 },
		"same head ports":    func(c *Config) { c.HeadRPCPort, c.HeadHTTPPort = 8020, 8020 },
		"same data, http":    func(c *Config) { c.HeadDataPort, c.HeadHTTPPort = 9866, 9866 },
		"negative nfs heads": func(c *Config) { c.Spec.NFSHeads.Count = -1 },
		"nfs heads, no mem": func(c *Config) {
			c.Spec.NFSHeads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 1}}
		},
		"s3 heads, no cpus": func(c *Config) {
			c.Spec.S3Heads, c.S3Anonymous = plan.HeadSpec{Count: 1, Resources: plan.Resources{MemMB: 512}}, true
		},
		"s3 heads, no keys": func(c *Config) {
			c.Spec.S3Heads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 1, MemMB: 512}}
		},
		"malformed keys":      func(c *Config) { c.S3Credentials = "AKID:secret,AKID" },
		"key given twice":     func(c *Config) { c.S3Credentials = "AKID:secret,AKID:again" },
		"keys and secret":     func(c *Config) { c.S3Credentials, c.S3CredentialsSecret = "AKID:secret", "sluice/keys" },
		"nfs port = rpc port": func(c *Config) { c.HeadRPCPort, c.NFSHeadPort = 8020, 8020 },
		"s3 port = nfs port":  func(c *Config) { c.NFSHeadPort, c.S3HeadPort = 9000, 9000 },
		"s3 port = http port": func(c *Config) { c.HeadHTTPPort, c.S3HeadPort = 9000, 9000 },
		"negative s3 heads":   func(c *Config) { c.Spec.S3Heads.Count = -1 },
	} {
		c := base
		change(&c)
		if _, err := c.withDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	c := base
	c.Spec.Heads, c.Spec.Head = 0, plan.Resources{} // no heads: no resources needed
	if _, err := c.withDefaults(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Config){
		"s3 heads, keys":      func(c *Config) { c.S3Credentials = "AKID:secret, AKID2:s2" },
		"s3 heads, anonymous": func(c *Config) { c.S3Anonymous = true },
		"s3 heads, secret":    func(c *Config) { c.S3CredentialsSecret = "sluice/s3-credentials" },
	} {
		c := base
		c.Spec.S3Heads = plan.HeadSpec{Count: 2, Resources: plan.Resources{CPUs: 1, MemMB: 512}}
		c.Spec.NFSHeads = c.Spec.S3Heads
		c.HeadRPCPort, c.HeadDataPort, c.HeadHTTPPort, c.NFSHeadPort, c.S3HeadPort = 8020, 9866, 9870, 12049, 9000
		change(&c)
		if _, err := c.withDefaults(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
