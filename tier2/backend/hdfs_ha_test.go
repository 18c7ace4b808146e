package backend_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// haNameservice is the test cluster's nameservice; it is deliberately not
// a host name, so only the Hadoop configuration can resolve it.
const haNameservice = "sluice-ha"

// chunk is one chunk the test wrote: its storage path, its bytes and the
// events in it.
type chunk struct {
	seg    int64
	first  int64
	path   string
	data   []byte
	offs   []int64
	events [][]byte
}

// seqChunk is the SequenceFile of n events of segment seg from offset
// first, as the tiering writes it.
func seqChunk(t *testing.T, seg, first int64, n int) chunk {
	t.Helper()
	c := chunk{seg: seg, first: first, path: tier2.ChunkPath("ha", "st", seg, first)}
	var buf bytes.Buffer
	w, err := seqfile.NewWriter(&buf, seqfile.WriterOptions{KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable})
	if err != nil {
		t.Fatal(err)
	}
	off := first
	for i := range n {
		ev := bytes.Repeat([]byte{byte(seg), byte(i), byte(first)}, 1+(i*13)%200)
		if err := w.AppendEvent(off, ev); err != nil {
			t.Fatal(err)
		}
		c.offs, c.events = append(c.offs, off), append(c.events, ev)
		off += int64(len(ev))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.data = buf.Bytes()
	return c
}

// put writes c as the tiering does: a temporary name, then a rename.
func put(t *testing.T, st tier2.Storage, c chunk) {
	t.Helper()
	tmp := tier2.TempChunkPath("ha", "st", c.seg, c.first)
	w, err := st.Create(tmp)
	if err != nil {
		t.Fatalf("create %s: %v", c.path, err)
	}
	if _, err := w.Write(c.data); err != nil {
		t.Fatalf("write %s: %v", c.path, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", c.path, err)
	}
	if err := st.Rename(tmp, c.path); err != nil {
		t.Fatalf("rename %s: %v", c.path, err)
	}
}

// readAll checks that every chunk reads back byte for byte.
func readAll(t *testing.T, st tier2.Storage, chunks []chunk) {
	t.Helper()
	for _, c := range chunks {
		r, err := st.Open(c.path)
		if err != nil {
			t.Fatalf("open %s: %v", c.path, err)
		}
		got := make([]byte, r.Size()+1)
		n, err := r.ReadAt(got, 0)
		if err != io.EOF {
			t.Fatalf("read %s: %v", c.path, err)
		}
		r.Close()
		if !bytes.Equal(got[:n], c.data) {
			t.Fatalf("%s: read %d bytes that differ from the %d written", c.path, n, len(c.data))
		}
	}
}

// awaitServing polls st until the nameservice answers again after a
// failover: until then the only error allowed is ErrUnavailable (the
// client backs off from a NameNode that failed for a few seconds).
func awaitServing(t *testing.T, st tier2.Storage) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := st.List("")
		if err == nil {
			return
		}
		if !errors.Is(err, tier2.ErrUnavailable) {
			t.Fatalf("list after failover: %v, want success or ErrUnavailable", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nameservice did not answer within 2 minutes of the failover: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, with a deadline
	}
}

// TestNameserviceFailover opens tier 2 as hdfs://NAMESERVICE/dir with
// HADOOP_CONF_DIR naming the HA cluster's client configuration, writes
// chunks while nn0 is active, fails over to nn1 with a chunk half
// written, writes and reads on, kills nn1 so that nn0 takes over again,
// writes and reads on; then Hadoop's own client, through the same
// nameservice, reads every SequenceFile back: the same records with
// SequenceFile.Reader and the same bytes with `hadoop fs -cat`.
func TestNameserviceFailover(t *testing.T) {
	ha := hadooptest.StartHA(t, haNameservice)
	t.Setenv("HADOOP_CONF_DIR", ha.ConfDir)
	t.Setenv("HADOOP_HOME", "")
	uri := "hdfs://" + haNameservice + "/sluice"
	st, err := backend.Open(uri)
	if err != nil {
		t.Fatalf("open %s with %s: %v", uri, ha, err)
	}
	defer st.Close()

	var chunks []chunk
	write := func(seg int64, n int) {
		t.Helper()
		for i := range n {
			c := seqChunk(t, seg, int64(i)<<20, 40+i)
			put(t, st, c)
			chunks = append(chunks, c)
		}
	}
	write(0, 3)
	readAll(t, st, chunks)

	// A chunk half written when nn0 turns standby is completed on nn1.
	open := seqChunk(t, 1, 0, 300)
	tmp := tier2.TempChunkPath("ha", "st", 1, 0)
	w, err := st.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	half := len(open.data) / 2
	if _, err := w.Write(open.data[:half]); err != nil {
		t.Fatal(err)
	}
	ha.Failover(t)
	if _, err := w.Write(open.data[half:]); err != nil {
		t.Fatalf("write after the failover: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after the failover to %s: %v", ha, err)
	}
	if err := st.Rename(tmp, open.path); err != nil {
		t.Fatalf("rename after the failover: %v", err)
	}
	chunks = append(chunks, open)
	write(2, 3)
	readAll(t, st, chunks)

	// nn1 dies; nn0 becomes active again.
	ha.Crash(t)
	awaitServing(t, st)
	write(3, 3)
	readAll(t, st, chunks)

	// Hadoop's client, through the nameservice.
	hadoopURI := func(c chunk) string { return uri + "/" + c.path }
	var paths []string
	for _, c := range chunks {
		paths = append(paths, hadoopURI(c))
	}
	files := hadooptest.SeqFiles(t, paths...)
	for i, c := range chunks {
		f := files[i]
		if f.Path != paths[i] || len(f.Records) != len(c.events) {
			t.Fatalf("SequenceFile.Reader read %d records from %s, want %d from %s", len(f.Records), f.Path, len(c.events), paths[i])
		}
		for j, r := range f.Records {
			if r.Key != c.offs[j] || !bytes.Equal(r.Value, c.events[j]) {
				t.Fatalf("%s: record %d = {%d, %d bytes}, want {%d, %d bytes}", f.Path, j, r.Key, len(r.Value), c.offs[j], len(c.events[j]))
			}
		}
	}
	outs := fsCat(t, ha.ConfDir, paths)
	for i, c := range chunks {
		if !bytes.Equal(outs[i], c.data) {
			t.Errorf("hadoop fs -cat %s: %d bytes that differ from the %d written", paths[i], len(outs[i]), len(c.data))
		}
	}
}

// TestNameserviceUnresolved: a nameservice the configuration does not
// define, or one without NameNode addresses, is one error that names it
// and the directory looked in; so is a missing configuration.
func TestNameserviceUnresolved(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, map[string]string{
		"dfs.nameservices":                   "known,empty",
		"dfs.ha.namenodes.known":             "nn0",
		"dfs.namenode.rpc-address.known.nn0": "127.0.0.1:1",
	})
	t.Setenv("HADOOP_CONF_DIR", dir)
	t.Setenv("HADOOP_HOME", "")
	for _, tc := range []struct{ uri, want string }{
		{"hdfs://other/x", `"other": it is not among dfs.nameservices ("known,empty") of the Hadoop configuration in ` + dir},
		{"hdfs://empty/x", `"empty": no NameNode RPC address`},
	} {
		_, err := backend.Open(tc.uri)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Open(%s): %v, want an error with %q naming %s", tc.uri, err, tc.want, dir)
		}
	}
	t.Setenv("HADOOP_CONF_DIR", "")
	if _, err := backend.Open("hdfs://known/x"); err == nil || !strings.Contains(err.Error(), "neither HADOOP_CONF_DIR nor HADOOP_HOME") {
		t.Errorf("Open without a configuration: %v", err)
	}
	empty := t.TempDir()
	t.Setenv("HADOOP_CONF_DIR", empty)
	if _, err := backend.Open("hdfs://known/x"); err == nil || !strings.Contains(err.Error(), "no core-site.xml or hdfs-site.xml in "+empty) {
		t.Errorf("Open with an empty configuration directory: %v", err)
	}

	// $HADOOP_HOME/etc/hadoop, Hadoop 2's place, after an empty
	// $HADOOP_CONF_DIR.
	home := t.TempDir()
	etc := filepath.Join(home, "etc", "hadoop")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSite(t, etc, map[string]string{"dfs.nameservices": "home"})
	t.Setenv("HADOOP_HOME", home)
	if _, err := backend.Open("hdfs://other/x"); err == nil || !strings.Contains(err.Error(), `("home") of the Hadoop configuration in `+etc) {
		t.Errorf("Open with $HADOOP_HOME/etc/hadoop: %v", err)
	}
}

