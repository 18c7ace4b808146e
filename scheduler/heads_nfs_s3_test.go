package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// testSecret is the S3 heads' secret key in these tests: it must reach
// the S3 head tasks' environment and nothing else.
const testSecret = "s3cr3t-Never-Stored"

// envStandIn is a TaskBuilder for the NFS and S3 heads: it records the
// executor command line the scheduler would run (TaskCommand) and runs
// a stand-in with that command's environment, which writes its
// S3CredentialsEnv (or "unset") to env.txt in its sandbox and sleeps.
// Other pods get the plain stand-in.
type envStandIn struct{ *commands }

func (r envStandIn) build(op plan.Op, ep Endpoint, res mesos.Resources) mesos.TaskInfo {
	if op.PodKind != plan.NFSHead && op.PodKind != plan.S3Head {
		return standIn(op, ep, res)
	}
	ci := r.record(op, ep)
	sh := true
	cmd := `printf '%s' "${` + S3CredentialsEnv + `-unset}" > env.tmp && mv env.tmp env.txt && exec sleep 600`
	return mesos.TaskInfo{Resources: res, Command: &mesos.CommandInfo{Shell: &sh, Value: &cmd, Environment: ci.Environment}}
}

// taskEnv waits for the stand-in of a running task to have written its
// S3CredentialsEnv, and returns it.
func taskEnv(t *testing.T, m *mesostest.Master, taskID string) string {
	t.Helper()
	var got string
	eventually(t, "env.txt of "+taskID, func() bool {
		tv, ok := m.Task(taskID)
		if !ok || tv.Sandbox == "" {
			return false
		}
		b, err := os.ReadFile(filepath.Join(tv.Sandbox, "env.txt"))
		got = string(b)
		return err == nil
	})
	return got
}

