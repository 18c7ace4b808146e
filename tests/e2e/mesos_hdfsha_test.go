package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/cluster/clustertest"
	"github.com/sluice-streams/sluice/scheduler/mesostest"
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
	// Five ports an agent: a controller or a node takes one, an HDFS
	// head three.
	m := fakeMesos(t, mesostest.Auth{}, 3, 5)
	uri := "hdfs://" + ns + "/sluice"
	_, sc, _ := startMesosScheduler(t, "scheduler", m, zk, nil,
		"--name", "sluice", "--role", "sluice-role", "--principal", "sluice-principal", "--zk-root", "/dcos-service-sluice",
		"--nodes", "2", "--node-cpus", "0.5", "--node-mem", "256", "--node-disk", "512", "--node-disk-type", "ROOT", "--node-port", "0",
		"--containers", "4", "--tier2", uri, "--hdfs-config-url", "file://"+ha.ConfDir,
		"--heads", "1", "--head-cpus", "0.5", "--head-mem", "256",
		"--head-rpc-port", "0", "--head-data-port", "0", "--head-http-port", "0",
		"--nfs-heads", "0", "--s3-heads", "0")
	waitFor(t, "deployed", 2*waitTimeout, planComplete(sc))
	eps, err := sc.Endpoints(context.Background())
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
