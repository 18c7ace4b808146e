package headbench

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/hdfsgateway/datanode"
	"github.com/sluice-streams/sluice/hdfsgateway/namenode"
	"github.com/sluice-streams/sluice/hdfsgateway/webhdfs"
	"github.com/sluice-streams/sluice/internal/benchtest"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// Shape of a run; SLUICE_HEADBENCH_FILES, _MIB and _ROUNDS override them.
const (
	defaultFiles  = 4
	defaultMiB    = 64
	defaultRounds = 5
	// readBuf is the size of every read, Go's and Java's.
	readBuf = 1 << 20
	// jvmTimeout bounds one harness JVM: far more than it needs, so only
	// a hang reaches it.
	jvmTimeout = 15 * time.Minute
)

// jvmFlags run the reading JVM with its full compiler, as a Hadoop job's
// JVM runs (the harness's defaults stop at C1 to start quickly).
var jvmFlags = []string{"-Xmx1g", "-XX:+UseParallelGC", "-Djava.net.preferIPv4Stack=true"}

// BenchmarkHeadRead reads the same files through the head (hdfs:// and
// webhdfs://), from the disk (Go, and Hadoop's client with file://) and
// from a MiniDFSCluster (hdfs://), in the same minutes. The whole run is
// one op: run it with -benchtime 1x.
func BenchmarkHeadRead(b *testing.B) {
	nfiles := benchtest.EnvInt(b, "SLUICE_HEADBENCH_FILES", defaultFiles)
	mib := benchtest.EnvInt(b, "SLUICE_HEADBENCH_MIB", defaultMiB)
	rounds := benchtest.EnvInt(b, "SLUICE_HEADBENCH_ROUNDS", defaultRounds)
	// SLUICE_HEADBENCH_PACKET adds a second head whose data-transfer
	// server sends packets of that many bytes (head-hdfs-pKiB), for a
	// comparison in the same run.
	packet := benchtest.EnvInt(b, "SLUICE_HEADBENCH_PACKET", datanode.DefaultPacketSize)
	r := hadooptest.Harness(b)
	loadBefore := benchtest.Loadavg()

	dir := b.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	var paths []string // in the tree
	var total int64
	for i := range nfiles {
		p := tier2.ChunkPath("bench", "s", 0, int64(i)<<32)
		total += benchtest.WriteChunk(b, st, p, int64(i)<<32, mib<<20).Size
		paths = append(paths, p)
	}
	local := make([]string, len(paths))
	for i, p := range paths {
		local[i] = filepath.Join(dir, filepath.FromSlash(p))
	}

	v := view.New(st, viewtest.NewCatalog(map[string][]string{"bench": {"s"}}), view.Options{CatalogTTL: -1})
	rpcAddr, webAddr := startHead(b, v, datanode.DefaultPacketSize)
	nn := hadooptest.StartHDFS(b)

	uris := func(prefix string, ps []string) string {
		var out []string
		for _, p := range ps {
			out = append(out, prefix+p)
		}
		return strings.Join(out, ",")
	}
	var hdfsPaths []string
	for _, p := range local {
		hdfsPaths = append(hdfsPaths, "/bench/"+filepath.Base(p))
	}
	sources := []string{
		"head-hdfs=" + uris("hdfs://"+rpcAddr+"/", paths),
		"head-webhdfs=" + uris("webhdfs://"+webAddr+"/", paths),
		"java-file=" + uris("file://", local),
		"minidfs=" + uris("hdfs://"+nn, hdfsPaths),
	}
	labels := []string{"go-disk", "java-file", "minidfs", "head-hdfs", "head-webhdfs"}
	last := paths[len(paths)-1]
	checks := []string{"hdfs://" + rpcAddr + "/" + last, "webhdfs://" + webAddr + "/" + last}
	if packet != datanode.DefaultPacketSize {
		alt, _ := startHead(b, v, packet)
		label := fmt.Sprintf("head-hdfs-p%d", packet>>10)
		sources = append(sources, label+"="+uris("hdfs://"+alt+"/", paths))
		labels = append(labels, label)
		checks = append(checks, "hdfs://"+alt+"/"+last)
	}
	prepare(b, r, nn, local, checks)

	b.ResetTimer()
	res := map[string][]float64{}
	res["go-disk"] = goReads(b, local, total, rounds)
	cpu0 := selfCPU(b)
	jres, jvmCPU := javaReads(b, r, rounds, total, sources)
	headCPU := selfCPU(b) - cpu0
	res["go-disk"] = append(res["go-disk"], goReads(b, local, total, rounds)...)
	b.StopTimer()
	loadAfter := benchtest.Loadavg()
	clientCPU := map[string]float64{}
	for label, rs := range jres {
		var cpu time.Duration
		for _, r := range rs {
			res[label] = append(res[label], r.mbps)
			cpu += r.cpu
		}
		clientCPU[label] = cpu.Seconds() / (float64(total) * float64(len(rs)) / 1e9)
	}

	// The report goes to stdout whole: testing keeps only the first 10
	// lines of a benchmark's log.
	var rep strings.Builder
	fmt.Fprintf(&rep, "BenchmarkHeadRead: load %s before, %s after (1, 5, 15 min)\n", loadBefore, loadAfter)
	fmt.Fprintf(&rep, "%d files, %d bytes in all, %d rounds (after a warm-up), %d KiB reads, head packets of %d KiB; MB/s min / median / max, the reading thread's CPU s/GB:\n", nfiles, total, rounds, readBuf>>10, datanode.DefaultPacketSize>>10)
	med := map[string]float64{}
	for _, label := range labels {
		s := res[label]
		lo, m, hi := benchtest.Spread(s)
		med[label] = m
		cpu := "-"
		if c, ok := clientCPU[label]; ok {
			cpu = fmt.Sprintf("%.2f", c)
		}
		fmt.Fprintf(&rep, "  %-15s %6.0f / %6.0f / %6.0f  (%d rounds)  client CPU %s s/GB\n", label, lo, m, hi, len(s), cpu)
		b.ReportMetric(med[label], label+"-MB/s")
	}
	served := float64(total) * float64((len(labels)-3)*(rounds+1)) / 1e9 // the heads' sources, warm-up included
	fmt.Fprintf(&rep, "  the heads' process (all their sources, warm-up included): %.1f s CPU for %.2f GB = %.2f s/GB; the reading JVM: %.1f s CPU\n", headCPU.Seconds(), served, headCPU.Seconds()/served, jvmCPU.Seconds())
	for _, h := range []string{"head-hdfs", "head-webhdfs"} {
		fmt.Fprintf(&rep, "  %s / java-file = %.2f, / minidfs = %.2f, / go-disk = %.2f\n", h, med[h]/med["java-file"], med[h]/med["minidfs"], med[h]/med["go-disk"])
		b.ReportMetric(med[h]/med["java-file"], h+"/file")
		b.ReportMetric(med[h]/med["minidfs"], h+"/minidfs")
	}
	b.ReportMetric(0, "ns/op")
	fmt.Print(rep.String())
}

