package hdfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// cluster is the MiniDFSCluster every test of the package shares.
var cluster *hadooptest.HDFS

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-hdfs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cluster, err = hadooptest.NewHDFS(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

var roots atomic.Int64

// newStorage returns a Storage on a fresh root of the shared cluster,
// closed when t ends.
func newStorage(t *testing.T) *Storage {
	t.Helper()
	root := fmt.Sprintf("/sluice-test/%d", roots.Add(1))
	s, err := New(Options{NameNodes: []string{cluster.NameNode}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	tier2test.RunStorageTests(t, func(t *testing.T) tier2.Storage { return newStorage(t) })
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	s := newStorage(t)
	p := tier2.ChunkPath("sc", "st", 4, 0)
	tier2test.Put(t, s, p, []byte("x"))
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{cluster.NameNode}, User: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, d := range []string{"sc", "sc/st", tier2.SegmentDir("sc", "st", 4)} {
		fi, err := c.Stat(s.full(d))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want a directory 0755", d, fi.Mode())
		}
	}
	fi, err := c.Stat(s.full(p))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("chunk mode %v, want 0444", fi.Mode().Perm())
	}
	// Another user reads the chunk and cannot change or remove it.
	if b, err := c.ReadFile(s.full(p)); err != nil || string(b) != "x" {
		t.Errorf("another user reads %q, %v", b, err)
	}
	if err := c.Remove(s.full(p)); !errors.Is(err, os.ErrPermission) {
		t.Errorf("another user's Remove: %v, want permission denied", err)
	}
}

// TestHadoopReadsChunks writes chunks as the tiering does (temporary name,
// then rename) and has Hadoop's own reader and a MapReduce job read them
// from HDFS.
func TestHadoopReadsChunks(t *testing.T) {
	t.Parallel()
	s := newStorage(t)
	type rec struct {
		file string
		off  int64
		ev   []byte
	}
	var want []rec
	for seg := range int64(2) {
		for i, first := range []int64{0, 1 << 20} {
			tmp, final := tier2.TempChunkPath("sc", "st", seg, first), tier2.ChunkPath("sc", "st", seg, first)
			w, err := s.Create(tmp)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := seqfile.NewWriter(w, seqfile.WriterOptions{
				KeyClass: seqfile.LongWritable, ValueClass: seqfile.BytesWritable,
				Compression: seqfile.Compression(i + int(seg)),
			})
			if err != nil {
				t.Fatal(err)
			}
			off := first
			for j := range 50 {
				ev := bytes.Repeat([]byte{byte(j), byte(seg), byte(i)}, j*11)
				if err := sw.AppendEvent(off, ev); err != nil {
					t.Fatal(err)
				}
				want = append(want, rec{final, off, ev})
				off += int64(len(ev))
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Rename(tmp, final); err != nil {
				t.Fatal(err)
			}
		}
		// A chunk still being written: Hadoop must skip it.
		tier2test.Put(t, s, tier2.TempChunkPath("sc", "st", seg, 1<<30), []byte("SEQ\x06half a header"))
	}
	uri := func(p string) string { return "hdfs://" + cluster.NameNode + s.full(p) }

	var paths []string
	for i, r := range want {
		if i == 0 || want[i-1].file != r.file {
			paths = append(paths, uri(r.file))
		}
	}
	check := func(what string, got []hadooptest.Record, file func(rec) string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.File != file(w) || g.Key != w.off || !bytes.Equal(g.Value, w.ev) {
				t.Fatalf("%s: record %d = {%s %d %d bytes}, want {%s %d %d bytes}", what, i, g.File, g.Key, len(g.Value), file(w), w.off, len(w.ev))
			}
		}
	}
	check("SequenceFile.Reader", hadooptest.SeqDump(t, paths...), func(r rec) string { return uri(r.file) })
	check("MapReduce", hadooptest.MapReduce(t, uri("sc")), func(r rec) string { return r.file[len("sc/"):] })
}

// TestNameNodeStopped: with the NameNode gone, every call fails with
// ErrUnavailable within a bound, and so does a new connection.
func TestNameNodeStopped(t *testing.T) {
	t.Parallel()
	h := hadooptest.StartCluster(t)
	opts := Options{NameNodes: []string{h.NameNode}, Root: "/down", Timeout: 5 * time.Second}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tier2test.Put(t, s, "a/f", []byte("before"))
	open, err := s.Create("a/open")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}

	calls := []struct {
		name string
		fn   func() error
	}{
		{"Stat", func() error { _, err := s.Stat("a/f"); return err }},
		{"List", func() error { _, err := s.List("a"); return err }},
		{"Open", func() error { _, err := s.Open("a/f"); return err }},
		{"Create", func() error { _, err := s.Create("a/g"); return err }},
		{"Rename", func() error { return s.Rename("a/f", "a/h") }},
		{"Remove", func() error { return s.Remove("a/f") }},
		{"RemoveAll", func() error { return s.RemoveAll("a") }},
		{"Writer", func() error {
			if _, err := open.Write(make([]byte, 1<<20)); err != nil {
				return err
			}
			return open.Close()
		}},
		{"New", func() error {
			s2, err := New(opts)
			if err == nil {
				s2.Close()
			}
			return err
		}},
	}
	for _, c := range calls {
		done := make(chan error, 1)
		go func() { done <- c.fn() }()
		select {
		case err := <-done:
			if !errors.Is(err, tier2.ErrUnavailable) {
				t.Errorf("%s with the NameNode stopped: %v, want ErrUnavailable", c.name, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s with the NameNode stopped: no answer in 60 s", c.name)
		}
	}
}
