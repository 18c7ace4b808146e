package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
)

// TestTier2EndToEnd runs the standalone server on each tier-2 backend (a
// directory, and a real HDFS from Hadoop's MiniDFSCluster), writes events,
// waits until `stream describe`'s source (the tier route) says every byte
// is in tier 2, reads the stream back with a cache too small to hold a
// block (so from tier 2), and has Hadoop itself read the chunks: its own
// SequenceFile.Reader on every chunk, and a local MapReduce job over the
// stream's directory. Keys must be the events' offsets, values the events.
func TestTier2EndToEnd(t *testing.T) {
	for _, backend := range []string{"fs", "hdfs"} {
		t.Run(backend, func(t *testing.T) {
			dataDir := t.TempDir()
			var uri, local string
			switch backend {
			case "fs":
				local = t.TempDir()
				uri = "file://" + local
			case "hdfs":
				uri = "hdfs://" + hadooptest.StartHDFS(t) + "/sluice"
			}
			p := start(t, "standalone "+backend, nil, "--log-level", "info", "standalone", "--data", dataDir,
				"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--hdfs-rpc-addr", "127.0.0.1:0", "--hdfs-data-addr", "127.0.0.1:0", "--webhdfs-addr", "127.0.0.1:0", "--nfs-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0",
				"--tier2", uri, "--tier-max-lag", "1s", "--tier-chunk-bytes", "65536", "--cache-size", "1")
			ctl := ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", waitTimeout))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			want := map[string]bool{}
			var evs [][]byte
			for i := range 3000 {
				ev := fmt.Sprintf("event-%05d-%s", i, strings.Repeat("x", i%100))
				want[ev] = true
				evs = append(evs, []byte(ev))
			}
			proctest.WriteTiered(t, ctl, "t2", "events", 2, evs, waitTimeout)
			cl, err := client.New(ctx, ctl.BaseURL())
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()

			// Read back through the node: from tier 2 (the cache holds nothing).
			r, err := cl.NewReader(ctx, "t2", "events")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			seen := map[string]bool{}
			for len(seen) < len(want) {
				ev, err := r.ReadNext(ctx)
				if err != nil {
					t.Fatalf("after %d events: %v", len(seen), err)
				}
				if !want[string(ev.Data)] || seen[string(ev.Data)] {
					t.Fatalf("read %q: unknown or repeated", ev.Data)
				}
				seen[string(ev.Data)] = true
			}

			// Hadoop reads the chunks in place.
			streamDir := uri + "/t2/events"
			var chunks []string
			if backend == "fs" {
				chunks, _ = filepath.Glob(filepath.Join(local, "t2", "events", "segment=*", "*.seq"))
			} else {
				for _, f := range hadooptest.MapReduce(t, streamDir) {
					chunks = append(chunks, streamDir+"/"+f.File)
				}
				chunks = dedupe(chunks)
			}
			if len(chunks) < 2 {
				t.Fatalf("chunks: %v", chunks)
			}
			byReader := hadoopEvents(t, hadooptest.SeqDump(t, chunks...), want)
			byJob := hadoopEvents(t, hadooptest.MapReduce(t, streamDir), want)
			if byReader != len(want) || byJob != len(want) {
				t.Fatalf("Hadoop read %d events with SequenceFile.Reader and %d with MapReduce, want %d each", byReader, byJob, len(want))
			}

			// And through the standalone's HDFS head, wherever tier 2 lives:
			// the same job over hdfs:// (NameNode RPC and block reads) and
			// over webhdfs://, every event exactly once.
			heads := map[string]string{
				"hdfs":    "hdfs://" + p.Line(t, "hdfs head (rpc) listening on ", waitTimeout),
				"webhdfs": "webhdfs://" + p.Line(t, "webhdfs listening on ", waitTimeout),
			}
			for _, via := range []string{"hdfs", "webhdfs"} {
				if n := hadoopEvents(t, hadooptest.MapReduce(t, heads[via]+"/t2/events"), want); n != len(want) {
					t.Fatalf("MapReduce through the head over %s read %d events, want %d", via, n, len(want))
				}
			}
		})
	}
}

func dedupe(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// hadoopEvents checks what Hadoop read: per file, keys are consecutive
// event offsets (each the previous key + 4 + the previous value's length)
// and values are events that were written, each once; it returns how many.
func hadoopEvents(t *testing.T, recs []hadooptest.Record, want map[string]bool) int {
	t.Helper()
	seen := map[string]bool{}
	next := map[string]int64{}
	for _, r := range recs {
		if n, ok := next[r.File]; ok && r.Key != n {
			t.Fatalf("%s: key %d, want the next event's offset %d", r.File, r.Key, n)
		}
		next[r.File] = r.Key + 4 + int64(len(r.Value))
		v := string(r.Value)
		if !want[v] || seen[v] {
			t.Fatalf("%s: value %q at key %d: unknown or repeated", r.File, v, r.Key)
		}
		seen[v] = true
	}
	return len(seen)
}
