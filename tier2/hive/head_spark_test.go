//go:build spark

package hive_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/hive/sparktest"
)

// waitTimeout bounds each wait for the standalone (start, tiering).
const waitTimeout = 2 * time.Minute

// writeStream creates scope/stream with two segments in the standalone at
// ctl, writes evs and waits until every byte is in tier 2.
func writeStream(t *testing.T, ctl *ctlclient.Client, scope, stream string, evs [][]byte) {
	t.Helper()
	proctest.WriteTiered(t, ctl, scope, stream, 2, evs, waitTimeout)
}

// TestHeadInSpark reads a real standalone's streams through its HDFS
// head in one Spark session: SequenceFileInputFormat over
// hdfs://HEAD/SCOPE/STREAM and webhdfs://HEAD/SCOPE/STREAM (recursive;
// counted in Java, and every record collected through PySpark),
// and the DDL of `sluice hive ddl --location hdfs://HEAD` (and
// webhdfs://HEAD) in Spark SQL with Hive support, for the text and binary
// formats: counts and groups as written, binary events byte for byte.
func TestHeadInSpark(t *testing.T) {
	spark := sparktest.Find(t)
	bin, err := proctest.BuildSluice(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, bin, "standalone", nil, "--log-level", "info", "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
		"--hdfs-rpc-addr", "127.0.0.1:0", "--hdfs-data-addr", "127.0.0.1:0", "--webhdfs-addr", "127.0.0.1:0", "--nfs-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0",
		"--tier2", t.TempDir(), "--tier-max-lag", "1s", "--tier-chunk-bytes", "65536")
	ctl := ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", waitTimeout))
	heads := map[string]string{
		"hdfs":    "hdfs://" + p.Line(t, "hdfs head (rpc) listening on ", waitTimeout),
		"webhdfs": "webhdfs://" + p.Line(t, "webhdfs listening on ", waitTimeout),
	}

	frames := binaryEvents()
	writeStream(t, ctl, "iot", "frames", frames)
	var access [][]byte
	hosts := map[string]int{}
	sums := map[string]int{}
	for i := range 3000 {
		h := fmt.Sprintf("h%d", i%7)
		hosts[h]++
		sums[h] += 200 + i%3
		access = append(access, []byte(fmt.Sprintf("%s\t%d\t/p/%d", h, 200+i%3, i)))
	}
	writeStream(t, ctl, "logs", "access", access)

	// The real binary prints the DDL, pointed at the head.
	ddl := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--controller", ctl.BaseURL(), "hive", "ddl"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("sluice hive ddl %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return sparktest.Statements(stdout.String())
	}
	var stmts []string
	queries := map[string]string{}
	seqs := map[string]sparktest.SequenceFile{}
	recursive := map[string]string{"mapreduce.input.fileinputformat.input.dir.recursive": "true"}
	for via, head := range heads {
		stmts = append(stmts, ddl("--format", "binary", "--location", head, "--table", via+"_frames", "iot/frames")...)
		stmts = append(stmts, ddl("--format", "text", "--location", head, "--table", via+"_access", "--field-delimiter", "\t",
			"--column", "host STRING", "--column", "status INT", "--column", "path STRING", "logs/access")...)
		queries[via+"-frames"] = "SELECT event FROM " + via + "_frames"
		queries[via+"-access"] = "SELECT host, count(*), sum(status), count(DISTINCT path) FROM " + via + "_access GROUP BY host ORDER BY host"
		queries[via+"-access-segments"] = "SELECT count(DISTINCT segment) FROM " + via + "_access"
		seqs["seq-"+via+"-frames"] = sparktest.SequenceFile{Path: head + "/iot/frames", Conf: recursive}
		seqs["rec-"+via+"-frames"] = sparktest.SequenceFile{Path: head + "/iot/frames", Conf: recursive, Records: true}
		seqs["seq-"+via+"-access"] = sparktest.SequenceFile{Path: head + "/logs/access", Conf: recursive}
	}
	t.Logf("DDL through the head:\n%s", strings.Join(stmts, ";\n"))
	res := spark.Run(t, sparktest.Request{Statements: stmts, Queries: queries, SequenceFiles: seqs, ClassPath: jerseyJars(t)})

	want := hexes(frames)
	var wantAccess []string
	for i := range 7 {
		h := fmt.Sprintf("h%d", i)
		wantAccess = append(wantAccess, fmt.Sprintf("[%s %d %d %d]", h, hosts[h], sums[h], hosts[h]))
	}
	for via := range heads {
		// (a) Hadoop's SequenceFileInputFormat, outside Hive.
		for name, n := range map[string]int{"frames": len(frames), "access": len(access)} {
			if got, want := fmt.Sprint(seqResult(res, via, name)), fmt.Sprintf("[[%d]]", n); got != want {
				t.Errorf("SequenceFileInputFormat over %s/%s: %s records, want %s", heads[via], name, got, want)
			}
		}
		// Every record once: values the events written, keys distinct
		// offsets per segment (two segments: each offset at most twice).
		var vals [][]byte
		keys := map[float64]int{}
		for _, row := range res["rec-"+via+"-frames"] {
			b, ok := row[1].([]byte)
			k, kok := row[0].(float64)
			if len(row) != 2 || !ok || !kok {
				t.Fatalf("newAPIHadoopFile over %s/iot/frames: row %v, want [key, bytes]", heads[via], row)
			}
			vals = append(vals, b)
			if keys[k]++; keys[k] > 2 {
				t.Fatalf("newAPIHadoopFile over %s/iot/frames: key %v in more than two records", heads[via], k)
			}
		}
		if !slices.Equal(hexes(vals), want) {
			t.Errorf("newAPIHadoopFile over %s/iot/frames: %d records, %d events written, or not byte for byte", heads[via], len(vals), len(frames))
		}
		// (b, c) The DDL in Spark SQL: binary byte for byte, text's groups.
		var got [][]byte
		for _, row := range res[via+"-frames"] {
			b, ok := row[0].([]byte)
			if !ok {
				t.Fatalf("%s_frames: a cell is %T %v, want bytes", via, row[0], row[0])
			}
			got = append(got, b)
		}
		if have := hexes(got); !slices.Equal(have, want) {
			t.Errorf("%s_frames: %d events read through the head, %d written, or not byte for byte", via, len(got), len(frames))
			for _, w := range want {
				if !slices.Contains(have, w) {
					t.Errorf("%s_frames: event %q written, not read back", via, short(w))
				}
			}
		}
		if got := fmt.Sprint(res[via+"-access"]); got != "["+strings.Join(wantAccess, " ")+"]" {
			t.Errorf("%s_access: GROUP BY host = %s, want %v", via, got, wantAccess)
		}
		if got := fmt.Sprint(res[via+"-access-segments"]); got != "[[2]]" {
			t.Errorf("%s_access: %s segments, want 2", via, got)
		}
	}
}

// seqResult is the result of the SequenceFileInputFormat read named
// via-name (the request's sequencefiles share the queries' namespace).
func seqResult(res sparktest.Result, via, name string) [][]any {
	return res["seq-"+via+"-"+name]
}

// jerseyJars are the jars that give Spark's Hadoop client (the shaded
// hadoop-client-api and -runtime 3.5.0 PySpark ships) the class its
// WebHdfsFileSystem needs to parse any JSON answer's Content-Type:
// hadoop-client-runtime lacks the shaded Jersey RuntimeDelegateImpl
// (ClassNotFoundException ...shaded.org.glassfish.jersey.internal.RuntimeDelegateImpl,
// whatever the WebHDFS server), hadoop-client-minicluster of the same
// version has it. Without them, webhdfs:// fails in stock PySpark.
func jerseyJars(t *testing.T) []string {
	t.Helper()
	for _, jar := range filepath.SplitList(hadooptest.Harness(t).Classpath) {
		if strings.Contains(filepath.Base(jar), "hadoop-client-minicluster-") {
			return []string{jar}
		}
	}
	t.Fatalf("hadoop-client-minicluster is not on the harness's class path: %s", hadooptest.Harness(t).Classpath)
	return nil
}