// lockedBuffer is a log sink read while the driver writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNFSAndS3Heads deploys a controller, a node, an NFS head and an S3
// head on the fake master, each head on its fixed port offered by every
// agent: both are launched once the controller runs with their command
// lines (nfs-export, s3-gateway --listen) and health probes, the S3 head
// (only) gets the scheduler's access keys in its environment, and the
// pods, plan and endpoints name nfs:// and http:// addresses. A failed
// NFS head is relaunched; the counts go up (one head of a kind per
// agent) and down to none through the API the CLI calls. The secret is
// in no znode of the service and in no log line, at debug level.
func TestNFSAndS3Heads(t *testing.T) {
	h := newHarness(t, 0)
	ps := porttest.Ports(t, 3)
	nodePort, nfsPort, s3Port := ps[0], ps[1], ps[2]
	addPortAgents(t, h, 2, h.ctrl.port, nodePort, nfsPort, s3Port)
	logs := &lockedBuffer{}
	log := logrus.New()
	log.SetLevel(logrus.DebugLevel)
	log.SetOutput(logs)
	h.cfg.Logger = log
	h.cfg.Spec.Nodes = 1
	h.cfg.Spec.NFSHeads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	h.cfg.Spec.S3Heads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	h.cfg.NodePort, h.cfg.NFSHeadPort, h.cfg.S3HeadPort = nodePort, nfsPort, s3Port
	h.cfg.S3Credentials = "AKIDONE:" + testSecret + ",AKIDTWO:other"
	h.cfg.Binary = "./sluice"
	rec := envStandIn{newCommands(h.cfg)}
	h.cfg.Build = rec.build
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))

	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	pods := r.pods(t)
	nfs, s3 := pods["nfs-head-0"], pods["s3-head-0"]
	if nfs.Kind != plan.NFSHead || nfs.State != plan.TaskRunning || nfs.Endpoint != addr(nfsPort) || nfs.URL != "nfs://"+addr(nfsPort)+"/" || nfs.Controller != h.ctrl.srv.URL {
		t.Fatalf("nfs head pod %+v", nfs)
	}
	if s3.Kind != plan.S3Head || s3.State != plan.TaskRunning || s3.Endpoint != addr(s3Port) || s3.URL != "http://"+addr(s3Port) || s3.Controller != h.ctrl.srv.URL {
		t.Fatalf("s3 head pod %+v", s3)
	}
	for _, c := range []struct {
		pod  PodInfo
		port int
		args []string
		env  string
	}{
		{nfs, nfsPort, []string{"executor", "--role", "nfs-export", "--health-addr", addr(nfsPort), "--",
			"nfs-export", "--controller", h.ctrl.srv.URL, "--listen", "0.0.0.0:" + strconv.Itoa(nfsPort)}, "unset"},
		{s3, s3Port, []string{"executor", "--role", "s3-gateway", "--health-addr", addr(s3Port), "--",
			"s3-gateway", "--controller", h.ctrl.srv.URL, "--listen", "0.0.0.0:" + strconv.Itoa(s3Port)}, h.cfg.S3Credentials},
	} {
		tv, ok := h.m.Task(c.pod.TaskID)
		if !ok || tv.State != mesos.TASK_RUNNING {
			t.Fatalf("master has %+v", tv)
		}
		if got := taskPorts(tv.Resources); fmt.Sprint(got) != fmt.Sprint([]int{c.port}) {
			t.Fatalf("%s ports %v, want [%d]", c.pod.Name, got, c.port)
		}
		if got := rec.args(t, c.pod.TaskID); strings.Join(got, "|") != strings.Join(c.args, "|") {
			t.Fatalf("%s command\n got %q\nwant %q", c.pod.Name, got, c.args)
		}
		if got := taskEnv(t, h.m, c.pod.TaskID); got != c.env {
			t.Fatalf("%s: %s in the task = %q, want %q", c.pod.Name, S3CredentialsEnv, got, c.env)
		}
	}
	ctx := context.Background()
	eps, err := r.c.Endpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(eps.NFS) != "[nfs://"+addr(nfsPort)+"/]" || fmt.Sprint(eps.S3) != "[http://"+addr(s3Port)+"]" || len(eps.HDFS) != 0 {
		t.Fatalf("endpoints %+v", eps)
	}
	prog, err := r.c.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range prog.Phases {
		names = append(names, ph.Name)
	}
	if strings.Join(names, " ") != "controllers nodes nfs-heads s3-heads" ||
		fmt.Sprint(prog.Phases[2].Steps[0].Addresses) != "[nfs://"+addr(nfsPort)+"/]" || fmt.Sprint(prog.Phases[3].Steps[0].Addresses) != "[http://"+addr(s3Port)+"]" {
		t.Fatalf("plan %+v", prog)
	}

	// A failed NFS head is relaunched (anywhere: it has no volume).
	if err := h.m.FailTask(nfs.TaskID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "nfs head relaunched", func() bool {
		p := r.pods(t)["nfs-head-0"]
		return p.TaskID != nfs.TaskID && p.State == plan.TaskRunning
	})

	// Up to two of each: one of a kind per agent; the second S3 head
	// gets the keys too.
	if _, err := r.c.SetCounts(ctx, CountsRequest{NFSHeads: ptr(2), S3Heads: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two heads of each kind", r.complete(t))
	pods = r.pods(t)
	for _, k := range []string{"nfs-head", "s3-head"} {
		a, b := pods[k+"-0"], pods[k+"-1"]
		if a.State != plan.TaskRunning || b.State != plan.TaskRunning || a.AgentID == b.AgentID {
			t.Fatalf("%ss %+v %+v", k, a, b)
		}
	}
	if got := taskEnv(t, h.m, pods["s3-head-1"].TaskID); got != h.cfg.S3Credentials {
		t.Fatalf("s3-head-1's keys %q", got)
	}
	if eps, err := r.c.Endpoints(ctx); err != nil || len(eps.NFS) != 2 || len(eps.S3) != 2 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}

	// Down to none: killed, gone, no head phases.
	if _, err := r.c.SetCounts(ctx, CountsRequest{NFSHeads: ptr(0), S3Heads: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "heads removed", func() bool {
		ps := r.pods(t)
		for _, n := range []string{"nfs-head-0", "nfs-head-1", "s3-head-0", "s3-head-1"} {
			if _, ok := ps[n]; ok {
				return false
			}
		}
		return true
	})
	for _, n := range []string{"nfs-head-0", "nfs-head-1", "s3-head-0", "s3-head-1"} {
		if tv, ok := h.m.Task(pods[n].TaskID); ok && tv.State == mesos.TASK_RUNNING {
			t.Fatalf("head task %s still runs", tv.ID)
		}
	}
	if prog, err := r.c.Plan(ctx); err != nil || len(prog.Phases) != 2 || prog.Status != plan.Complete {
		t.Fatalf("plan without heads %+v, %v", prog, err)
	}
	for _, bad := range []CountsRequest{{NFSHeads: ptr(-1)}, {S3Heads: ptr(-1)}} {
		if err := second(r.c.SetCounts(ctx, bad)); err == nil || !strings.Contains(err.Error(), "400") {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if errs := h.m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}

	// The secret is in no znode of the service, and was never logged.
	kv := noSecretStored(t, h.cfg.ZKRoot, testSecret, "AKIDONE")
	if p, err := plan.Unmarshal(kv.Value); err != nil || p.Spec().S3Heads.Count != 0 || p.Spec().NFSHeads.Resources.CPUs != 0.25 {
		t.Fatalf("stored plan %+v, %v", p, err)
	}
	r.stop(t)
	if out := logs.String(); strings.Contains(out, testSecret) || !strings.Contains(out, "s3-head-0") {
		t.Fatalf("the log holds the secret, or is not the one written:\n%s", out)
	}
}

// noSecretStored fails t if a znode under the service's root holds one
// of secrets, and returns the stored plan.
func noSecretStored(t *testing.T, root string, secrets ...string) cluster.KV {
	t.Helper()
	ctx := context.Background()
	zst, err := zkstore.Open([]string{zkAddr}, root, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zst.Close()
	checked := 0
	var walk func(key string)
	walk = func(key string) {
		kvs, err := zst.List(ctx, key)
		if err != nil {
			t.Fatalf("list %q: %v", key, err)
		}
		for _, kv := range kvs {
			checked++
			for _, sec := range secrets {
				if bytes.Contains(kv.Value, []byte(sec)) {
					t.Fatalf("znode %s holds the S3 credentials", kv.Key)
				}
			}
			walk(kv.Key)
		}
	}
	walk("")
	kv, err := zst.Get(ctx, keyPlan)
	if err != nil || checked < 3 {
		t.Fatalf("walked %d znodes; plan: %v", checked, err)
	}
	return kv
}

// TestS3HeadKeysFromSecret: with S3CredentialsSecret an S3 head's
// S3CredentialsEnv is a Mesos SECRET variable referring to the secret:
// the task's CommandInfo (what Mesos shows in its state endpoints and
// checkpoints) holds the reference and not the keys, the agent's secret
// resolver puts the keys in the head's environment, and neither the
// stored state nor the log holds them. Keys given both ways are refused.
func TestS3HeadKeysFromSecret(t *testing.T) {
	const secretPath = "sluice/s3-credentials"
	keys := "AKIDONE:" + testSecret
	h := newHarness(t, 0)
	// Ports for the controller, the node and the S3 head: a task is
	// launched only with the ports its offer holds.
	if err := h.m.AddAgent(mesostest.AgentSpec{ID: "a0", Hostname: "127.0.0.1", CPUs: 4, MemMB: 4096, DiskMB: 4096, Ports: portRanges(append([]int{h.ctrl.port}, porttest.Ports(t, 2)...)...)}); err != nil {
		t.Fatal(err)
	}
	h.m.SetSecret(secretPath, keys)
	logs := &lockedBuffer{}
	log := logrus.New()
	log.SetLevel(logrus.DebugLevel)
	log.SetOutput(logs)
	h.cfg.Logger = log
	h.cfg.Spec.Nodes = 1
	h.cfg.Spec.S3Heads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	h.cfg.S3CredentialsSecret = secretPath

	both := h.cfg
	both.S3Credentials = keys
	if _, err := New(both); !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("keys given both ways: %v", err)
	}

	rec := envStandIn{newCommands(h.cfg)}
	h.cfg.Build = rec.build
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))
	s3 := r.pods(t)["s3-head-0"]
	if got := taskEnv(t, h.m, s3.TaskID); got != keys {
		t.Fatalf("%s in the S3 head = %q, want the secret's content", S3CredentialsEnv, got)
	}
	tv, ok := h.m.Task(s3.TaskID)
	if !ok {
		t.Fatalf("no task %s", s3.TaskID)
	}
	if b, err := tv.Command.Marshal(); err != nil || bytes.Contains(b, []byte(testSecret)) || bytes.Contains(b, []byte("AKIDONE")) {
		t.Fatalf("the S3 head's CommandInfo holds the keys: %+v (%v)", tv.Command, err)
	}
	var v *mesos.Environment_Variable
	for i, ev := range tv.Command.GetEnvironment().GetVariables() {
		if ev.Name == S3CredentialsEnv {
			v = &tv.Command.Environment.Variables[i]
		}
	}
	if v == nil || v.GetType() != mesos.Environment_Variable_SECRET || v.Value != nil ||
		v.GetSecret().GetType() != mesos.Secret_REFERENCE || v.GetSecret().GetReference().GetName() != secretPath {
		t.Fatalf("the S3 head's %s = %+v, want a SECRET variable referring to %s", S3CredentialsEnv, v, secretPath)
	}
	noSecretStored(t, h.cfg.ZKRoot, testSecret, "AKIDONE")
	r.stop(t)
	if out := logs.String(); strings.Contains(out, testSecret) || !strings.Contains(out, "s3-head-0") {
		t.Fatalf("the log holds the secret, or is not the one written:\n%s", out)
	}
}