// startHead serves v as the gateway role does: namenode, datanode and
// webhdfs on 127.0.0.1, free ports, closed when b ends. It returns the
// RPC and HTTP addresses.
func startHead(b *testing.B, v *view.View, packet int) (rpcAddr, webAddr string) {
	var ls [3]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ls[i] = l
	}
	dataAddr := ls[1].Addr().String()
	rpc := namenode.New(v, namenode.Config{DataAddr: func() string { return dataAddr }, BlockSize: blocks.DefaultSize})
	data := datanode.New(v, datanode.Config{BlockSize: blocks.DefaultSize, PacketSize: packet})
	web := &http.Server{Handler: webhdfs.NewHandler(v, webhdfs.Config{BlockSize: blocks.DefaultSize})}
	errs := make(chan error, 3)
	go func() { errs <- rpc.Serve(ls[0]) }()
	go func() { errs <- data.Serve(ls[1]) }()
	go func() { errs <- web.Serve(ls[2]) }()
	b.Cleanup(func() {
		web.Close()
		rpc.Close()
		data.Close()
		for range 3 {
			if err := <-errs; err != nil && !errors.Is(err, namenode.ErrClosed) && !errors.Is(err, datanode.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
				b.Errorf("head server: %v", err)
			}
		}
	})
	return ls[0].Addr().String(), ls[2].Addr().String()
}

