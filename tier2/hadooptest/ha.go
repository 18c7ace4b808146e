package hadooptest

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// failoverTimeout bounds one failover of an HA cluster.
const failoverTimeout = 60 * time.Second

// HA is a MiniDFSCluster whose nameservice has two NameNodes (nn0 and
// nn1, sharing their edit log) and one DataNode, in a JVM, on 127.0.0.1.
// nn0 starts active. ConfDir holds the client side of the nameservice, as
// an HA HDFS publishes it: core-site.xml (fs.defaultFS) and hdfs-site.xml
// (dfs.nameservices, dfs.ha.namenodes.<ns>,
// dfs.namenode.rpc-address.<ns>.<id> and the failover proxy provider).
type HA struct {
	*HDFS
	// Nameservice is the nameservice's name: hdfs://Nameservice/ names
	// the cluster.
	Nameservice string
	// ConfDir is the directory of core-site.xml and hdfs-site.xml, for
	// HADOOP_CONF_DIR.
	ConfDir string
	// NameNodes are the RPC addresses of nn0 and nn1, "127.0.0.1:PORT".
	NameNodes []string

	active int
}

// StartHA starts an HA cluster for t whose nameservice is ns, in a
// temporary directory, and stops it when t ends. It fails t if the
// cluster does not serve within StartTimeout.
func StartHA(t testing.TB, ns string) *HA {
	t.Helper()
	dir := t.TempDir()
	h, line, err := start(dir, "HA ", "hdfs-ha", filepath.Join(dir, "dfs"), ns)
	if err != nil {
		t.Fatal(err)
	}
	h.stopWith(t)
	// "NS CONF DIR NAMENODES A,B ACTIVE 0"
	f := strings.Fields(line)
	if len(f) != 7 || f[0] != ns || f[1] != "CONF" || f[3] != "NAMENODES" || f[5] != "ACTIVE" || f[6] != "0" {
		t.Fatalf("hadooptest: unexpected line from the harness: %q", line)
	}
	return &HA{HDFS: h, Nameservice: ns, ConfDir: f[2], NameNodes: strings.Split(f[4], ",")}
}

// Active is the index in NameNodes of the active NameNode.
func (h *HA) Active() int { return h.active }

// Failover makes the active NameNode standby and then the other one
// active, as an administrator's `hdfs haadmin -failover` does, and
// returns once the other one is active.
func (h *HA) Failover(t testing.TB) {
	t.Helper()
	h.command(t, "failover")
}

// Crash shuts the active NameNode down (its process is gone, its port
// refuses connections) and makes the other one active, as a failover
// controller does when the active one dies. There is no failing over
// after a crash.
func (h *HA) Crash(t testing.TB) {
	t.Helper()
	h.command(t, "crash")
}

func (h *HA) command(t testing.TB, cmd string) {
	t.Helper()
	if _, err := io.WriteString(h.stdin, cmd+"\n"); err != nil {
		t.Fatalf("hadooptest: %s: %v", cmd, err)
	}
	line, err := h.reply(failoverTimeout)
	if err != nil {
		t.Fatalf("hadooptest: %s: %v", cmd, err)
	}
	rest, ok := strings.CutPrefix(line, "ACTIVE ")
	if !ok {
		t.Fatalf("hadooptest: %s: %s", cmd, line)
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n != 1-h.active {
		t.Fatalf("hadooptest: %s: the harness answered %q, want ACTIVE %d", cmd, line, 1-h.active)
	}
	h.active = n
}

// String names the cluster for messages.
func (h *HA) String() string {
	return fmt.Sprintf("nameservice %s (NameNodes %v, nn%d active)", h.Nameservice, h.NameNodes, h.active)
}