// TestS3HeadsNeedCredentials: S3 heads with neither access keys nor
// anonymous access are refused at start, from the command line or from
// a stored plan, and raising them through the API is refused; with
// --s3-anonymous the head gets --anonymous and no keys.
func TestS3HeadsNeedCredentials(t *testing.T) {
	h := newHarness(t, 1)
	cfg := h.cfg
	cfg.Spec.S3Heads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	if _, err := New(cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), S3CredentialsEnv) || !strings.Contains(err.Error(), "--s3-anonymous") {
		t.Fatalf("S3 heads without keys: %v", err)
	}
	cfg.S3Credentials = "AKID" // no secret
	if _, err := New(cfg); !errors.Is(err, ErrConfig) {
		t.Fatalf("keys without a secret: %v", err)
	}
	cfg.S3Credentials = "AKID:" + testSecret + ",:x"
	if _, err := New(cfg); !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("an empty access key: %v", err)
	}

	for _, c := range []struct{ keys, says string }{
		// Every S3 head refuses these at start; the scheduler must not
		// launch heads that exit and are relaunched for ever.
		{"AKID:" + testSecret + ",AKID:b", "line 1, pair 2: the access key is given twice"},
		{"AKID:a\nAKID:" + testSecret, "line 2, pair 1: the access key is given twice"},
		{"AK/ID:" + testSecret, "line 1, pair 1: the access key holds '/'"},
		{"AK ID:" + testSecret, "line 1, pair 1: the access key holds '/', a space"},
		// Written SECRET:ACCESS: the secret sits where the key belongs.
		{testSecret + "/x:AKID", "the access key holds '/'"},
	} {
		cfg.S3Credentials = c.keys
		_, err := New(cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), S3CredentialsEnv) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), testSecret) {
			t.Errorf("keys %q: %v; want ErrConfig naming %s and saying %s, without the secret", strings.ReplaceAll(c.keys, testSecret, "<secret>"), err, S3CredentialsEnv, c.says)
		}
	}

	// A stored plan that wants an S3 head, a scheduler without keys.
	p := plan.New(plan.Spec{Framework: "sluice", Role: "sluice", Controllers: 1, Nodes: 2,
		Controller: h.cfg.Spec.Controller, Node: h.cfg.Spec.Node, S3Heads: cfg.Spec.S3Heads})
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	zst := openStore(t, h)
	if _, err := zst.Create(context.Background(), keyPlan, b); err != nil {
		t.Fatal(err)
	}
	d, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Run(ctx); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "1 S3 heads") {
		t.Fatalf("Run with a stored plan wanting S3 heads and no keys: %v", err)
	}

	// Raising them through the API, from none.
	if err := zst.Delete(context.Background(), keyPlan, cluster.AnyVersion); err != nil {
		t.Fatal(err)
	}
	h.cfg.Spec.S3Heads.Resources = plan.Resources{CPUs: 0.25, MemMB: 128}
	r := h.start("s1")
	eventually(t, "subscribed", r.healthy)
	err = second(r.c.SetCounts(context.Background(), CountsRequest{S3Heads: ptr(1)}))
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), S3CredentialsEnv) {
		t.Fatalf("s3Heads 1 without keys: %v", err)
	}

	// Anonymous: the flag, no environment.
	anon := Config{Binary: "./sluice", S3Anonymous: true}
	ci := anon.TaskCommand(plan.Op{Kind: plan.OpLaunch, Pod: "s3-head-0", PodKind: plan.S3Head, TaskID: "s3-head-0__1"},
		Endpoint{TaskID: "s3-head-0__1", Host: "agent-1", Port: 9000, Controller: "http://c:10080"})
	want := "./sluice executor --role s3-gateway --health-addr 127.0.0.1:9000 -- s3-gateway --controller http://c:10080 --listen 0.0.0.0:9000 --anonymous"
	if ci.GetValue() != want || ci.Environment != nil {
		t.Fatalf("anonymous S3 head:\n got %s (env %v)\nwant %s", ci.GetValue(), ci.Environment, want)
	}
}