// run runs cmd, killed after jvmTimeout, and returns its stdout.
func run(b *testing.B, cmd *exec.Cmd) []byte {
	out, _ := runCPU(b, cmd)
	return out
}

// runCPU is run returning the process's CPU time too.
func runCPU(b *testing.B, cmd *exec.Cmd) ([]byte, time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	timer := time.AfterFunc(jvmTimeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		b.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", cmd.Args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// selfCPU is this process's CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// roundResult is one source's round in the JVM.
type roundResult struct {
	mbps float64
	cpu  time.Duration // the reading thread's
}

// prepare copies the local files into /bench of the MiniDFSCluster at nn
// with FsShell and checks that Hadoop's client reads the last local
// file's bytes from each of checks (the same file through the heads), in
// one JVM.
func prepare(b *testing.B, r *hadooptest.Runner, nn string, local, checks []string) {
	args := []string{"-mkdir", "-p", "hdfs://" + nn + "/bench", "--", "-put"}
	args = append(append(args, local...), "hdfs://"+nn+"/bench/")
	want, err := os.ReadFile(local[len(local)-1])
	if err != nil {
		b.Fatal(err)
	}
	line := fmt.Sprintf("READ 0 %d %x", len(want), md5.Sum(want))
	for _, u := range checks {
		args = append(args, "--", "@seek", u, "0", strconv.Itoa(len(want)))
	}
	out := run(b, r.Class("org.sluice.hadooptest.Batch", args...))
	if n := bytes.Count(out, []byte("=== EXIT 0")); n != 2+len(checks) {
		b.Fatalf("putting the files into HDFS and reading the heads:\n%s", out)
	}
	if n := bytes.Count(out, []byte(line)); n != len(checks) {
		b.Fatalf("%d of %d reads through the heads gave the file's bytes (%s):\n%s", n, len(checks), line, out)
	}
}

// javaReads runs the harness's SeqRead over sources and returns each
// label's rounds, checking that every round read total bytes, and the
// JVM's CPU time.
func javaReads(b *testing.B, r *hadooptest.Runner, rounds int, total int64, sources []string) (map[string][]roundResult, time.Duration) {
	args := append(slices.Clone(jvmFlags), "-cp", r.Classpath, "org.sluice.hadooptest.SeqRead", strconv.Itoa(rounds), strconv.Itoa(readBuf))
	out, cpu := runCPU(b, exec.Command(r.Java, append(args, sources...)...))
	res := map[string][]roundResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// READ round label bytes nanos cpunanos
		f := strings.Fields(sc.Text())
		if len(f) != 6 || f[0] != "READ" {
			continue
		}
		n, err1 := strconv.ParseInt(f[3], 10, 64)
		ns, err2 := strconv.ParseInt(f[4], 10, 64)
		cns, err3 := strconv.ParseInt(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ns <= 0 {
			b.Fatalf("SeqRead printed %q", sc.Text())
		}
		if n != total {
			b.Fatalf("round %s: %s read %d bytes, want %d", f[1], f[2], n, total)
		}
		res[f[2]] = append(res[f[2]], roundResult{mbps(n, time.Duration(ns)), time.Duration(cns)})
	}
	for _, s := range sources {
		label, _, _ := strings.Cut(s, "=")
		if len(res[label]) != rounds {
			b.Fatalf("SeqRead gave %d rounds of %s, want %d:\n%s", len(res[label]), label, rounds, out)
		}
	}
	return res, cpu
}

// goReads reads the files whole with readBuf reads, rounds times after
// one untimed round, and returns MB/s per round.
func goReads(b *testing.B, local []string, total int64, rounds int) []float64 {
	buf := make([]byte, readBuf)
	var out []float64
	for round := 0; round <= rounds; round++ {
		start := time.Now()
		var n int64
		for _, p := range local {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			for {
				k, err := f.Read(buf)
				n += int64(k)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
		}
		d := time.Since(start)
		if n != total {
			b.Fatalf("Go read %d bytes, want %d", n, total)
		}
		if round > 0 {
			out = append(out, mbps(n, d))
		}
	}
	return out
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }
