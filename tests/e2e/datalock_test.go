package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/internal/proctest"
)

// refused runs the binary under test with args, which must exit non-zero
// at once (bounded by waitTimeout), and returns its stderr, which must be
// one line.
func refused(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("sluice %s: %v, want a non-zero exit; stdout %q, stderr %q", strings.Join(args, " "), err, out, stderr.String())
	}
	line := stderr.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("sluice %s: stderr is not one line: %q", strings.Join(args, " "), line)
	}
	t.Logf("sluice %s: %s", args[2], strings.TrimSpace(line))
	return strings.TrimSpace(line)
}

// wantHolder fails unless msg says dir is in use by p.
func wantHolder(t *testing.T, msg, dir string, p *proctest.Proc) {
	t.Helper()
	want := fmt.Sprintf("data directory %s is in use by process %d", dir, p.Pid())
	if !strings.Contains(msg, want) {
		t.Fatalf("error %q does not say %q", msg, want)
	}
}

// TestDataDirectoryLock: a second `sluice standalone`, `sluice node` or
// `sluice controller` on a data directory in use exits non-zero with one
// line naming the process that holds it; once the holder is killed with
// SIGKILL, a new one starts on the directory and serves.
func TestDataDirectoryLock(t *testing.T) {
	base := t.TempDir()
	standalone := func(dir string) []string {
		return []string{"--log-level", "warn", "standalone", "--data", dir,
			"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0", "--containers", "2", "--tier2", "none", "--no-hdfs-head"}
	}
	nodeArgs := func(dir string) []string {
		return []string{"--log-level", "warn", "node", "--data", dir, "--listen", "127.0.0.1:0",
			"--containers", "2", "--wal-preallocate=false"}
	}
	controllerArgs := func(dir string) []string {
		return []string{"--log-level", "warn", "controller", "--data", dir, "--listen", "127.0.0.1:0",
			"--node", "127.0.0.1:1", "--containers", "2"}
	}
	tests := []struct {
		name  string
		args  func(dir string) []string
		ready string // the line the role prints once it serves
		// others are the commands that must be refused while the role
		// runs on dir: the same role, and a standalone whose directory
		// holds dir.
		others func(dir string) [][]string
	}{
		{
			name: "standalone", args: standalone, ready: "controller listening on ",
			others: func(dir string) [][]string {
				return [][]string{
					standalone(dir),
					// A role started on a part of a standalone's directory.
					nodeArgs(filepath.Join(dir, "node")),
					controllerArgs(filepath.Join(dir, "controller")),
				}
			},
		},
		{
			name: "node", args: nodeArgs, ready: "node listening on ",
			others: func(dir string) [][]string { return [][]string{nodeArgs(dir), standalone(filepath.Dir(dir))} },
		},
		{
			name: "controller", args: controllerArgs, ready: "controller listening on ",
			others: func(dir string) [][]string { return [][]string{controllerArgs(dir), standalone(filepath.Dir(dir))} },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// DIR/node and DIR/controller are a standalone's parts.
			dir := filepath.Join(base, tc.name, tc.name)
			first := start(t, tc.name, nil, tc.args(dir)...)
			first.Line(t, tc.ready, waitTimeout)
			for _, args := range tc.others(dir) {
				msg := refused(t, args...)
				if !strings.Contains(msg, "is in use by process "+fmt.Sprint(first.Pid())) {
					t.Fatalf("sluice %s: error %q does not name the holder, pid %d", strings.Join(args, " "), msg, first.Pid())
				}
			}
			wantHolder(t, refused(t, tc.args(dir)...), dir, first)

			// kill -9: the kernel releases the lock with the process.
			first.Kill()
			again := start(t, tc.name+" again", nil, tc.args(dir)...)
			again.Line(t, tc.ready, waitTimeout)
			wantHolder(t, refused(t, tc.args(dir)...), dir, again)
			again.Stop(t, waitTimeout)

			// A clean exit releases it too.
			third := start(t, tc.name+" third", nil, tc.args(dir)...)
			third.Line(t, tc.ready, waitTimeout)
			third.Stop(t, waitTimeout)
		})
	}
}
