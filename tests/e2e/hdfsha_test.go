package e2e

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
)

// haTierTimeout bounds getting a stream's events into tier 2 across a
// failover: the node's tiering retries while the NameNodes change roles,
// and the HDFS client keeps away from a NameNode that failed for a few
// seconds.
const haTierTimeout = 2 * time.Minute

// TestTier2HANameservice runs the standalone server with tier 2 on
// hdfs://NAMESERVICE/sluice, the nameservice of a MiniDFSCluster with two
// NameNodes resolved through HADOOP_CONF_DIR as a task resolves the
// hdfs-site.xml it fetched. It writes a stream into tier 2 with nn0
// active, fails over to nn1 (nn0 turns standby) and writes a second, kills
// nn1 (nn0 takes over) and writes a third; then it reads all three back
// through the node from tier 2 (the cache holds nothing) and has Hadoop's
// SequenceFile.Reader read every chunk through the nameservice: every
// event exactly once, keys its offsets.
func TestTier2HANameservice(t *testing.T) {
	const ns = "sluice-ha"
	ha := hadooptest.StartHA(t, ns)
	// For this process's own tier-2 client and the harness's readers;
	// the standalone gets it in its environment.
	t.Setenv("HADOOP_CONF_DIR", ha.ConfDir)
	t.Setenv("HADOOP_HOME", "")
	uri := "hdfs://" + ns + "/sluice"
	p := start(t, "standalone hdfs-ha", []string{"HADOOP_CONF_DIR=" + ha.ConfDir}, "--log-level", "info", "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--no-hdfs-head", "--no-nfs-head", "--no-s3-head",
		"--tier2", uri, "--tier-max-lag", "1s", "--tier-chunk-bytes", "65536", "--cache-size", "1")
	ctl := ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", waitTimeout))

	want := haWriteAcrossFailovers(t, ha, ctl)
	haCheck(t, ctl, uri, want, uri)
}

// haWriteAcrossFailovers writes three streams of scope "ha" into tier 2
// through ctl: one with nn0 active, one after a failover to nn1, one
// after nn1 crashed and nn0 took over. It returns each stream's events.
func haWriteAcrossFailovers(t *testing.T, ha *hadooptest.HA, ctl *ctlclient.Client) map[string]map[string]bool {
	t.Helper()
	want := map[string]map[string]bool{}
	write := func(stream string) {
		t.Helper()
		want[stream] = map[string]bool{}
		var evs [][]byte
		for i := range 1500 {
			ev := fmt.Sprintf("%s-%05d-%s", stream, i, strings.Repeat("y", i%90))
			want[stream][ev] = true
			evs = append(evs, []byte(ev))
		}
		proctest.WriteTiered(t, ctl, "ha", stream, 2, evs, haTierTimeout)
	}
	write("before")
	t.Logf("%s stream before: in tier 2; failing over", time.Now().Format("15:04:05.0"))
	ha.Failover(t)
	write("after-failover")
	t.Logf("%s stream after-failover: in tier 2; crashing the active NameNode", time.Now().Format("15:04:05.0"))
	ha.Crash(t)
	write("after-crash")
	t.Logf("%s stream after-crash: in tier 2", time.Now().Format("15:04:05.0"))
	return want
}

// haCheck reads every stream of want back through the controller ctl
// and has Hadoop's SequenceFile.Reader read each stream's chunks, listed
// in tier 2 at uri, under each of roots (tier 2 itself, an HDFS head):
// every event exactly once. $HADOOP_CONF_DIR must name the nameservice's
// configuration.
func haCheck(t *testing.T, ctl *ctlclient.Client, uri string, want map[string]map[string]bool, roots ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := client.New(ctx, ctl.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for stream, evs := range want {
		r, err := cl.NewReader(ctx, "ha", stream)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for len(seen) < len(evs) {
			ev, err := r.ReadNext(ctx)
			if err != nil {
				t.Fatalf("%s: after %d events: %v", stream, len(seen), err)
			}
			if !evs[string(ev.Data)] || seen[string(ev.Data)] {
				t.Fatalf("%s: read %q: unknown or repeated", stream, ev.Data)
			}
			seen[string(ev.Data)] = true
		}
		r.Close()
	}

	st, err := backend.Open(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// One JVM a root: every stream's chunks at once (events are unique
	// across streams).
	all := map[string]bool{}
	var chunks []string
	for stream, evs := range want {
		cs := haChunks(t, st, path.Join("ha", stream))
		if len(cs) < 2 {
			t.Fatalf("%s: chunks %v", stream, cs)
		}
		chunks = append(chunks, cs...)
		for ev := range evs {
			all[ev] = true
		}
	}
	for _, root := range roots {
		var paths []string
		for _, c := range chunks {
			paths = append(paths, root+"/"+c)
		}
		if n := hadoopEvents(t, hadooptest.SeqDump(t, paths...), all); n != len(all) {
			t.Fatalf("SequenceFile.Reader read %d events through %s, want %d", n, root, len(all))
		}
	}
}

// haChunks lists the chunks under dir of st, as paths from its root.
func haChunks(t *testing.T, st tier2.Storage, dir string) []string {
	t.Helper()
	fis, err := st.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fi := range fis {
		p := path.Join(dir, fi.Name)
		if fi.IsDir {
			out = append(out, haChunks(t, st, p)...)
		} else if strings.HasSuffix(fi.Name, ".seq") && !strings.HasPrefix(fi.Name, "_") {
			out = append(out, p)
		}
	}
	return out
}
