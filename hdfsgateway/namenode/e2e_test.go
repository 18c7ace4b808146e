package namenode

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode/datanodetest"
	"github.com/sluice-streams/sluice/tier2"
)

// TestHadoopReadsThroughTheHead is the head end to end: this NameNode and
// the DataNode of hdfsgateway/datanode over one view, and Hadoop's own
// client reading chunks over hdfs:// with FsShell (-cat, -get, -text,
// -tail, -checksum) and FileSystem.open (seek, positional reads across
// block boundaries), every byte compared with tier 2.
func TestHadoopReadsThroughTheHead(t *testing.T) {
	f := newFixture(t)
	_, data := datanodetest.Start(t, f.v, datanode.Config{BlockSize: testBlockSize, Logger: testLogger(t)})
	_, addr := serve(t, f.v, Config{DataAddr: func() string { return data }})
	u := "hdfs://" + addr
	small, big := tier2.ChunkPath("s", "a", 0, 0), tier2.ChunkPath("s", "a", 3, 0)
	raw := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(f.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bigBytes := raw(big)
	out := t.TempDir()
	reads := []struct {
		op       string
		off, len int
	}{
		{"@pread", 0, 100},
		{"@pread", testBlockSize - 10, 20},                 // across the first block boundary
		{"@pread", 2*testBlockSize + 7, testBlockSize + 3}, // spans three blocks
		{"@seek", 3*testBlockSize - 1, 2},
		{"@seek", len(bigBytes) - 50, 50}, // the last block's end
	}
	cmds := [][]string{
		{"-cat", u + "/" + small},
		{"-get", u + "/" + big, out},
		{"-text", u + "/" + small},
		{"-checksum", u + "/" + small, u + "/" + big},
		{"-tail", u + "/" + big},
	}
	for _, r := range reads {
		cmds = append(cmds, []string{r.op, u + "/" + big, fmt.Sprint(r.off), fmt.Sprint(r.len)})
	}
	res := shells(t, cmds...)
	for _, r := range res {
		if r.exit != "0" {
			t.Errorf("%s: exit %s\n%s", r.cmd, r.exit, r.out)
		}
	}
	if !strings.HasPrefix(res[0].out, "SEQ") || !strings.Contains(res[0].out, "org.apache.hadoop.io.BytesWritable") {
		t.Errorf("-cat: not the chunk:\n%q", res[0].out)
	}
	if got, err := os.ReadFile(filepath.Join(out, filepath.Base(big))); err != nil || !bytes.Equal(got, bigBytes) {
		t.Errorf("-get %s: %d bytes (%v), want tier 2's %d", big, len(got), err, len(bigBytes))
	}
	if n := strings.Count(res[2].out, "\n"); n != 10 {
		t.Errorf("-text: %d lines, want the chunk's 10 records:\n%s", n, res[2].out)
	}
	for _, p := range []string{small, big} {
		b := raw(p)
		sum, err := blocks.Checksum(bytes.NewReader(b), p, int64(len(b)), testBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s/%s\t%s\t%s", u, p, sum.Algorithm(), hex.EncodeToString(sum.Bytes()))
		if !strings.Contains(res[3].out, line) {
			t.Errorf("-checksum lacks %q:\n%s", line, res[3].out)
		}
	}
	if tail := bigBytes[len(bigBytes)-1024:]; !strings.HasSuffix(res[4].out, string(tail)+"\n") && !strings.Contains(res[4].out, string(tail[len(tail)-100:])) {
		t.Errorf("-tail: not the last KiB")
	}
	for i, r := range reads {
		sum := md5.Sum(bigBytes[r.off : r.off+r.len])
		want := fmt.Sprintf("READ %d %d %x", r.off, r.len, sum)
		if got := strings.TrimSpace(res[5+i].out); got != want {
			t.Errorf("%s %d %d: %q, want %q", r.op, r.off, r.len, got, want)
		}
	}
}
