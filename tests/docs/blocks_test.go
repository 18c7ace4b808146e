package docs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/proctest"
)

// blockTimeout bounds one block's run.
const blockTimeout = 2 * time.Minute

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "docs", &sluiceBin)
}

// repoRoot is the module's root: the first folder up from here with go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// docFiles are the files whose blocks are run, relative to the root:
// README.md, then docs/*.md in name order.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(d, root+string(filepath.Separator))))
	}
	slices.Sort(files[1:])
	return files
}

// TestDocBlocks runs the shell blocks of README.md and docs/*.md, one
// standalone per file (see the package doc for the conventions).
func TestDocBlocks(t *testing.T) {
	root := repoRoot(t)
	for _, file := range docFiles(t, root) {
		md, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		blocks, problems := parseBlocks(string(md))
		for _, p := range problems {
			t.Errorf("%s:%s", file, p)
		}
		var shell []block
		for _, b := range blocks {
			if b.shell() {
				shell = append(shell, b)
			}
		}
		runFile(t, file, shell)
	}
}

// runFile runs a file's shell blocks in order against a standalone of
// their own, started only if some block is to run.
func runFile(t *testing.T, file string, blocks []block) {
	t.Helper()
	if !slices.ContainsFunc(blocks, func(b block) bool { return b.marker == "" }) {
		for _, b := range blocks {
			t.Run(fmt.Sprintf("%s:%d", file, b.line), func(t *testing.T) { skipMarked(t, file, b) })
		}
		return
	}
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	// bin/sluice as in a checkout after `make run`; sluice on PATH.
	if err := os.Symlink(sluiceBin, filepath.Join(work, "bin", "sluice")); err != nil {
		t.Fatal(err)
	}
	sa := proctest.Start(t, sluiceBin, "standalone "+file, nil, "--log-level", "warn", "standalone",
		"--data", t.TempDir(), "--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
		"--hdfs-rpc-addr", "127.0.0.1:0", "--hdfs-data-addr", "127.0.0.1:0", "--webhdfs-addr", "127.0.0.1:0", "--nfs-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0")
	ctl := "http://" + sa.Line(t, "controller listening on ", time.Minute)
	env := append(os.Environ(),
		// sluice, and the AWS CLI of .cache/s3clients (scripts/s3-deps.sh).
		"PATH="+filepath.Dir(sluiceBin)+string(os.PathListSeparator)+s3Clients(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SLUICE_CONTROLLER="+ctl,
		// The HDFS head's addresses, for blocks that read through it.
		"SLUICE_HDFS="+sa.Line(t, "hdfs head (rpc) listening on ", time.Minute),
		"SLUICE_WEBHDFS="+sa.Line(t, "webhdfs listening on ", time.Minute),
		// The NFS head's port and the S3 head's address, likewise.
		"SLUICE_NFS_PORT="+port(t, sa.Line(t, "nfs head listening on ", time.Minute)),
		"SLUICE_S3="+sa.Line(t, "s3 head listening on ", time.Minute),
	)
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", file, b.line), func(t *testing.T) {
			skipMarked(t, file, b)
			out, err := runBlock(work, env, b.script())
			if err != nil {
				t.Errorf("%s:%d: the block failed: %v\n----- block\n%s----- output\n%s", file, b.line, err, b.text, out)
			}
		})
	}
	sa.Stop(t, time.Minute)
}

// port is the port of a host:port address.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// s3Clients is the bin directory of the S3 clients' virtual environment
// (the AWS CLI); the test fails, saying how to make it, without.
func s3Clients(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "s3clients", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "aws")); err != nil {
		t.Fatalf("the AWS CLI is not installed at %s: run `bash scripts/s3-deps.sh` from the repository root (`make test` does)", dir)
	}
	return dir
}

// skipMarked skips a marked block, saying where it is and why.
func skipMarked(t *testing.T, file string, b block) {
	t.Helper()
	switch b.marker {
	case markServer:
		t.Skipf("%s:%d: starts a server; the test's own standalone stands in for it", file, b.line)
	case markSkip:
		t.Skipf("%s:%d: %s", file, b.line, b.reason)
	}
}

// runBlock runs script with bash -euo pipefail in dir, within
// blockTimeout, and returns its output (stdout and stderr together). On a
// timeout the block's whole process group is killed.
func runBlock(dir string, env []string, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second // a child keeping the output open
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("still running after %v: %w", blockTimeout, err)
	}
	return string(out), err
}
