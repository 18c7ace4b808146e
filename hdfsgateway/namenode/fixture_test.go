package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/tier2test"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

// testBlockSize splits the big chunk of the fixture into several blocks.
const testBlockSize = 64 << 10

// fixture is a tier-2 directory with chunks and the view of it: scope s
// with stream a (segments 0 and 3, one chunk of several blocks) and an
// empty stream b; an empty scope t; files that are not in the tree.
type fixture struct {
	dir string
	v   *view.View
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tier2test.WriteLetterChunk(t, st, tier2.ChunkPath("s", "a", 0, 0), 0, 10, 100)
	tier2test.WriteLetterChunk(t, st, tier2.ChunkPath("s", "a", 0, 1080), 1080, 5, 50)
	tier2test.WriteLetterChunk(t, st, tier2.ChunkPath("s", "a", 3, 0), 0, 300, 1000) // ~300 KiB: 5 blocks
	tier2test.WriteLetterChunk(t, st, tier2.TempChunkPath("s", "a", 3, 9000), 9000, 1, 10)
	tier2test.WriteLetterChunk(t, st, tier2.ChunkPath("s", "gone", 0, 0), 0, 1, 10)
	cat := viewtest.NewCatalog(map[string][]string{"s": {"a", "b"}, "t": nil})
	return &fixture{dir: dir, v: view.New(st, cat, view.Options{CatalogTTL: -1})}
}

// files returns every file under the fixture's directory with its bytes:
// what must not change.
func (f *fixture) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// walk returns every entry of the view under p (p included), in depth-first
// name order.
func walk(t *testing.T, v *view.View, p string) []view.Entry {
	t.Helper()
	ctx := context.Background()
	e, err := v.Stat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	out := []view.Entry{e}
	if e.IsDir {
		es, err := v.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range es {
			out = append(out, walk(t, v, c.Path)...)
		}
	}
	return out
}

// testLogger logs the server's debug lines into t's log.
func testLogger(t *testing.T) *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.DebugLevel)
	l.SetOutput(tWriter{t})
	return l
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// serve starts a Server of v on 127.0.0.1 and returns its address; it is
// closed when t ends, and Serve must then return ErrClosed.
func serve(t *testing.T, v *view.View, cfg Config) (*Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = testBlockSize
	}
	s := New(v, cfg)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	return s, l.Addr().String()
}

// shellResult is one command of a Batch run.
type shellResult struct {
	cmd  string
	out  string
	exit string
}

// shells runs commands (each FsShell's arguments, or @blocks/@located)
// in one JVM of the Hadoop harness and returns each one's output.
func shells(t *testing.T, cmds ...[]string) []shellResult {
	t.Helper()
	return shellsAs(t, "", cmds...)
}

// shellsAs is shells with Hadoop's SIMPLE user set to user (the process's
// own if "").
func shellsAs(t *testing.T, user string, cmds ...[]string) []shellResult {
	t.Helper()
	var args []string
	for i, c := range cmds {
		if i > 0 {
			args = append(args, "--")
		}
		args = append(args, c...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := hadooptest.Harness(t)
	cmd := r.Class("org.sluice.hadooptest.Batch", args...)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	if user != "" {
		cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+user)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harness Batch: %v\n%s", err, out)
	}
	var res []shellResult
	var cur *shellResult
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "=== CMD "):
			res = append(res, shellResult{cmd: strings.TrimPrefix(line, "=== CMD ")})
			cur = &res[len(res)-1]
		case strings.HasPrefix(line, "=== EXIT "):
			if cur == nil {
				t.Fatalf("EXIT before CMD:\n%s", out)
			}
			cur.exit = strings.TrimPrefix(line, "=== EXIT ")
		case cur != nil && line != "":
			cur.out += line + "\n"
		}
	}
	if len(res) != len(cmds) {
		t.Fatalf("Batch ran %d commands, want %d:\n%s", len(res), len(cmds), out)
	}
	for i, r := range res {
		t.Logf("%s -> exit %s\n%s", r.cmd, r.exit, r.out)
		if r.exit == "" {
			t.Fatalf("command %d (%s) did not finish:\n%s", i, r.cmd, out)
		}
	}
	return res
}

// sortedKeys is for messages.
func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var _ = fmt.Sprint
var _ io.Reader

var (
	errNotExist   = iofs.ErrNotExist
	errPermission = iofs.ErrPermission
)

func newListener(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
