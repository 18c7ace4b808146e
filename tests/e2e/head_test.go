package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/hdfsgateway/blocks"
	"github.com/sluice-streams/sluice/internal/proctest"
	tier2fs "github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/view"
)

// headStandalone is a standalone server with its HDFS head on free ports
// and tier 2 in a temporary directory.
type headStandalone struct {
	p     *proctest.Proc
	ctl   *ctlclient.Client
	tier2 string // tier 2's directory
	rpc   string // NameNode RPC address (empty with --no-hdfs-head)
	web   string // WebHDFS address
	nfs   string // the NFS head's address
	s3    string // the S3 head's address
}

// startHeadStandalone runs `sluice standalone` with the head on port 0
// (or none, with noHead), a 1 s tiering lag and small chunks, so a few
// thousand events make several chunks per segment.
func startHeadStandalone(t *testing.T, noHead bool) *headStandalone {
	t.Helper()
	s := &headStandalone{tier2: t.TempDir()}
	args := []string{"--log-level", "info", "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
		"--tier2", s.tier2, "--tier-max-lag", "1s", "--tier-chunk-bytes", "65536"}
	if noHead {
		args = append(args, "--no-hdfs-head", "--no-nfs-head", "--no-s3-head")
	} else {
		args = append(args, "--hdfs-rpc-addr", "127.0.0.1:0", "--hdfs-data-addr", "127.0.0.1:0", "--webhdfs-addr", "127.0.0.1:0", "--nfs-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0")
	}
	s.p = start(t, "standalone", nil, args...)
	s.ctl = ctlclient.NewClient("http://" + s.p.Line(t, "controller listening on ", waitTimeout))
	if !noHead {
		s.rpc = s.p.Line(t, "hdfs head (rpc) listening on ", waitTimeout)
		s.web = s.p.Line(t, "webhdfs listening on ", waitTimeout)
		s.nfs = s.p.Line(t, "nfs head listening on ", waitTimeout)
		s.s3 = s.p.Line(t, "s3 head listening on ", waitTimeout)
	}
	return s
}

// write creates scope/stream with two segments, writes evs and waits until
// every byte is in tier 2.
func (s *headStandalone) write(t *testing.T, scope, stream string, evs [][]byte) {
	t.Helper()
	proctest.WriteTiered(t, s.ctl, scope, stream, 2, evs, waitTimeout)
}

// tree is what the head must serve: tier2/view over the same directory
// and the same controller, walked from the root. Files map to their bytes.
type tree struct {
	dirs  []string          // every directory but the root, sorted
	files map[string][]byte // chunk path -> its bytes in tier 2
}

func (s *headStandalone) tree(t *testing.T) tree {
	t.Helper()
	st, err := tier2fs.New(s.tier2)
	if err != nil {
		t.Fatal(err)
	}
	v := view.New(st, view.CatalogOf(s.ctl), view.Options{})
	ctx := context.Background()
	tr := tree{files: map[string][]byte{}}
	var walk func(dir string)
	walk = func(dir string) {
		es, err := v.List(ctx, dir)
		if err != nil {
			t.Fatalf("view list %s: %v", dir, err)
		}
		for _, e := range es {
			p := path.Join(dir, e.Name)
			if e.IsDir {
				tr.dirs = append(tr.dirs, p)
				walk(p)
				continue
			}
			b, err := os.ReadFile(s.tier2 + p)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(b)) != e.Size {
				t.Fatalf("%s: view says %d bytes, tier 2 has %d", p, e.Size, len(b))
			}
			tr.files[p] = b
		}
	}
	walk("/")
	slices.Sort(tr.dirs)
	return tr
}

