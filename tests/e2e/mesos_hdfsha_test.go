package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
)

// TestMesosTier2HANameservice is tier 2 on an HA nameservice under the
// framework, on the fake Mesos master: `sluice scheduler --tier2
// hdfs://NAMESERVICE/sluice --hdfs-config-url file://DIR` launches a
// controller, two nodes and an HDFS head, each fetching hdfs-site.xml and
// core-site.xml into its sandbox (the fake agent's fetcher) and running
// with HADOOP_CONF_DIR the sandbox; the test process itself has no
// HADOOP_CONF_DIR while they start, so only the fetched files can resolve
// the nameservice. Streams written before a failover, after it and after
// the active NameNode crashed all reach tier 2 and are read back through
// the controller; Hadoop reads every chunk through the nameservice and
// through the HDFS head (which opens tier 2 from the controller's URI and
// its own sandbox's configuration).
func TestMesosTier2HANameservice(t *testing.T) {
	const ns = "sluice-ha"
	t.Setenv("HADOOP_CONF_DIR", "")
	t.Setenv("HADOOP_HOME", "")
	ha := hadooptest.StartHA(t, ns)
	t.Logf("%s %s serving", time.Now().Format("15:04:05.0"), ha)
	zk := clustertest.StartZooKeeper(t)
	m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 50 * time.Millisecond, Dir: t.TempDir()})
	// Five ports an agent: a controller or a node takes one, an HDFS
	// head three.
	ports := freePorts(t, 15)
	for i := range 3 {
		var rs []mesos.Value_Range
		for _, p := range ports[5*i : 5*i+5] {
			rs = append(rs, mesos.Value_Range{Begin: uint64(p), End: uint64(p)})
		}
		sort.Slice(rs, func(a, b int) bool { return rs[a].Begin < rs[b].Begin })
		if err := m.AddAgent(mesostest.AgentSpec{ID: fmt.Sprintf("agent-%d", i), Hostname: "127.0.0.1", CPUs: 4, MemMB: 4096, DiskMB: 4096, Ports: rs}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, tv := range append(m.Tasks(), m.CompletedTasks()...) {
			for _, f := range []string{"stdout", "stderr"} {
				b, _ := os.ReadFile(filepath.Join(tv.Sandbox, f))
				t.Logf("task %s (%v) %s:\n%s", tv.ID, tv.State, f, b)
			}
		}
	})
	uri := "hdfs://" + ns + "/sluice"
	sched := start(t, "scheduler", []string{"SLUICE_SCHEDULER_API_HOST=127.0.0.1", "SLUICE_TASK_BINARY=" + sluiceBin},
		"--log-level", "info", "scheduler",
		"--name", "sluice", "--role", "sluice-role", "--principal", "sluice-principal", "--user", "nobody",
		"--mesos-master", strings.TrimSuffix(m.URL(), "/api/v1/scheduler"),
		"--zk", zk, "--zk-root", "/dcos-service-sluice", "--api-port", "0", "--artifact-uri", "",
		"--controllers", "1", "--controller-cpus", "0.5", "--controller-mem", "256", "--controller-port", "0",
		"--nodes", "2", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-disk-type", "ROOT", "--node-port", "0",
		"--containers", "4", "--tier2", uri, "--hdfs-config-url", "file://"+ha.ConfDir,
		"--heads", "1", "--head-cpus", "0.5", "--head-mem", "256",
		"--head-rpc-port", "0", "--head-data-port", "0", "--head-http-port", "0",
		"--nfs-heads", "0", "--s3-heads", "0")
	sc, err := scheduler.NewClient("http://"+sched.Line(t, "scheduler API listening on ", waitTimeout), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitFor(t, "deployed", 2*waitTimeout, func() (bool, string) {
		p, err := sc.Plan(ctx)
		if err != nil {
			return false, err.Error()
		}
		return p.Status == plan.Complete, fmt.Sprintf("%+v", p)
	})
	eps, err := sc.Endpoints(ctx)
	if err != nil || len(eps.Controllers) != 1 || len(eps.Nodes) != 2 || len(eps.HDFS) != 1 {
		t.Fatalf("endpoints %+v, %v", eps, err)
	}
	// Every task has the configuration in its sandbox, fetched.
	for _, tv := range m.Tasks() {
		for _, f := range []string{"hdfs-site.xml", "core-site.xml"} {
			if _, err := os.Stat(filepath.Join(tv.Sandbox, f)); err != nil {
				t.Fatalf("task %s: %v", tv.ID, err)
			}
		}
	}
	t.Logf("%s deployed: %+v", time.Now().Format("15:04:05.0"), eps)
	ctl := ctlclient.NewClient(eps.Controllers[0])
	want := haWriteAcrossFailovers(t, ha, ctl)

	t.Setenv("HADOOP_CONF_DIR", ha.ConfDir) // for this process's reads and Hadoop's
	haCheck(t, ctl, uri, want, uri, eps.HDFS[0])
}
