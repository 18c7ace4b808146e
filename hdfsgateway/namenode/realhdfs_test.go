package namenode

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode/datanodetest"
	"github.com/sluice-streams/sluice/internal/retry"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/view"
)

// TestSameAnswersAsRealHDFS copies the fixture's tree, byte for byte and
// with the view's owners, modes and block size, into a real HDFS (a
// MiniDFSCluster), then runs the same FsShell commands against the head
// and against that HDFS: their outputs must be the same but for the
// host:port and the modification times.
func TestSameAnswersAsRealHDFS(t *testing.T) {
	f := newFixture(t)
	_, data := datanodetest.Start(t, f.v, datanode.Config{BlockSize: testBlockSize})
	_, addr := serve(t, f.v, Config{DataAddr: func() string { return data }})
	real := hadooptest.StartHDFS(t)

	// The MiniDFSCluster's superuser is the user that started it: this
	// process's.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{real}, User: me.Username})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	es := walk(t, f.v, "")[1:]
	var files []string
	for _, e := range es {
		p := "/" + e.Path
		if e.IsDir {
			if err := c.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		files = append(files, p)
		b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(e.Path)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.CreateFile(p, 1, testBlockSize, 0o444)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		// The NameNode asks the writer to complete the file again while
		// the DataNode has not reported the last block yet.
		pauses := retry.NewBackoff(50*time.Millisecond, time.Second)
		deadline := time.Now().Add(time.Minute)
		for err = w.Close(); hdfs.IsErrReplicating(err) && time.Now().Before(deadline); err = w.Close() {
			time.Sleep(pauses.NextBackOff())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range slices.Backward(es) {
		if e.IsDir {
			if err := c.Chmod("/"+e.Path, 0o555); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Chown("/"+e.Path, view.Owner, view.Group); err != nil {
			t.Fatal(err)
		}
	}

	cmds := func(u string) [][]string {
		stat := []string{"-stat", "%n|%b|%r|%o|%u|%g|%F|%a"}
		sums := []string{"-checksum"}
		for _, p := range files {
			stat = append(stat, u+p)
			sums = append(sums, u+p)
		}
		return [][]string{
			{"-ls", "-R", u + "/s"},
			{"-du", u + "/s/a"},
			{"-du", "-s", u + "/s"},
			{"-count", "-q", u + "/s", u + "/t", u + "/s/b"},
			stat,
			sums,
			{"-getfacl", u + files[0]},
			{"-test", "-d", u + files[0]},
			{"-ls", u + "/s/nope"},
			{"-mkdir", u + "/s/b/x"},
		}
	}
	ours, theirs := "hdfs://"+addr, "hdfs://"+real
	// Not HDFS's superuser (this process's user): HDFS then checks
	// permissions as it does for every other user.
	res := shellsAs(t, "alice", append(cmds(ours), cmds(theirs)...)...)
	n := len(res) / 2
	for i := range n {
		a := strings.ReplaceAll(res[i].out, ours, "URI")
		b := strings.ReplaceAll(res[n+i].out, theirs, "URI")
		if i == 0 {
			a, b = noDates(a), noDates(b)
		}
		if i == n-1 {
			// Refused by us as read-only, by HDFS by its permissions:
			// "mkdir: Permission denied: ..." both.
			a, b = firstWords(a, 2), firstWords(b, 2)
		}
		if a != b || res[i].exit != res[n+i].exit {
			t.Errorf("%s\nhead (exit %s):\n%s\nHDFS (exit %s):\n%s", res[i].cmd, res[i].exit, a, res[n+i].exit, b)
		}
	}
}

// noDates drops -ls's date and time columns.
func noDates(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		fs := strings.Fields(l)
		if len(fs) == 8 {
			l = fmt.Sprint(append(fs[:5:5], fs[7]))
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func firstWords(s string, n int) string {
	fs := strings.Fields(s)
	return strings.Join(fs[:min(n, len(fs))], " ")
}
