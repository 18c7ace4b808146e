package webhdfs

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http/httptest"
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
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	t2hdfs "github.com/sluice-streams/sluice/tier2/hdfs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// shellResult is what one FsShell command printed and returned.
type shellResult struct {
	stdout, stderr []byte
	rc             int
}

// shellMark ends each command's output (the harness's Shells class).
const shellMark = "\n@@@ shells exit "

// jvmTimeout bounds one harness JVM: far more than it needs, so only a
// hang reaches it.
const jvmTimeout = 3 * time.Minute

// shells runs FsShell commands in one JVM of the harness (Shells) and
// returns each one's output.
func shells(t *testing.T, cmds ...[]string) []shellResult {
	t.Helper()
	var args []string
	for _, c := range cmds {
		args = append(append(args, c...), "--end")
	}
	cmd := hadooptest.Harness(t).Class("org.sluice.hadooptest.Shells", args...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(jvmTimeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		t.Fatalf("harness Shells: %v\nstderr:\n%s", err, stderr.Bytes())
	}
	outs, rcs, err := splitShells(stdout.Bytes())
	if err != nil || len(outs) != len(cmds) {
		t.Fatalf("harness Shells stdout (%v): %d commands of %d\n%s\nstderr:\n%s", err, len(outs), len(cmds), stdout.Bytes(), stderr.Bytes())
	}
	errs, _, err := splitShells(stderr.Bytes())
	if err != nil || len(errs) != len(cmds) {
		t.Fatalf("harness Shells stderr (%v): %d commands of %d\n%s", err, len(errs), len(cmds), stderr.Bytes())
	}
	res := make([]shellResult, len(cmds))
	for i := range cmds {
		res[i] = shellResult{outs[i], errs[i], rcs[i]}
	}
	return res
}

// splitShells splits a stream of Shells' output at its marks.
func splitShells(b []byte) (outs [][]byte, rcs []int, err error) {
	for len(b) > 0 {
		i := bytes.Index(b, []byte(shellMark))
		if i < 0 {
			return outs, rcs, fmt.Errorf("%d bytes after the last mark", len(b))
		}
		rest := b[i+len(shellMark):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return outs, rcs, fmt.Errorf("mark without newline")
		}
		rc, err := strconv.Atoi(string(rest[:nl]))
		if err != nil {
			return outs, rcs, err
		}
		outs, rcs = append(outs, b[:i]), append(rcs, rc)
		b = rest[nl+1:]
	}
	return outs, rcs, nil
}

// textOf is what "hadoop fs -text" prints for records: the LongWritable
// key, a tab, BytesWritable's toString (hex bytes separated by spaces).
func textOf(recs []record) string {
	var sb strings.Builder
	for _, r := range recs {
		sb.WriteString(strconv.FormatInt(r.off, 10))
		sb.WriteByte('\t')
		for i, c := range r.event {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(hex.EncodeToString([]byte{c}))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// lsLine is one line of "ls" output, split into fields.
func lsLine(e view.Entry, base string) string {
	perm, repl := "-r--r--r--", "1"
	if e.IsDir {
		perm, repl = "dr-xr-xr-x", "-"
	}
	return strings.Join([]string{perm, repl, view.Owner, view.Group, strconv.FormatInt(e.Size, 10),
		e.ModTime.UTC().Format("2006-01-02 15:04"), base + "/" + e.Path}, " ")
}

// fields normalises FsShell's column padding.
func fields(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !strings.HasPrefix(l, "Found ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// walk returns every entry under p, depth first in name order (the order
// of "ls -R").
func walk(t *testing.T, v *view.View, p string) []view.Entry {
	t.Helper()
	es, err := v.List(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []view.Entry
	for _, e := range es {
		out = append(out, e)
		if e.IsDir {
			out = append(out, walk(t, v, e.Path)...)
		}
	}
	return out
}

// snapshot describes every file and directory of a tier-2 root.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHadoopReadsThroughWebHDFS reads the tree with Hadoop's own FsShell
// over webhdfs://, every command in one JVM, and checks each output
// against the view and the chunks' bytes and events.
func TestHadoopReadsThroughWebHDFS(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	base := "webhdfs://" + strings.TrimPrefix(f.srv.URL, "http://")
	small := tier2.ChunkPath("sc", "st", 0, 0)
	block := tier2.ChunkPath("sc", "st", 1, 0) // block-compressed
	dl := t.TempDir()
	// A head whose controller is down.
	downSrv := httptest.NewServer(NewHandler(view.New(f.st, viewtest.Down(fmt.Errorf("controller down")), view.Options{CatalogTTL: -1}), Config{}))
	defer downSrv.Close()
	down := "webhdfs://" + strings.TrimPrefix(downSrv.URL, "http://")
	cmds := [][]string{
		{"-ls", "-R", base + "/"},
		{"-cat", base + "/" + small},
		{"-get", base + "/" + small, base + "/" + f.big, dl},
		{"-du", base + "/sc/st"},
		{"-count", base + "/", base + "/sc", base + "/sc/st/segment=0"},
		{"-stat", "%n|%b|%o|%r|%u|%g|%F|%Y", base + "/" + f.big, base + "/sc/st"},
		{"-checksum", base + "/" + small, base + "/" + f.big},
		{"-text", base + "/" + small, base + "/" + block},
		{"-tail", base + "/" + f.big},
		{"-head", base + "/" + f.big},
		{"-ls", base + "/nope"},
		{"-test", "-d", base + "/sc/st"},
		{"-test", "-e", base + "/sc/st/segment=9"},
		{"-ls", base + "/sc/st/segment=1"},
		{"-ls", down + "/sc"},
	}
	res := shells(t, cmds...)
	ok := func(i int) []byte {
		t.Helper()
		if res[i].rc != 0 {
			t.Fatalf("%q: exit %d\n%s", cmds[i], res[i].rc, res[i].stderr)
		}
		return res[i].stdout
	}

	var want []string
	for _, e := range walk(t, f.v, "") {
		want = append(want, lsLine(e, base))
	}
	if got := fields(ok(0)); !slices.Equal(got, want) {
		t.Errorf("ls -R:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := ok(1); !bytes.Equal(got, f.data(t, small)) {
		t.Errorf("cat: %d bytes, want the chunk's %d", len(got), len(f.data(t, small)))
	}
	ok(2)
	for _, p := range []string{small, f.big} {
		got, err := os.ReadFile(filepath.Join(dl, filepath.Base(p)))
		if err != nil || !bytes.Equal(got, f.data(t, p)) {
			t.Errorf("get %s: %d bytes, %v", p, len(got), err)
		}
	}
	var duWant []string
	for _, seg := range []string{"segment=0", "segment=1"} {
		n := 0
		for p := range f.chunks {
			if strings.HasPrefix(p, "sc/st/"+seg+"/") {
				n += len(f.data(t, p))
			}
		}
		duWant = append(duWant, fmt.Sprintf("%d %d %s/sc/st/%s", n, n, base, seg))
	}
	if got := fields(ok(3)); !slices.Equal(got, duWant) {
		t.Errorf("du: %q, want %q", got, duWant)
	}
	seg0 := len(f.data(t, small)) + len(f.data(t, f.big))
	all := seg0 + len(f.data(t, block))
	countWant := []string{
		fmt.Sprintf("9 3 %d %s/", all, base), // /, sc, none, st, empty, segments 0 and 1... see below
		fmt.Sprintf("5 3 %d %s/sc", all, base),
		fmt.Sprintf("1 2 %d %s/sc/st/segment=0", seg0, base),
	}
	countWant[0] = fmt.Sprintf("7 3 %d %s/", all, base) // /, sc, none, st, empty, segment=0, segment=1
	if got := fields(ok(4)); !slices.Equal(got, countWant) {
		t.Errorf("count: %q, want %q", got, countWant)
	}
	bigE, _ := f.v.Stat(ctx, f.big)
	stE, _ := f.v.Stat(ctx, "sc/st")
	statWant := []string{
		fmt.Sprintf("%s|%d|%d|1|sluice|supergroup|regular file|%d", filepath.Base(f.big), bigE.Size, testBlockSize, bigE.ModTime.UnixMilli()),
		fmt.Sprintf("st|0|0|0|sluice|supergroup|directory|%d", stE.ModTime.UnixMilli()),
	}
	if got := fields(ok(5)); !slices.Equal(got, statWant) {
		t.Errorf("stat: %q, want %q", got, statWant)
	}
	var sumWant []string
	for _, p := range []string{small, f.big} {
		d := f.data(t, p)
		sum, err := blocks.Checksum(bytes.NewReader(d), p, int64(len(d)), testBlockSize)
		if err != nil {
			t.Fatal(err)
		}
		sumWant = append(sumWant, fmt.Sprintf("%s/%s\t%s\t%x", base, p, sum.Algorithm(), sum.Bytes()))
	}
	if got := strings.Split(strings.TrimSpace(string(ok(6))), "\n"); !slices.Equal(got, sumWant) {
		t.Errorf("checksum: %q, want %q", got, sumWant)
	}
	if got, want := string(ok(7)), textOf(f.chunks[small])+textOf(f.chunks[block]); got != want {
		t.Errorf("text: %d bytes, want %d\n%.300s", len(got), len(want), got)
	}
	big := f.data(t, f.big)
	if got := ok(8); !bytes.Equal(got, big[len(big)-1024:]) {
		t.Errorf("tail: %d bytes, want the last 1024", len(got))
	}
	if got := ok(9); !bytes.Equal(got, big[:1024]) {
		t.Errorf("head: %d bytes, want the first 1024", len(got))
	}
	if res[10].rc == 0 || !strings.Contains(string(res[10].stderr), "No such file or directory") {
		t.Errorf("ls of a missing path: exit %d, %s", res[10].rc, res[10].stderr)
	}
	if res[11].rc != 0 || res[12].rc == 0 {
		t.Errorf("test -d of a stream: exit %d; test -e of a missing segment: exit %d", res[11].rc, res[12].rc)
	}
	// The chunk being written is not listed.
	seg1, _ := f.v.Stat(ctx, block)
	if got, want := fields(ok(13)), []string{lsLine(seg1, base)}; !slices.Equal(got, want) {
		t.Errorf("ls segment=1: %q, want %q", got, want)
	}
	if r := res[14]; r.rc == 0 || !strings.Contains(string(r.stderr), view.ErrUnavailable.Error()) {
		t.Errorf("ls with the controller down: exit %d\n%s", r.rc, r.stderr)
	}
}

// TestHadoopWritesAreRefused runs FsShell's writing commands: each fails
// with "Permission denied" and tier 2 is left as it was.
func TestHadoopWritesAreRefused(t *testing.T) {
	f := newFixture(t)
	before := snapshot(t, f.root)
	base := "webhdfs://" + strings.TrimPrefix(f.srv.URL, "http://")
	chunk := base + "/" + tier2.ChunkPath("sc", "st", 0, 0)
	local := filepath.Join(t.TempDir(), "local.txt")
	if err := os.WriteFile(local, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := [][]string{
		{"-put", local, base + "/sc/st/"},
		{"-mkdir", base + "/newdir"},
		{"-mkdir", "-p", base + "/sc/st/segment=7"},
		{"-rm", chunk},
		{"-rm", "-r", "-skipTrash", base + "/sc/st"},
		{"-mv", chunk, base + "/sc/moved.seq"},
		{"-cp", chunk, base + "/sc/st/segment=0/copy.seq"},
		{"-chmod", "777", chunk},
		{"-chown", "alice", chunk},
		{"-touchz", base + "/sc/t"},
		{"-appendToFile", local, chunk},
		{"-truncate", "1", chunk},
		{"-setrep", "3", chunk},
	}
	res := shells(t, cmds...)
	for i, r := range res {
		if r.rc == 0 || !strings.Contains(string(r.stderr), ReadOnlyMessage) {
			t.Errorf("%q: exit %d, stderr:\n%s", cmds[i], r.rc, r.stderr)
		}
	}
	if after := snapshot(t, f.root); !slices.Equal(after, before) {
		t.Errorf("tier 2 changed:\n%s\nwas:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}

// TestCurlAndPython reads with clients other than Hadoop's: curl
// (following redirects, as scripts do) and Python's urllib with json.
func TestCurlAndPython(t *testing.T) {
	f := newFixture(t)
	url := f.srv.URL + Prefix + "/" + f.big
	out, err := exec.Command("curl", "-sS", "-f", "-L", url+"?op=OPEN&offset=5&length=1000").Output()
	if err != nil || !bytes.Equal(out, f.data(t, f.big)[5:1005]) {
		t.Fatalf("curl OPEN: %d bytes, %v", len(out), err)
	}
	out, err = exec.Command("curl", "-sS", "-X", "PUT", "-o", "/dev/null", "-w", "%{http_code}", f.srv.URL+Prefix+"/x?op=MKDIRS").Output()
	if err != nil || string(out) != "403" {
		t.Fatalf("curl MKDIRS: %q, %v", out, err)
	}
	script := `
import json, sys, urllib.request
base = sys.argv[1]
with urllib.request.urlopen(base + "/sc/st/segment=0?op=LISTSTATUS") as r:
    sts = json.load(r)["FileStatuses"]["FileStatus"]
for s in sts:
    with urllib.request.urlopen(base + "/sc/st/segment=0/" + s["pathSuffix"] + "?op=OPEN") as r:
        data = r.read()
    assert len(data) == s["length"], (len(data), s)
    print(s["pathSuffix"], s["type"], s["permission"], len(data))
`
	out, err = exec.Command("python3", "-c", script, f.srv.URL+Prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	var want []string
	for _, p := range []string{tier2.ChunkPath("sc", "st", 0, 0), f.big} {
		want = append(want, fmt.Sprintf("%s FILE 444 %d", filepath.Base(p), len(f.data(t, p))))
	}
	if got := fields(out); !slices.Equal(got, want) {
		t.Fatalf("python: %q, want %q", got, want)
	}
}

// TestAgreesWithRealHDFS puts the same chunks into a real HDFS
// (MiniDFSCluster) with the same block size and asks Hadoop's client for
// their checksums over hdfs://, over the real NameNode's WebHDFS and over
// this handler: all three agree. Then it asks the real WebHDFS and this
// handler the same ops and compares the JSON's shapes: the same keys, the
// same JSON types. Last, it serves the same chunks with tier 2 on that
// HDFS (tier2/hdfs) and gets the same answers as from a directory.
func TestAgreesWithRealHDFS(t *testing.T) {
	f := newFixture(t)
	const bs = 1 << 20 // HDFS's smallest block size by default
	bigger := tier2.ChunkPath("sc", "st", 2, 0)
	f.writeChunk(t, bigger, 2, 0, 16000, 0)
	if n := len(f.data(t, bigger)); n <= 2*bs {
		t.Fatalf("the chunk has %d bytes: not three blocks", n)
	}
	srv := httptest.NewServer(NewHandler(f.v, Config{BlockSize: bs}))
	defer srv.Close()
	hdfs := hadooptest.StartCluster(t)
	ours := "webhdfs://" + strings.TrimPrefix(srv.URL, "http://")
	paths := []string{tier2.ChunkPath("sc", "st", 0, 0), f.big, bigger}
	var theirs, theirsWeb, oursWeb []string
	for i, p := range paths {
		name := fmt.Sprintf("/c%d.seq", i)
		theirs = append(theirs, "hdfs://"+hdfs.NameNode+name)
		theirsWeb = append(theirsWeb, "webhdfs://"+hdfs.HTTP+name)
		oursWeb = append(oursWeb, ours+"/"+p)
	}
	var cmds [][]string
	for i, p := range paths {
		cmds = append(cmds, []string{"-D", fmt.Sprint("dfs.blocksize=", bs), "-put",
			filepath.Join(f.root, filepath.FromSlash(p)), theirs[i]})
	}
	cmds = append(cmds, append([]string{"-checksum"}, theirs...),
		append([]string{"-checksum"}, theirsWeb...), append([]string{"-checksum"}, oursWeb...))
	res := shells(t, cmds...)
	for i, r := range res {
		if r.rc != 0 {
			t.Fatalf("%q: exit %d\n%s", cmds[i], r.rc, r.stderr)
		}
	}
	sums := func(out []byte) []string {
		var s []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Split(l, "\t"); len(f) == 3 {
				s = append(s, f[1]+" "+f[2])
			}
		}
		return s
	}
	n := len(paths)
	real, realWeb, got := sums(res[n].stdout), sums(res[n+1].stdout), sums(res[n+2].stdout)
	if len(real) != n || !slices.Equal(realWeb, real) || !slices.Equal(got, real) {
		t.Fatalf("checksums:\nHDFS      %q\nits web   %q\nours      %q", real, realWeb, got)
	}
	if !strings.HasPrefix(real[2], "MD5-of-2048MD5-of-512CRC32C ") {
		t.Fatalf("the biggest chunk's checksum is not of several blocks: %q", real[2])
	}

	for _, c := range []struct{ theirs, ours string }{
		{"/c0.seq?op=GETFILESTATUS", "/" + paths[0] + "?op=GETFILESTATUS"},
		{"/?op=GETFILESTATUS", "/sc?op=GETFILESTATUS"},
		{"/?op=LISTSTATUS", "/sc/st/segment=0?op=LISTSTATUS"},
		{"/?op=LISTSTATUS_BATCH", "/sc/st/segment=0?op=LISTSTATUS_BATCH"},
		{"/?op=GETCONTENTSUMMARY", "/sc?op=GETCONTENTSUMMARY"},
		{"/?op=GETQUOTAUSAGE", "/sc?op=GETQUOTAUSAGE"},
		{"/c2.seq?op=GETFILECHECKSUM", "/" + bigger + "?op=GETFILECHECKSUM"},
		{"/?op=GETHOMEDIRECTORY&user.name=alice", "/?op=GETHOMEDIRECTORY&user.name=alice"},
		{"/?op=GETTRASHROOT&user.name=alice", "/?op=GETTRASHROOT&user.name=alice"},
		{"/?op=GETDELEGATIONTOKEN", "/?op=GETDELEGATIONTOKEN"},
		{"/?op=GETSERVERDEFAULTS", "/?op=GETSERVERDEFAULTS"},
		{"/c0.seq?op=GETACLSTATUS", "/" + paths[0] + "?op=GETACLSTATUS"},
		{"/c0.seq?op=GETXATTRS", "/" + paths[0] + "?op=GETXATTRS"},
		{"/c0.seq?op=GETXATTRS&encoding=HEX", "/" + paths[0] + "?op=GETXATTRS&encoding=HEX"},
		{"/c0.seq?op=GETXATTRS&encoding=HEX&xattr.name=user.a", "/" + paths[0] + "?op=GETXATTRS&encoding=HEX&xattr.name=user.a"},
		{"/c0.seq?op=CHECKACCESS&fsaction=r--", "/" + paths[0] + "?op=CHECKACCESS&fsaction=r--"},
		{"/c0.seq?op=OPEN&offset=-1", "/" + paths[0] + "?op=OPEN&offset=-1"},
		{"/c0.seq?op=LISTXATTRS", "/" + paths[0] + "?op=LISTXATTRS"},
		{"/c0.seq?op=GETSTORAGEPOLICY", "/" + paths[0] + "?op=GETSTORAGEPOLICY"},
		{"/c2.seq?op=GETFILEBLOCKLOCATIONS", "/" + bigger + "?op=GETFILEBLOCKLOCATIONS"},
		{"/nope?op=GETFILESTATUS", "/nope?op=GETFILESTATUS"},
		{"/nope?op=LISTSTATUS", "/nope?op=LISTSTATUS"},
		{"/c0.seq?op=OPEN&offset=99999999", "/" + paths[0] + "?op=OPEN&offset=99999999"},
		{"/?op=BOGUS", "/?op=BOGUS"},
	} {
		ts, tb, _ := call(t, "GET", "http://"+hdfs.HTTP+Prefix+c.theirs)
		os, ob, _ := call(t, "GET", srv.URL+Prefix+c.ours)
		if ts != os {
			t.Errorf("%s: status %d, HDFS's %d\nours:   %s\nHDFS's: %s", c.ours, os, ts, ob, tb)
			continue
		}
		if len(tb) == 0 && len(ob) == 0 {
			continue // CHECKACCESS: nothing but the status
		}
		if ts == 404 || strings.Contains(c.ours, "offset=") {
			// The same words, but for the path.
			op, _, _ := strings.Cut(c.ours, "?")
			tp, _, _ := strings.Cut(c.theirs, "?")
			if !bytes.Equal(bytes.ReplaceAll(ob, []byte(op), []byte(tp)), tb) {
				t.Errorf("%s: error\nours:   %s\nHDFS's: %s", c.ours, ob, tb)
			}
		}
		if tsh, osh := shape(decode(t, tb)), shape(decode(t, ob)); tsh != osh {
			t.Errorf("%s: JSON\nours:   %s\nHDFS's: %s\n(%s\nvs %s)", c.ours, osh, tsh, ob, tb)
		}
	}

	// The same tree with tier 2 on that HDFS (tier2/hdfs): the handler
	// lists, reads and checksums it alike.
	st, err := t2hdfs.New(t2hdfs.Options{NameNodes: []string{hdfs.NameNode}, Root: "/tier2"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range paths {
		w, err := st.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data(t, p)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	onHDFS := httptest.NewServer(NewHandler(view.New(st, viewtest.NewCatalog(map[string][]string{"sc": {"st"}}), view.Options{CatalogTTL: -1}), Config{BlockSize: bs}))
	defer onHDFS.Close()
	for _, q := range []string{"/sc/st/segment=0?op=LISTSTATUS", "/" + bigger + "?op=GETFILECHECKSUM", "/sc/st/segment=0?op=GETCONTENTSUMMARY"} {
		_, a, _ := call(t, "GET", srv.URL+Prefix+q)
		_, b, _ := call(t, "GET", onHDFS.URL+Prefix+q)
		// Modification times differ (the files were written anew).
		if shape(decode(t, a)) != shape(decode(t, b)) || (!strings.Contains(q, "LISTSTATUS") && !bytes.Equal(a, b)) {
			t.Errorf("%s: tier 2 on HDFS answers\n%s\nwhere the directory answers\n%s", q, b, a)
		}
	}
	status, data, _ := call(t, "GET", onHDFS.URL+Prefix+"/"+bigger+fmt.Sprintf("?op=OPEN&offset=%d&length=%d", bs-5, bs+10))
	if want := f.data(t, bigger)[bs-5 : 2*bs+5]; status != 200 || !bytes.Equal(data, want) {
		t.Errorf("OPEN on HDFS: %d, %d bytes", status, len(data))
	}
}

// shape describes a JSON value's keys and types, not its values (the
// first element stands for an array's).
func shape(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if k == "snapshotEnabled" {
				continue // HDFS's root is snapshottable; no directory here is
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var sb strings.Builder
		sb.WriteString("{")
		for _, k := range keys {
			sb.WriteString(k + ":" + shape(v[k]) + " ")
		}
		return sb.String() + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shape(v[0]) + "]"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// TestMapReduceReadsThroughWebHDFS runs a local MapReduce job with
// SequenceFileInputFormat over a stream's webhdfs:// directory, as a Hive
// or Spark job would read it: splits come from GETFILEBLOCKLOCATIONS
// (several blocks in the big chunk), records from OPEN with offsets.
func TestMapReduceReadsThroughWebHDFS(t *testing.T) {
	f := newFixture(t)
	var want []hadooptest.Record
	for p, recs := range f.chunks {
		for _, r := range recs {
			want = append(want, hadooptest.Record{File: strings.TrimPrefix(p, "sc/st/"), Key: r.off, Value: r.event})
		}
	}
	sortRecords(want)
	got := hadooptest.MapReduce(t, "webhdfs://"+strings.TrimPrefix(f.srv.URL, "http://")+"/sc/st")
	sortRecords(got)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := got[i], want[i]; g.File != w.File || g.Key != w.Key || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("record %d = {%s %d %x}, want {%s %d %x}", i, g.File, g.Key, g.Value, w.File, w.Key, w.Value)
		}
	}
}

func sortRecords(rs []hadooptest.Record) {
	slices.SortFunc(rs, func(a, b hadooptest.Record) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return int(a.Key - b.Key)
	})
}

// TestHadoopPositionalReads reads ranges of the multi-block chunk with
// FileSystem.open over webhdfs:// (positional reads, seeks, across block
// boundaries, up to and past the end), then the whole file in sequence.
func TestHadoopPositionalReads(t *testing.T) {
	f := newFixture(t)
	data := f.data(t, f.big)
	size := int64(len(data))
	ranges := [][2]int64{{0, 1}, {100, 5000}, {testBlockSize - 10, 20}, {2*testBlockSize + 7, testBlockSize + 3},
		{size - 100, 100}, {size - 1, 1}, {size - 10, 20}, {7, 0}}
	args := []string{"webhdfs://" + strings.TrimPrefix(f.srv.URL, "http://") + "/" + f.big}
	var want []string
	for _, r := range ranges {
		args = append(args, strconv.FormatInt(r[0], 10), strconv.FormatInt(r[1], 10))
		if r[0]+r[1] > size {
			want = append(want, fmt.Sprintf("%d %d EOF", r[0], r[1]))
			continue
		}
		sum := fmt.Sprintf("%x", md5.Sum(data[r[0]:r[0]+r[1]]))
		want = append(want, fmt.Sprintf("%d %d %s %s %d", r[0], r[1], sum, sum, r[0]+r[1]))
	}
	want = append(want, fmt.Sprintf("ALL %d %x", size, md5.Sum(data)))
	cmd := hadooptest.Harness(t).Class("org.sluice.hadooptest.Preads", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(jvmTimeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil {
		t.Fatalf("Preads: %v\n%s", err, stderr.Bytes())
	}
	if got := fields(stdout.Bytes()); !slices.Equal(got, want) {
		t.Fatalf("Preads:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