func (tr tree) chunkPaths() []string {
	var ps []string
	for p := range tr.files {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// textEvents are printable events of varied lengths.
func textEvents(n int) [][]byte {
	evs := make([][]byte, n)
	for i := range evs {
		evs[i] = []byte(fmt.Sprintf("event-%05d-%s", i, strings.Repeat("x", i%100)))
	}
	return evs
}

// binaryEvents covers every byte value, alone and together, the bytes
// text formats split on, Hive's null marker, base64-looking strings,
// invalid UTF-8 and large random events.
func binaryEvents() [][]byte {
	var evs [][]byte
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
		evs = append(evs, []byte{byte(i)})
	}
	evs = append(evs, all, append(append([]byte{}, all...), all...))
	for _, s := range []string{"\n", "\r\n", "a\nb", "\x01", "a\x01b", `\N`, `\`, `\\`, "QUJD", "SGVsbG8=", "aGk=", "////",
		"\xff", "\xc3\x28", "\x00\x00", "héllo ✓"} {
		evs = append(evs, []byte(s))
	}
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{1000, 70000, 200000} {
		b := make([]byte, n)
		r.Read(b)
		evs = append(evs, b)
	}
	return evs
}

// hdfsClient is colinmarc/hdfs (the Go HDFS client) on the head's
// NameNode RPC address.
func hdfsClient(t *testing.T, rpc string) *hdfs.Client {
	t.Helper()
	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{rpc}, User: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestHeadGoClient reads the standalone's tier 2 through its HDFS head
// with colinmarc/hdfs: a recursive walk equals the view, every chunk read
// whole, at random positions (ReadAt) and after Seek is byte-identical to
// tier 2 (block reads through the data-transfer server), and every write
// is refused with os.ErrPermission.
func TestHeadGoClient(t *testing.T) {
	s := startHeadStandalone(t, false)
	s.write(t, "go", "text", textEvents(3000))
	s.write(t, "go", "bin", binaryEvents())
	want := s.tree(t)
	if len(want.files) < 4 {
		t.Fatalf("tier 2 has %d chunks, want several", len(want.files))
	}
	c := hdfsClient(t, s.rpc)

	var dirs []string
	files := map[string]int64{}
	err := c.Walk("/", func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		switch {
		case p == "/":
		case fi.IsDir():
			dirs = append(dirs, p)
			if fi.Mode().Perm() != 0o555 {
				t.Errorf("%s: mode %v, want dr-xr-xr-x", p, fi.Mode())
			}
		default:
			files[p] = fi.Size()
			if fi.Mode().Perm() != 0o444 {
				t.Errorf("%s: mode %v, want -r--r--r--", p, fi.Mode())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	if !slices.Equal(dirs, want.dirs) {
		t.Fatalf("directories through the head:\n%v\nthe view:\n%v", dirs, want.dirs)
	}
	if len(files) != len(want.files) {
		t.Fatalf("%d files through the head, the view has %d", len(files), len(want.files))
	}

	r := rand.New(rand.NewSource(2))
	for _, p := range want.chunkPaths() {
		b := want.files[p]
		if files[p] != int64(len(b)) {
			t.Fatalf("%s: %d bytes through the head, %d in tier 2", p, files[p], len(b))
		}
		f, err := c.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s: read %d bytes (%v), tier 2 has %d, equal: %v", p, len(got), err, len(b), bytes.Equal(got, b))
		}
		for range 20 {
			off := r.Int63n(int64(len(b)))
			n := min(int64(r.Intn(70000)+1), int64(len(b))-off)
			buf := make([]byte, n)
			if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, b[off:off+n]) {
				t.Fatalf("%s: ReadAt(%d bytes at %d): %v, equal: %v", p, n, off, err, bytes.Equal(buf, b[off:off+n]))
			}
		}
		for _, off := range []int64{0, int64(len(b)) / 2, int64(len(b)) - 1, int64(len(b)) / 3} {
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			rest, err := io.ReadAll(f)
			if err != nil || !bytes.Equal(rest, b[off:]) {
				t.Fatalf("%s: after Seek(%d) read %d bytes (%v), want %d", p, off, len(rest), err, len(b)-int(off))
			}
		}
		if n, err := f.ReadAt(make([]byte, 1), int64(len(b))); n != 0 || err != io.EOF {
			t.Fatalf("%s: ReadAt at the end: %d, %v; want 0, EOF", p, n, err)
		}
		f.Close()
	}

	chunk := want.chunkPaths()[0]
	refused := map[string]error{}
	if w, err := c.Create("/go/text/new.seq"); err == nil {
		err = w.Close()
		refused["create"] = err
	} else {
		refused["create"] = err
	}
	refused["mkdir"] = c.Mkdir("/go/newdir", 0o755)
	refused["mkdirall"] = c.MkdirAll("/newscope/x", 0o755)
	refused["remove"] = c.Remove(chunk)
	refused["rename"] = c.Rename(chunk, chunk+".x")
	refused["chmod"] = c.Chmod(chunk, 0o777)
	refused["append"] = func() error {
		w, err := c.Append(chunk)
		if err == nil {
			w.Close()
		}
		return err
	}()
	for op, err := range refused {
		if !errors.Is(err, os.ErrPermission) {
			t.Errorf("%s through the head: %v, want permission denied", op, err)
		}
	}
	if got, err := c.ReadFile(chunk); err != nil || !bytes.Equal(got, want.files[chunk]) {
		t.Fatalf("%s after the refused writes: %d bytes, %v", chunk, len(got), err)
	}
}

// hdfsCLI runs Debian's hdfs-cli (the `hdfs` command, colinmarc/hdfs's
// CLI, scripts/test-deps.sh installs it) against the NameNode at rpc and
// returns its stdout, stderr and exit error.
func hdfsCLI(t *testing.T, rpc string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	bin, lerr := exec.LookPath("hdfs")
	if lerr != nil {
		t.Fatalf("Debian's hdfs-cli is not installed (run scripts/test-deps.sh): %v", lerr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// HADOOP_CONF_DIR empty: no site configuration of this machine applies.
	cmd.Env = append(os.Environ(), "HADOOP_NAMENODE="+rpc, "HADOOP_USER_NAME=e2e", "HADOOP_CONF_DIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// TestHeadHdfsCLI has Debian's hdfs-cli list, cat, get and checksum the
// standalone's chunks through its HDFS head (byte-identical to tier 2),
// and checks that put, mkdir, rm, mv and chmod fail with a permission
// error and change nothing.
func TestHeadHdfsCLI(t *testing.T) {
	s := startHeadStandalone(t, false)
	s.write(t, "cli", "bin", binaryEvents())
	want := s.tree(t)
	chunks := want.chunkPaths()
	run := func(args ...string) []byte {
		t.Helper()
		out, errb, err := hdfsCLI(t, s.rpc, args...)
		if err != nil {
			t.Fatalf("hdfs %s: %v\nstderr: %s", strings.Join(args, " "), err, errb)
		}
		return out
	}

	if got := strings.Fields(string(run("ls", "/"))); !slices.Equal(got, []string{"cli"}) {
		t.Fatalf("hdfs ls /: %q", got)
	}
	// ls -l of a segment directory: one line per chunk, its mode and size.
	for _, seg := range want.dirs {
		if strings.Count(seg, "/") != 3 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(run("ls", "-l", seg))), "\n")
		var n int
		for _, p := range chunks {
			if path.Dir(p) != seg {
				continue
			}
			line := lines[n]
			n++
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "-r--r--r--" || f[1] != "sluice" || f[2] != "supergroup" || f[3] != fmt.Sprint(len(want.files[p])) || f[len(f)-1] != path.Base(p) {
				t.Fatalf("hdfs ls -l %s: %q, want %s of %d bytes, -r--r--r-- sluice supergroup", seg, line, path.Base(p), len(want.files[p]))
			}
		}
		if n != len(lines) {
			t.Fatalf("hdfs ls -l %s: %d lines, the view has %d chunks:\n%s", seg, len(lines), n, strings.Join(lines, "\n"))
		}
	}

	local := t.TempDir()
	var all []byte
	for i, p := range chunks {
		b := want.files[p]
		all = append(all, b...)
		if got := run("cat", p); !bytes.Equal(got, b) {
			t.Fatalf("hdfs cat %s: %d bytes, tier 2 has %d, equal: %v", p, len(got), len(b), bytes.Equal(got, b))
		}
		dst := fmt.Sprintf("%s/%d.seq", local, i)
		run("get", p, dst)
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("hdfs get %s: %d bytes (%v), tier 2 has %d", p, len(got), err, len(b))
		}
		// hdfs checksum prints the MD5 of hadoop fs -checksum's
		// MD5-of-MD5-of-CRC32C, from the datanode's block checksums.
		fc, err := blocks.Checksum(bytes.NewReader(b), p, int64(len(b)), blocks.DefaultSize)
		if err != nil {
			t.Fatal(err)
		}
		sum := fc.MD5
		if got := strings.Fields(string(run("checksum", p))); len(got) != 2 || got[0] != hex.EncodeToString(sum[:]) || got[1] != p {
			t.Fatalf("hdfs checksum %s: %q, want %x", p, got, sum)
		}
	}
	// cat of several files concatenates them.
	if got := run(append([]string{"cat"}, chunks...)...); !bytes.Equal(got, all) {
		t.Fatalf("hdfs cat of every chunk: %d bytes, want %d", len(got), len(all))
	}

	src := local + "/0.seq"
	for _, args := range [][]string{
		{"put", src, "/cli/bin/new.seq"},
		{"put", src, path.Dir(chunks[0]) + "/new.seq"},
		{"mkdir", "/cli/newdir"},
		{"mkdir", "-p", "/newscope/a/b"},
		{"rm", chunks[0]},
		{"rm", "-r", "/cli"},
		{"mv", chunks[0], chunks[0] + ".moved"},
		{"chmod", "777", chunks[0]},
		{"touch", "/cli/bin/touched"},
	} {
		_, errb, err := hdfsCLI(t, s.rpc, args...)
		if err == nil || !strings.Contains(strings.ToLower(string(errb)), "permission denied") {
			t.Errorf("hdfs %s: %v, stderr %q; want a permission denied error", strings.Join(args, " "), err, errb)
		}
	}
	if got := s.tree(t); !slices.Equal(got.dirs, want.dirs) || !slices.Equal(got.chunkPaths(), chunks) {
		t.Fatalf("the refused writes changed tier 2: %v %v", got.dirs, got.chunkPaths())
	}
	if got := run("cat", chunks[0]); !bytes.Equal(got, want.files[chunks[0]]) {
		t.Fatalf("hdfs cat %s after the refused writes: %d bytes", chunks[0], len(got))
	}
}

// shellMark ends each command's output in the harness's Shells class.
const shellMark = "\n@@@ shells exit "

// jvmTimeout bounds one harness JVM: far more than it needs, so only a
// hang reaches it.
const jvmTimeout = 3 * time.Minute

// fsShells runs Hadoop's FsShell commands in one JVM of the harness
// (org.sluice.hadooptest.Shells) and returns each one's stdout and exit
// status.
func fsShells(t *testing.T, cmds ...[]string) (outs [][]byte, rcs []int) {
	t.Helper()
	var args []string
	for _, c := range cmds {
		args = append(append(args, c...), "--end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), jvmTimeout)
	defer cancel()
	cmd := hadooptest.Harness(t).Class("org.sluice.hadooptest.Shells", args...)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = append(os.Environ(), "TZ=UTC", "HADOOP_USER_NAME=e2e")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness Shells: %v\nstderr:\n%s", err, stderr.Bytes())
	}
	b := stdout.Bytes()
	for len(b) > 0 {
		i := bytes.Index(b, []byte(shellMark))
		nl := bytes.IndexByte(b[max(i, 0)+len(shellMark):], '\n')
		if i < 0 || nl < 0 {
			t.Fatalf("harness Shells: output without its end mark:\n%s\nstderr:\n%s", b, stderr.Bytes())
		}
		rest := b[i+len(shellMark):]
		rc, err := strconv.Atoi(string(rest[:nl]))
		if err != nil {
			t.Fatal(err)
		}
		outs, rcs = append(outs, b[:i]), append(rcs, rc)
		b = rest[nl+1:]
	}
	if len(outs) != len(cmds) {
		t.Fatalf("harness Shells: %d results for %d commands\nstderr:\n%s", len(outs), len(cmds), stderr.Bytes())
	}
	return outs, rcs
}

// TestHDFSGatewayProcess runs `sluice hdfs-gateway` as its own process
// against a standalone that serves no head: it prints its three
// addresses, Hadoop's FsShell lists and cats the chunks through it (small
// blocks, so a chunk is several block reads), a deleted stream leaves its
// listing once the catalog's TTL has passed, and SIGTERM stops it with
// exit 0. A controller without tier 2 makes it fail with one clear line.
func TestHDFSGatewayProcess(t *testing.T) {
	s := startHeadStandalone(t, true)
	s.write(t, "gw", "keep", textEvents(2000))
	s.write(t, "gw", "gone", textEvents(500))
	want := s.tree(t)
	chunks := want.chunkPaths()

	g := start(t, "hdfs-gateway", nil, "--controller", s.ctl.BaseURL(), "--log-level", "info", "hdfs-gateway",
		"--rpc-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--block-size", "16384")
	rpc := g.Line(t, "hdfs head (rpc) listening on ", waitTimeout)
	if data := g.Line(t, "hdfs head (data) listening on ", waitTimeout); !strings.HasPrefix(data, "127.0.0.1:") {
		t.Fatalf("data address %q", data)
	}
	web := g.Line(t, "webhdfs listening on ", waitTimeout)

	root := "hdfs://" + rpc
	cmds := [][]string{{"-ls", "-R", root + "/"}, {"-ls", "webhdfs://" + web + "/gw"}}
	for _, p := range chunks {
		cmds = append(cmds, []string{"-cat", root + p})
	}
	cmds = append(cmds, []string{"-mkdir", root + "/gw/x"})
	outs, rcs := fsShells(t, cmds...)
	for i, rc := range rcs[:len(rcs)-1] {
		if rc != 0 {
			t.Fatalf("hadoop fs %s: exit %d", strings.Join(cmds[i], " "), rc)
		}
	}
	if rcs[len(rcs)-1] == 0 {
		t.Fatalf("hadoop fs -mkdir through the gateway succeeded")
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(outs[0])), "\n") {
		f := strings.Fields(line)
		if len(f) != 8 {
			t.Fatalf("hadoop fs -ls -R: line %q", line)
		}
		p := strings.TrimPrefix(f[7], root)
		listed = append(listed, p)
		if b, ok := want.files[p]; ok && (f[0] != "-r--r--r--" || f[4] != fmt.Sprint(len(b))) {
			t.Fatalf("hadoop fs -ls -R: %q, want -r--r--r-- and %d bytes", line, len(b))
		}
	}
	wantListed := append(slices.Clone(want.dirs), chunks...)
	slices.Sort(wantListed)
	slices.Sort(listed)
	if !slices.Equal(listed, wantListed) {
		t.Fatalf("hadoop fs -ls -R through the gateway:\n%v\nthe view:\n%v", listed, wantListed)
	}
	if !strings.Contains(string(outs[1]), "/gw/gone") || !strings.Contains(string(outs[1]), "/gw/keep") {
		t.Fatalf("hadoop fs -ls webhdfs://%s/gw:\n%s", web, outs[1])
	}
	for i, p := range chunks {
		if got := outs[2+i]; !bytes.Equal(got, want.files[p]) {
			t.Fatalf("hadoop fs -cat %s: %d bytes, tier 2 has %d", p, len(got), len(want.files[p]))
		}
	}

	// A deleted stream leaves the listing once the catalog is refreshed
	// (its TTL is 1 s); the other stays.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ctl.SealStream(ctx, "gw", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.ctl.DeleteStream(ctx, "gw", "gone"); err != nil {
		t.Fatal(err)
	}
	c := hdfsClient(t, rpc)
	waitFor(t, "the deleted stream to leave the gateway's listing", waitTimeout, func() (bool, string) {
		fis, err := c.ReadDir("/gw")
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, fi := range fis {
			names = append(names, fi.Name())
		}
		return slices.Equal(names, []string{"keep"}), fmt.Sprint(names)
	})
	if _, err := c.Stat("/gw/gone"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of the deleted stream: %v, want not found", err)
	}

	g.Stop(t, waitTimeout)

	// A controller without tier 2: one clear line, a non-zero exit.
	bare := start(t, "standalone without tier 2", nil, "standalone", "--data", t.TempDir(),
		"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--tier2", "none", "--no-hdfs-head")
	url := "http://" + bare.Line(t, "controller listening on ", waitTimeout)
	cmd := exec.Command(sluiceBin, "--controller", url, "hdfs-gateway", "--rpc-addr", "127.0.0.1:0", "--data-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "has no tier 2") || stdout.Len() != 0 {
		t.Fatalf("hdfs-gateway against a controller without tier 2: %v\nstdout: %s\nstderr: %s\nwant a non-zero exit and one line saying it has no tier 2", err, stdout.Bytes(), stderr.Bytes())
	}
}