// TestStoredPlanBeforeNFSAndS3Heads: a plan stored by a scheduler that
// knew only HDFS heads (plan/testdata/before_nfs_s3_heads.msgpack) is
// loaded with the configured NFS and S3 head counts and resources, and
// stored back with them; its HDFS head count stays.
func TestStoredPlanBeforeNFSAndS3Heads(t *testing.T) {
	h := newHarness(t, 0)
	zst := storeOldPlan(t, h, "plan/testdata/before_nfs_s3_heads.msgpack")
	nfs := plan.HeadSpec{Count: 2, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	s3 := plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.5, MemMB: 256}}
	h.cfg.Spec.NFSHeads, h.cfg.Spec.S3Heads, h.cfg.S3Anonymous = nfs, s3, true
	r := h.start("s1")
	eventually(t, "plan stored with NFS and S3 heads", func() bool {
		kv, err := zst.Get(context.Background(), keyPlan)
		if err != nil {
			return false
		}
		p, err := plan.Unmarshal(kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		sp := p.Spec()
		return len(p.UnsetHeads()) == 0 && sp.NFSHeads == nfs && sp.S3Heads == s3 && sp.Heads == 1 && sp.Nodes == 1
	})
	eventually(t, "subscribed", r.healthy)
	prog, err := r.c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range prog.Phases {
		names = append(names, fmt.Sprintf("%s:%d", ph.Name, len(ph.Steps)))
	}
	// The stored pods ran other resources than configured: an update
	// phase follows.
	if got := strings.Join(names, " "); got != "controllers:1 nodes:1 heads:1 nfs-heads:2 s3-heads:1 update:3" {
		t.Fatalf("phases %s", got)
	}
}

