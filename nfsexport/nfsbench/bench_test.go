package nfsbench

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/nfsexport"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// Shape of a run; SLUICE_NFSBENCH_FILES, _MIB and _ROUNDS override them.
const (
	defaultFiles  = 4
	defaultMiB    = 64
	defaultRounds = 5
	toolTimeout   = 10 * time.Minute // bounds a hung client only
)

// BenchmarkNFSRead reads the same files with nfs-cat through the head and
// with cat from the disk, alternating, round after round; each file's
// output goes through a pipe to the benchmark, which counts and discards
// it. The whole run is one op: run it with -benchtime 1x.
func BenchmarkNFSRead(b *testing.B) {
	nfiles := benchtest.EnvInt(b, "SLUICE_NFSBENCH_FILES", defaultFiles)
	mib := benchtest.EnvInt(b, "SLUICE_NFSBENCH_MIB", defaultMiB)
	rounds := benchtest.EnvInt(b, "SLUICE_NFSBENCH_ROUNDS", defaultRounds)
	for _, tool := range []string{"nfs-cat", "cat"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s: %v (scripts/test-deps.sh installs libnfs-utils)", tool, err)
		}
	}
	loadBefore := benchtest.Loadavg()

	dir := b.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	var paths, local []string
	var total int64
	for i := range nfiles {
		p := tier2.ChunkPath("bench", "s", 0, int64(i)<<32)
		total += benchtest.WriteChunk(b, st, p, int64(i)<<32, mib<<20).Size
		paths = append(paths, p)
		local = append(local, filepath.Join(dir, filepath.FromSlash(p)))
	}

	v := view.New(st, viewtest.NewCatalog(map[string][]string{"bench": {"s"}}), view.Options{CatalogTTL: -1})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := nfsexport.New(v, nfsexport.Config{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	b.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nfsexport.ErrClosed {
			b.Errorf("Serve: %v", err)
		}
	})
	port := l.Addr().(*net.TCPAddr).Port
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = fmt.Sprintf("nfs://127.0.0.1/%s?version=3&nfsport=%d&mountport=%d&auto-traverse-mounts=0", p, port, port)
	}

	// Correctness first, and the warm-up round: every file through the
	// head is the file.
	for i := range paths {
		want, err := os.ReadFile(local[i])
		if err != nil {
			b.Fatal(err)
		}
		var got bytes.Buffer
		readAll(b, &got, "nfs-cat", urls[i])
		if md5.Sum(got.Bytes()) != md5.Sum(want) {
			b.Fatalf("nfs-cat %s: %d bytes, not the file's %d", paths[i], got.Len(), len(want))
		}
		readAll(b, io.Discard, "cat", local[i])
	}

	b.ResetTimer()
	res := map[string][]float64{}
	for range rounds {
		res["nfs-cat"] = append(res["nfs-cat"], readRound(b, "nfs-cat", urls, total))
		res["cat-disk"] = append(res["cat-disk"], readRound(b, "cat", local, total))
	}
	b.StopTimer()
	loadAfter := benchtest.Loadavg()

	var rep strings.Builder
	fmt.Fprintf(&rep, "BenchmarkNFSRead: load %s before, %s after (1, 5, 15 min)\n", loadBefore, loadAfter)
	fmt.Fprintf(&rep, "%d files, %d bytes in all, %d rounds (after a warm-up); MB/s min / median / max:\n", nfiles, total, rounds)
	med := map[string]float64{}
	for _, label := range []string{"cat-disk", "nfs-cat"} {
		lo, m, hi := benchtest.Spread(res[label])
		med[label] = m
		fmt.Fprintf(&rep, "  %-9s %6.0f / %6.0f / %6.0f\n", label, lo, m, hi)
		b.ReportMetric(med[label], label+"-MB/s")
	}
	fmt.Fprintf(&rep, "  nfs-cat / cat-disk = %.2f\n", med["nfs-cat"]/med["cat-disk"])
	b.ReportMetric(med["nfs-cat"]/med["cat-disk"], "nfs/disk")
	b.ReportMetric(0, "ns/op")
	fmt.Print(rep.String())
}

// readRound reads every source with tool, one after the other, and
// returns MB/s (10^6 bytes/s) over the round.
func readRound(b *testing.B, tool string, srcs []string, total int64) float64 {
	start := time.Now()
	var n int64
	for _, s := range srcs {
		n += readAll(b, io.Discard, tool, s)
	}
	if n != total {
		b.Fatalf("%s read %d bytes, want %d", tool, n, total)
	}
	return float64(n) / time.Since(start).Seconds() / 1e6
}

// readAll runs tool src with its stdout into w and returns the bytes.
func readAll(b *testing.B, w io.Writer, tool, src string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, src)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	n, err := io.CopyBuffer(w, out, make([]byte, 1<<20))
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("%w: %s", werr, stderr.String())
	}
	if err != nil {
		b.Fatalf("%s %s: %v", tool, src, err)
	}
	return n
}
