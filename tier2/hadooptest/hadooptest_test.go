package hadooptest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// event is the bytes of event i of a segment: varied lengths, empty
// included, and every byte value.
func event(seg int64, i int) []byte {
	b := make([]byte, (i*37)%300)
	for j := range b {
		b[j] = byte(int(seg)*31 + i*7 + j)
	}
	return b
}

// writeChunk writes a chunk of n events starting at offset first, each
// event's offset advancing by its length, and returns the records.
func writeChunk(t *testing.T, path string, seg, first int64, n int, comp seqfile.Compression) []Record {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := seqfile.NewWriter(&buf, seqfile.WriterOptions{
		KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable,
		Compression: comp, BlockSize: 2000,
		Metadata: map[string]string{"sluice.segment": fmt.Sprint(seg)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	off := first
	for i := range n {
		ev := event(seg, i)
		if err := w.AppendEvent(off, ev); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, Record{Key: off, Value: ev})
		off += int64(len(ev)) + 8
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return recs
}

func sameRecords(t *testing.T, what string, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.File != w.File || g.Key != w.Key || !bytes.Equal(g.Value, w.Value) || g.RawKey != nil {
			t.Fatalf("%s: record %d = {%s %d %x}, want {%s %d %x}", what, i, g.File, g.Key, g.Value, w.File, w.Key, w.Value)
		}
	}
}

func TestSeqDumpReadsEveryCompression(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	var want []Record
	for i, comp := range []seqfile.Compression{seqfile.None, seqfile.Record, seqfile.Block} {
		p := filepath.Join(dir, fmt.Sprintf("c%d.seq", i))
		recs := writeChunk(t, p, int64(i), 100, 40, comp)
		for j := range recs {
			recs[j].File = p
		}
		paths = append(paths, p)
		want = append(want, recs...)
	}
	files := SeqFiles(t, paths...)
	for i, f := range files {
		wantComp := []string{"NONE", "RECORD", "BLOCK"}[i]
		wantCodec := map[bool]string{true: "", false: "org.apache.hadoop.io.compress.DefaultCodec"}[i == 0]
		if f.KeyClass != LongWritable || f.ValueClass != "org.apache.hadoop.io.BytesWritable" ||
			f.Compression != wantComp || f.Codec != wantCodec || f.Metadata["sluice.segment"] != fmt.Sprint(i) {
			t.Errorf("file %d header = %+v", i, f)
		}
	}
	sameRecords(t, "seqdump", SeqDump(t, paths...), want)
}

func TestSeqDumpFailsOnCorruptFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bad.seq")
	if err := os.WriteFile(p, []byte("SEQ\x06garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runHarness(t, "seqdump", p); err == nil {
		t.Fatal("seqdump of a corrupt file succeeded")
	}
}

// TestMapReduceSkipsTemporaries lays chunks out as tier 2 does, with a
// half-written temporary and a hidden file beside them that would fail
// the job if Hadoop read them.
func TestMapReduceSkipsTemporaries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var want []Record
	for seg := range int64(2) {
		for c, first := range []int64{0, 5000} {
			rel := tier2.ChunkPath("sc", "st", seg, first)
			recs := writeChunk(t, filepath.Join(root, rel), seg, first, 10+c, seqfile.Compression(c))
			for i := range recs {
				recs[i].File = rel
			}
			want = append(want, recs...)
		}
		for _, junk := range []string{tier2.TempChunkPath("sc", "st", seg, 9999), tier2.SegmentDir("sc", "st", seg) + "/.hidden"} {
			if err := os.WriteFile(filepath.Join(root, junk), []byte("SEQ\x06not a whole file"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	sameRecords(t, "mapreduce", MapReduce(t, root), want)
}

func TestStartHDFS(t *testing.T) {
	t.Parallel()
	h := StartCluster(t)
	for _, addr := range []string{h.NameNode, h.HTTP} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.Close()
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", h.NameNode); err == nil {
		c.Close()
		t.Fatalf("NameNode %s still accepts connections after Stop", h.NameNode)
	}
}