// TestNFSAndS3HeadPortsFromOffers: with --nfs-head-port 0 and
// --s3-head-port 0, an NFS and an S3 head placed on the same agent (with
// its node) each take a different port from the offer, claimed in the
// task's resources and given on its command line and in its address.
func TestNFSAndS3HeadPortsFromOffers(t *testing.T) {
	h := newHarness(t, 0)
	ps := porttest.Ports(t, 3)
	if err := h.m.AddAgent(mesostest.AgentSpec{ID: "a0", Hostname: "127.0.0.1", CPUs: 4, MemMB: 4096, DiskMB: 4096, Ports: portRanges(append([]int{h.ctrl.port}, ps...)...)}); err != nil {
		t.Fatal(err)
	}
	h.cfg.Spec.Nodes = 1
	h.cfg.Spec.NFSHeads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	h.cfg.Spec.S3Heads = plan.HeadSpec{Count: 1, Resources: plan.Resources{CPUs: 0.25, MemMB: 128}}
	h.cfg.NodePort, h.cfg.NFSHeadPort, h.cfg.S3HeadPort, h.cfg.S3Anonymous = 0, 0, 0, true
	h.cfg.Binary = "./sluice"
	rec := envStandIn{newCommands(h.cfg)}
	h.cfg.Build = rec.build
	r := h.start("s1")
	eventually(t, "deployed", r.complete(t))

	pods := r.pods(t)
	seen := map[int]string{}
	for _, name := range []string{"node-0", "nfs-head-0", "s3-head-0"} {
		p := pods[name]
		tv, ok := h.m.Task(p.TaskID)
		if !ok || tv.State != mesos.TASK_RUNNING {
			t.Fatalf("%s: master has %+v", name, tv)
		}
		got := taskPorts(tv.Resources)
		if len(got) != 1 || got[0] == h.ctrl.port {
			t.Fatalf("%s claims ports %v", name, got)
		}
		if other, dup := seen[got[0]]; dup {
			t.Fatalf("%s and %s both took port %d", name, other, got[0])
		}
		seen[got[0]] = name
		if p.Endpoint != "127.0.0.1:"+strconv.Itoa(got[0]) {
			t.Fatalf("%s endpoint %q, claimed port %d", name, p.Endpoint, got[0])
		}
		if name == "node-0" {
			continue
		}
		args := rec.args(t, p.TaskID)
		want := "--listen|0.0.0.0:" + strconv.Itoa(got[0])
		if !strings.Contains(strings.Join(args, "|"), want) || args[4] != p.Endpoint {
			t.Fatalf("%s command %q: want %s and --health-addr %s", name, args, want, p.Endpoint)
		}
	}
	if args := rec.args(t, pods["s3-head-0"].TaskID); args[len(args)-1] != "--anonymous" {
		t.Fatalf("anonymous S3 head command %q", args)
	}
	if got := taskEnv(t, h.m, pods["s3-head-0"].TaskID); got != "unset" {
		t.Fatalf("anonymous S3 head without keys has %s=%q", S3CredentialsEnv, got)
	}
}
