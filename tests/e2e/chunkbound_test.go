package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// TestChunkFilesWithinTheBound: the standalone binary with a local tier 2
// and --tier-chunk-bytes 16384, a stream written with small events in
// blocks below the bound; once all of it is in tier 2, every chunk file
// is within the bound (small events' record keys and lengths once took
// chunk files to 2.3 times it) and the chunks hold every event exactly
// once, in order.
func TestChunkFilesWithinTheBound(t *testing.T) {
	const bound = 16384
	tier2 := t.TempDir()
	p := start(t, "standalone", nil, "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--no-hdfs-head", "--no-nfs-head", "--no-s3-head",
		"--tier2", tier2, "--tier-max-lag", "1s", "--tier-chunk-bytes", fmt.Sprint(bound))
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

	files, err := filepath.Glob(filepath.Join(tier2, "cb", "small", "segment=*", "*.seq"))
	if err != nil || len(files) < 4 {
		t.Fatalf("chunks: %v, %v", files, err)
	}
	next := 0
	for _, name := range files { // sorted: by segment, then first offset
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > bound {
			t.Errorf("%s: %d bytes, over --tier-chunk-bytes %d (%.1fx)", filepath.Base(name), fi.Size(), bound, float64(fi.Size())/bound)
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := seqfile.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			_, ev, err := r.NextEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want := fmt.Sprintf("%08d", next); string(ev) != want {
				t.Fatalf("%s: event %q, want %q", name, ev, want)
			}
			next++
		}
		f.Close()
	}
	if next != n {
		t.Fatalf("tier 2 holds %d events, want %d", next, n)
	}
}