// fsCat runs `hadoop fs -cat` on each path in one JVM (the harness's
// Shells class) with the site files of confDir, and returns the bytes
// each printed.
func fsCat(t *testing.T, confDir string, paths []string) [][]byte {
	t.Helper()
	const mark = "\n@@@ shells exit "
	var args []string
	for _, p := range paths {
		args = append(args, "-conf", filepath.Join(confDir, "core-site.xml"), "-conf", filepath.Join(confDir, "hdfs-site.xml"), "-cat", p, "--end")
	}
	cmd := hadooptest.Harness(t).Class("org.sluice.hadooptest.Shells", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hadoop fs -cat: %v\n%s", err, stderr.Bytes())
	}
	var outs [][]byte
	b := stdout.Bytes()
	for len(b) > 0 {
		i := bytes.Index(b, []byte(mark))
		if i < 0 {
			t.Fatalf("hadoop fs -cat: output without its end mark; stderr:\n%s", stderr.Bytes())
		}
		rest := b[i+len(mark):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			t.Fatalf("hadoop fs -cat: a truncated end mark; stderr:\n%s", stderr.Bytes())
		}
		if rc := string(rest[:nl]); rc != "0" {
			t.Fatalf("hadoop fs -cat %s: exit %s; stderr:\n%s", paths[len(outs)], rc, stderr.Bytes())
		}
		outs, b = append(outs, b[:i]), rest[nl+1:]
	}
	if len(outs) != len(paths) {
		t.Fatalf("hadoop fs -cat: %d outputs for %d paths", len(outs), len(paths))
	}
	return outs
}

// writeSite writes props as dir/hdfs-site.xml.
func writeSite(t *testing.T, dir string, props map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&b, "<property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	b.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNameserviceRelativeConfDir: a relative HADOOP_CONF_DIR, as a Mesos
// task has (".", its sandbox, where hdfs-site.xml was fetched), is taken
// from the working directory; the nameservice resolves to its NameNode,
// which the client then tries to reach.
func TestNameserviceRelativeConfDir(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, map[string]string{
		"dfs.nameservices":                     "sandboxed",
		"dfs.ha.namenodes.sandboxed":           "a,b",
		"dfs.namenode.rpc-address.sandboxed.a": "127.0.0.1:1",
		"dfs.namenode.rpc-address.sandboxed.b": "127.0.0.1:2",
	})
	t.Chdir(dir)
	t.Setenv("HADOOP_CONF_DIR", ".")
	t.Setenv("HADOOP_HOME", "")
	_, err := backend.Open("hdfs://sandboxed/x")
	if !errors.Is(err, tier2.ErrUnavailable) || !strings.Contains(err.Error(), "[127.0.0.1:1 127.0.0.1:2]") {
		t.Fatalf("Open: %v, want ErrUnavailable connecting to both NameNodes", err)
	}
}
