package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol/api"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// cli runs the binary under test to completion with stdin and returns
// its stdout; it fails the test on a non-zero exit.
func cli(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := tryCLI(stdin, args...)
	if err != nil {
		t.Fatalf("sluice %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func tryCLI(stdin string, args ...string) (string, error) {
	cmd := exec.Command(sluiceBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v; stderr %q", err, stderr.String())
	}
	return stdout.String(), nil
}

// rolePID finds the process of `sluice node|controller ... --id id` (the
// executor's child) in /proc.
func rolePID(role, id string) (int, bool) {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 2 || args[0] != sluiceBin || args[1] != role {
			continue
		}
		for i := 2; i+1 < len(args); i++ {
			if args[i] == "--id" && args[i+1] == id {
				return pid, true
			}
		}
	}
	return 0, false
}

func controllerNodes(url string) (api.NodeList, error) {
	var l api.NodeList
	resp, err := http.Get(url + "/v1/nodes")
	if err != nil {
		return l, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return l, fmt.Errorf("GET /v1/nodes: %s", resp.Status)
	}
	return l, json.NewDecoder(resp.Body).Decode(&l)
}

// events returns n distinct event lines starting at from.
func events(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("event-%04d", from+i)
	}
	return out
}

// TestMesosFramework is the scheduler issue's proof, on the fake Mesos
// master (no real Mesos runs here): `sluice scheduler` deploys a
// controller and two nodes, each a real `sluice executor` supervising
// the real role process; events are written and read through the
// controller the scheduler reports; a node is killed with SIGKILL and
// relaunched in place on its volume (every acknowledged event is read
// back); the nodes are raised to 3 and lowered to 2 with `sluice cluster
// nodes --set`, the removed node drained through tier 2 before its task
// is killed; every event is still read back exactly once.
func TestMesosFramework(t *testing.T) {
	zk := clustertest.StartZooKeeper(t)
	// The S3 head's keys are a secret in the agents' store: the scheduler
	// names it, the agent resolves it into the head's environment.
	const s3SecretPath, s3Secret = "sluice/s3-credentials", "mesos-e2e-Secret"
	// Seven ports an agent: a controller, a node, an NFS head or an S3
	// head takes one, an HDFS head three.
	m := fakeMesos(t, mesostest.Auth{}, 3, 7)
	m.SetSecret(s3SecretPath, "AKMESOS:"+s3Secret)
	tier2 := t.TempDir()
	startScheduler := func() (*proctest.Proc, *scheduler.Client, string) {
		t.Helper()
		return startMesosScheduler(t, "scheduler", m, zk, nil,
			"--name", "sluice", "--role", "sluice-role", "--principal", "sluice-principal", "--zk-root", "/dcos-service-sluice",
			"--nodes", "2", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-disk-type", "ROOT", "--node-port", "0",
			"--containers", "4", "--tier2", "file://"+tier2, "--hdfs-config-url", "",
			// One HDFS head, the real `sluice hdfs-gateway` under the executor,
			// on ports from the offers.
			"--heads", "1", "--head-cpus", "0.5", "--head-mem", "256",
			"--head-rpc-port", "0", "--head-data-port", "0", "--head-http-port", "0",
			// And one NFS and one S3 head, likewise; the S3 head's keys
			// are the secret's.
			"--nfs-heads", "1", "--nfs-head-cpus", "0.25", "--nfs-head-mem", "128", "--nfs-head-port", "0",
			"--s3-heads", "1", "--s3-head-cpus", "0.25", "--s3-head-mem", "128", "--s3-head-port", "0",
			"--s3-credentials-secret", s3SecretPath)
	}
	sched, sc, _ := startScheduler()
	ctx := context.Background()
	deployed := func() (bool, string) {
		p, err := sc.Plan(ctx)
		if err != nil {
			return false, err.Error()
		}
		if _, err := sc.Health(ctx); err != nil {
			return false, err.Error()
		}
		return p.Status == plan.Complete, fmt.Sprintf("%+v", p)
	}
	waitFor(t, "deployed", 2*waitTimeout, deployed)
	eps, err := sc.Endpoints(ctx)
	if err != nil || len(eps.Controllers) != 1 || len(eps.Nodes) != 2 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}
	ctl := eps.Controllers[0]
	waitFor(t, "both nodes registered", waitTimeout, nodesLive(ctl, 2))

	cli(t, "", "--controller", ctl, "scope", "create", "e2e")
	cli(t, "", "--controller", ctl, "stream", "create", "e2e/s", "--segments", "4")
	var written []string
	write := func(evs []string) {
		t.Helper()
		cli(t, strings.Join(evs, "\n")+"\n", "--controller", ctl, "write", "e2e/s", "--timeout", "60s")
		written = append(written, evs...)
	}
	readAll := func(what string) {
		t.Helper()
		out := cli(t, "", "--controller", ctl, "read", "e2e/s", "--max", strconv.Itoa(len(written)), "--timeout", "20s")
		got := strings.Fields(out)
		sort.Strings(got)
		want := append([]string(nil), written...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: read %d events, wrote %d; first difference in\n got %v\nwant %v", what, len(got), len(want), got, want)
		}
	}
	write(events(0, 200))
	readAll("after the deploy")

	// The HDFS head the scheduler launched serves the stream's directory
	// over hdfs:// (NameNode RPC) and webhdfs://.
	if len(eps.HDFS) != 1 || len(eps.WebHDFS) != 1 {
		t.Fatalf("HDFS head endpoints %v %v, want one each", eps.HDFS, eps.WebHDFS)
	}
	headStatus(t, eps.HDFS[0], eps.WebHDFS[0], "/e2e/s")
	// The NFS and S3 heads it launched serve the same tree: nfs-ls lists
	// the scope's stream, the AWS CLI the scope's bucket.
	if len(eps.NFS) != 1 || len(eps.S3) != 1 {
		t.Fatalf("NFS and S3 head endpoints %v %v, want one each", eps.NFS, eps.S3)
	}
	nfsAddr := strings.TrimSuffix(strings.TrimPrefix(eps.NFS[0], "nfs://"), "/")
	if out, err := run(t, "nfs-ls", nfsURL(nfsAddr, "/e2e")); err != nil || !strings.Contains(string(out), " s\n") {
		t.Fatalf("nfs-ls /e2e through the NFS head: %q, %v; want stream s", out, err)
	}
	signed := []string{"AWS_ACCESS_KEY_ID=AKMESOS", "AWS_SECRET_ACCESS_KEY=" + s3Secret, "AWS_DEFAULT_REGION=us-east-1"}
	if out, err := runEnv(t, signed, awsCLI(t), "s3", "ls", "--endpoint-url", eps.S3[0]); err != nil || !strings.Contains(string(out), " e2e\n") {
		t.Fatalf("aws s3 ls through the S3 head, signed with the secret's key: %q, %v; want bucket e2e", out, err)
	}
	if _, err := run(t, awsCLI(t), "s3", "ls", "--endpoint-url", eps.S3[0], "--no-sign-request"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("an unsigned listing of the S3 head: %v; want AccessDenied", err)
	}
	// What Mesos shows of the head's executor (its CommandInfo) names the
	// secret and does not hold it.
	for _, tv := range m.Tasks() {
		b, err := tv.Command.Marshal()
		if err != nil || bytes.Contains(b, []byte(s3Secret)) {
			t.Fatalf("task %s's CommandInfo holds the S3 secret (%v)", tv.ID, err)
		}
	}

	// kill -9 node-0's process: relaunched in place, on its volume.
	before, _ := sc.Pods(ctx)
	var node0 scheduler.PodInfo
	for _, p := range before {
		if p.Name == "node-0" {
			node0 = p
		}
	}
	pid, ok := rolePID("node", "node-0")
	if !ok {
		t.Fatal("node-0's process not found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-0 relaunched", 2*waitTimeout, func() (bool, string) {
		ps, err := sc.Pods(ctx)
		if err != nil {
			return false, err.Error()
		}
		for _, p := range ps {
			if p.Name == "node-0" {
				return p.TaskID != node0.TaskID && p.State == plan.TaskRunning, fmt.Sprintf("%+v", p)
			}
		}
		return false, "no node-0"
	})
	after, _ := sc.Pods(ctx)
	for _, p := range after {
		if p.Name == "node-0" && p.AgentID != node0.AgentID {
			t.Fatalf("node-0 moved from %s to %s", node0.AgentID, p.AgentID)
		}
		if p.Name != "node-0" {
			for _, b := range before {
				if b.Name == p.Name && b.TaskID != p.TaskID {
					t.Fatalf("%s was relaunched too: %s -> %s", p.Name, b.TaskID, p.TaskID)
				}
			}
		}
	}
	readAll("after node-0's kill -9")

	// A new scheduler resumes from ZooKeeper: same framework, same tasks.
	fwID := m.FrameworkID()
	sched.Stop(t, waitTimeout)
	sched, sc, api := startScheduler()
	waitFor(t, "the new scheduler reconciled", 2*waitTimeout, deployed)
	resumed, err := sc.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range resumed {
		if p.TaskID != after[i].TaskID || p.Name != after[i].Name {
			t.Fatalf("after the scheduler's restart %s has task %s, had %s", p.Name, p.TaskID, after[i].TaskID)
		}
	}
	if m.FrameworkID() != fwID {
		t.Fatalf("framework %s after the restart, was %s", m.FrameworkID(), fwID)
	}
	write(events(200, 100))

	// A writer and a reader keep going through the scaling below.
	cli(t, "", "--controller", ctl, "stream", "create", "e2e/live", "--segments", "8")
	cl, err := client.New(ctx, ctl)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ld := startLoad(t, ctx, cl, "e2e", "live")
	ld.progress("before scaling")

	// Raise to 3 nodes: the controller rebalances onto node-2.
	cli(t, "", "cluster", "nodes", "--set", "3", "--scheduler", api)
	waitFor(t, "node-2 running", 2*waitTimeout, deployed)
	waitFor(t, "node-2 given containers", 2*waitTimeout, func() (bool, string) {
		l, err := controllerNodes(ctl)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range l.Nodes {
			if n.ID == "node-2" && n.Live && len(n.Containers) > 0 && len(n.Moving) == 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", l)
	})
	ld.progress("after raising to 3 nodes")
	write(events(300, 100))
	readAll("after raising to 3 nodes")

	// Lower to 2: node-2 is drained (its containers handed over through
	// tier 2), then its task killed and its volume released.
	out := cli(t, "", "cluster", "nodes", "--set", "2", "--timeout", "2m", "--scheduler", api)
	if !strings.Contains(out, "node-2: draining") || !strings.Contains(out, "node-2: removed") || !strings.Contains(out, "nodes: 2") {
		t.Fatalf("nodes --set 2 printed:\n%s", out)
	}
	l, err := controllerNodes(ctl)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range l.Nodes {
		if n.ID == "node-2" && len(n.Containers) > 0 {
			t.Fatalf("node-2 still holds containers: %+v", n)
		}
	}
	if _, ok := rolePID("node", "node-2"); ok {
		t.Fatal("node-2's process still runs")
	}
	readAll("after lowering to 2 nodes")
	ld.progress("after lowering to 2 nodes")
	total, wait := ld.finish(ctx)
	t.Logf("e2e/live: %d events written while scaling, each read once and in order per key; the longest wait for one ack was %v", total, wait)
	write(events(400, 50))
	readAll("after writing to 2 nodes again")
	sched.Stop(t, waitTimeout)
}

// headStatus checks that the HDFS head at hdfsURL and webURL shows dir as
// a read-only directory, through Go's HDFS client (NameNode RPC) and
// WebHDFS's GETFILESTATUS.
func headStatus(t *testing.T, hdfsURL, webURL, dir string) {
	t.Helper()
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{strings.TrimPrefix(hdfsURL, "hdfs://")}, User: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fi, err := c.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o555 {
		t.Fatalf("hdfs stat %s through the head: %v, %v", dir, fi, err)
	}
	if err := c.Mkdir(dir+"/x", 0o755); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("mkdir through the head: %v, want permission denied", err)
	}
	resp, err := http.Get("http://" + strings.TrimPrefix(webURL, "webhdfs://") + "/webhdfs/v1" + dir + "?op=GETFILESTATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		FileStatus struct{ Type, Permission string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 ||
		st.FileStatus.Type != "DIRECTORY" || st.FileStatus.Permission != "555" {
		t.Fatalf("webhdfs GETFILESTATUS %s: %d %+v %v", dir, resp.StatusCode, st, err)
	}
}
