package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	mscheduler "github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestMesosStrict is strict mode's proof, on the fake Mesos master (no
// real Mesos or DC/OS runs here): a master that authenticates
// frameworks, once with Mesos' HTTP Basic credentials and once with a
// DC/OS service account logged in through the fake IAM, and agents that
// give every executor its own token and refuse calls without it. A
// wrong secret gets one clear error naming the principal, and nothing is
// launched; with the right credential `sluice scheduler` deploys a
// controller, a node and an HDFS head, each a real `sluice executor`
// (which must send its token to be let in), and events are written and
// read back. With the service account, the IAM's tokens are revoked
// mid-way: the scheduler's next call (a pod restart's KILL) logs in
// again and goes through.
func TestMesosStrict(t *testing.T) {
	zk := clustertest.StartZooKeeper(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("basic", func(t *testing.T) {
		m := strictMaster(t, mesostest.Auth{Credentials: map[string]string{"sluice-principal": "right-Secret-1"}, Executors: true})
		dir := t.TempDir()
		wrong, right := filepath.Join(dir, "wrong"), filepath.Join(dir, "right")
		if err := os.WriteFile(wrong, []byte("wrong-Secret-2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(right, []byte("right-Secret-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		bad, _ := startStrictScheduler(t, m, zk, "/strict-basic", nil, "--principal", "sluice-principal", "--secret-file", wrong)
		expectRefused(t, m, bad, "wrong-Secret-2", `refused the credentials of principal \"sluice-principal\" (basic): 401 Unauthorized`)
		sched, sc := startStrictScheduler(t, m, zk, "/strict-basic", nil, "--principal", "sluice-principal", "--secret-file", right)
		deployStrict(t, m, sc, "sluice-principal")
		if logs := sched.Logs(); strings.Contains(logs, "right-Secret-1") {
			t.Fatal("the scheduler logged its secret")
		}
		sched.Stop(t, waitTimeout)
	})
	t.Run("service-account", func(t *testing.T) {
		m := strictMaster(t, mesostest.Auth{ServiceAccounts: map[string]*rsa.PublicKey{"sluice-sa": &key.PublicKey}, Executors: true})
		// The credential as the scheduler's environment holds it when
		// Marathon resolves the app's secret (universe/).
		bad, _ := startStrictScheduler(t, m, zk, "/strict-sa", []string{"DCOS_SERVICE_ACCOUNT_CREDENTIAL=" + saCredential(t, "sluice-sa", wrongKey, m.LoginURL())})
		expectRefused(t, m, bad, "PRIVATE KEY", `DC/OS service login failed: service account \"sluice-sa\"`, "401 Unauthorized: Login token verification failed")
		sched, sc := startStrictScheduler(t, m, zk, "/strict-sa", []string{"DCOS_SERVICE_ACCOUNT_CREDENTIAL=" + saCredential(t, "sluice-sa", key, m.LoginURL())})
		deployStrict(t, m, sc, "sluice-sa")
		logins := m.Logins()
		if logins < 1 {
			t.Fatalf("%d IAM logins, want at least 1", logins)
		}

		// Tokens revoked: the next call is refused once, then made with
		// a new token.
		m.RevokeTokens()
		ctx := context.Background()
		before, err := sc.Pods(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var head scheduler.PodInfo
		for _, p := range before {
			if p.Name == "hdfs-head-0" {
				head = p
			}
		}
		if _, err := sc.Restart(ctx, "hdfs-head-0"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "hdfs-head-0 relaunched after the tokens' revocation", 2*waitTimeout, func() (bool, string) {
			ps, err := sc.Pods(ctx)
			if err != nil {
				return false, err.Error()
			}
			for _, p := range ps {
				if p.Name == "hdfs-head-0" {
					return p.TaskID != head.TaskID && p.State == plan.TaskRunning, fmt.Sprintf("%+v", p)
				}
			}
			return false, "no hdfs-head-0"
		})
		if m.Logins() <= logins {
			t.Fatalf("IAM logins %d after the revocation, were %d: the scheduler did not log in again", m.Logins(), logins)
		}
		if logs := sched.Logs(); strings.Contains(logs, "PRIVATE KEY") || strings.Contains(logs, "token=") {
			t.Fatal("the scheduler logged its key or a token")
		}
		sched.Stop(t, waitTimeout)
	})
}

// strictMaster is a fake master requiring auth, with two agents of five
// ports each (a controller or a node takes one, an HDFS head three).
func strictMaster(t *testing.T, auth mesostest.Auth) *mesostest.Master {
	t.Helper()
	return fakeMesos(t, auth, 2, 5)
}

// saCredential is a DC/OS service account credential JSON.
func saCredential(t *testing.T, uid string, key *rsa.PrivateKey, login string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{"scheme": "RS256", "uid": uid, "login_endpoint": login,
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startStrictScheduler starts `sluice scheduler` for one controller, one
// node and one HDFS head, every port from the offers.
func startStrictScheduler(t *testing.T, m *mesostest.Master, zk, root string, env []string, auth ...string) (*proctest.Proc, *scheduler.Client) {
	t.Helper()
	flags := append([]string{"--name", "sluice", "--role", "sluice-role", "--zk-root", root,
		"--nodes", "1", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-port", "0",
		"--containers", "2", "--tier2", "file://" + t.TempDir(), "--hdfs-config-url", "",
		"--heads", "1", "--head-cpus", "0.5", "--head-mem", "256",
		"--head-rpc-port", "0", "--head-data-port", "0", "--head-http-port", "0"}, auth...)
	sched, sc, _ := startMesosScheduler(t, "scheduler", m, zk, env, flags...)
	return sched, sc
}

// expectRefused checks that a scheduler with a wrong credential logs the
// one clear error (a line holding all of want; leak nowhere in its
// output: the log is logfmt, quotes come escaped), registers no
// framework and launches nothing; then stops it.
func expectRefused(t *testing.T, m *mesostest.Master, sched *proctest.Proc, leak string, want ...string) {
	t.Helper()
	want = append(want, "scheduler: authentication refused")
	waitFor(t, "the refusal logged", waitTimeout, func() (bool, string) {
		logs := sched.Logs()
		for _, l := range strings.Split(logs, "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			if all {
				return true, ""
			}
		}
		return false, logs
	})
	if logs := sched.Logs(); strings.Contains(logs, leak) {
		t.Fatalf("the scheduler's output holds %q:\n%s", leak, logs)
	}
	if id := m.FrameworkID(); id != "" || len(m.Tasks()) != 0 {
		t.Fatalf("a refused scheduler registered framework %q with tasks %v", id, m.Tasks())
	}
	sched.Stop(t, waitTimeout)
}

// deployStrict waits for the deploy, checks the framework's principal and
// that no role process inherited its executor's token, then writes
// events through the controller and reads them back.
func deployStrict(t *testing.T, m *mesostest.Master, sc *scheduler.Client, principal string) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "deployed", 2*waitTimeout, planComplete(sc))
	subs := m.CallsOf(mscheduler.Call_SUBSCRIBE)
	if got := subs[len(subs)-1].GetSubscribe().GetFrameworkInfo().GetPrincipal(); got != principal {
		t.Fatalf("FrameworkInfo.principal %q, want %q", got, principal)
	}
	for _, role := range []struct{ role, id string }{{"node", "node-0"}, {"controller", "controller-0"}} {
		pid, ok := rolePID(role.role, role.id)
		if !ok {
			t.Fatalf("%s's process not found", role.id)
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(env), "MESOS_EXECUTOR_AUTHENTICATION_TOKEN=") {
			t.Fatalf("%s's process inherited its executor's token", role.id)
		}
	}
	eps, err := sc.Endpoints(ctx)
	if err != nil || len(eps.Controllers) != 1 || len(eps.HDFS) != 1 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}
	ctl := eps.Controllers[0]
	waitFor(t, "the node registered", waitTimeout, func() (bool, string) {
		l, err := controllerNodes(ctl)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range l.Nodes {
			if n.Live && len(n.Containers) > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", l)
	})
	cli(t, "", "--controller", ctl, "scope", "create", "strict")
	cli(t, "", "--controller", ctl, "stream", "create", "strict/s", "--segments", "2")
	written := events(0, 100)
	cli(t, strings.Join(written, "\n")+"\n", "--controller", ctl, "write", "strict/s", "--timeout", "60s")
	got := strings.Fields(cli(t, "", "--controller", ctl, "read", "strict/s", "--max", strconv.Itoa(len(written)), "--timeout", "20s"))
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(written, ",") {
		t.Fatalf("read %d events, wrote %d:\n got %v\nwant %v", len(got), len(written), got, written)
	}
}
