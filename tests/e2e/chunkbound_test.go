package e2e

import (
	"context"
	"fmt"
	"io"
	"path"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/backend"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// TestChunkFilesWithinTheBound: the standalone binary with tier 2 in a
// local directory and in a real HDFS (the MiniDFSCluster harness), and
// --tier-chunk-bytes 16384, a stream written with small events in blocks
// below the bound; once all of it is in tier 2, every chunk file is
// within the bound (small events' record keys and lengths once took
// chunk files to 1.8-2.3 times it) and the chunks hold every event
// exactly once, in order.
func TestChunkFilesWithinTheBound(t *testing.T) {
	const bound = 16384
	for _, kind := range []string{"fs", "hdfs"} {
		t.Run(kind, func(t *testing.T) {
			uri := "file://" + t.TempDir()
			if kind == "hdfs" {
				uri = "hdfs://" + hadooptest.StartHDFS(t) + "/sluice"
			}
			p := start(t, "standalone "+kind, nil, "standalone", "--data", t.TempDir(),
				"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--no-hdfs-head", "--no-nfs-head", "--no-s3-head",
				"--tier2", uri, "--tier-max-lag", "1s", "--tier-chunk-bytes", fmt.Sprint(bound))
			ctl := ctlclient.NewClient("http://" + p.Line(t, "controller listening on ", waitTimeout))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := ctl.CreateScope(ctx, "cb"); err != nil {
				t.Fatal(err)
			}
			if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: "cb", StreamName: "small",
				ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 1}}); err != nil {
				t.Fatal(err)
			}
			cl, err := client.New(ctx, ctl.BaseURL())
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			w, err := cl.NewWriter(ctx, "cb", "small", client.WithMaxBatch(4096)) // every block below the bound
			if err != nil {
				t.Fatal(err)
			}
			const n = 6000
			for i := range n {
				if _, err := w.Write(ctx, "k", []byte(fmt.Sprintf("%08d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the stream all in tier 2", waitTimeout, func() (bool, string) {
				st, err := ctl.StreamTier(ctx, "cb", "small")
				return err == nil && st.UntieredBytes == 0 && st.TieredBytes > 0, fmt.Sprintf("%+v, %v", st, err)
			})

			store, err := backend.Open(uri)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			dir := tier2.SegmentDir("cb", "small", 0)
			entries, err := store.List(dir)
			if err != nil {
				t.Fatalf("list %s: %v", dir, err)
			}
			next, chunks := 0, 0
			for _, e := range entries { // sorted: by first offset
				if _, ok := tier2.ParseChunkName(e.Name); !ok {
					continue
				}
				chunks++
				if e.Size > bound {
					t.Errorf("%s: %d bytes, over --tier-chunk-bytes %d (%.1fx)", e.Name, e.Size, bound, float64(e.Size)/bound)
				}
				f, err := store.Open(path.Join(dir, e.Name))
				if err != nil {
					t.Fatal(err)
				}
				r, err := seqfile.NewReader(io.NewSectionReader(f, 0, f.Size()))
				if err != nil {
					t.Fatalf("%s: %v", e.Name, err)
				}
				for {
					_, ev, err := r.NextEvent()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("%s: %v", e.Name, err)
					}
					if want := fmt.Sprintf("%08d", next); string(ev) != want {
						t.Fatalf("%s: event %q, want %q", e.Name, ev, want)
					}
					next++
				}
				f.Close()
			}
			if chunks < 4 || next != n {
				t.Fatalf("tier 2 holds %d events in %d chunks, want %d in several", next, chunks, n)
			}
		})
	}
}
