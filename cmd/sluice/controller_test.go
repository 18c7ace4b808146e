package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// lockedBuffer is a bytes.Buffer that a running command may write while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runningController is `sluice controller` run in-process.
type runningController struct {
	URL    string
	stop   context.CancelFunc
	exit   chan int
	stderr *lockedBuffer
	once   sync.Once
}

// startController runs `sluice controller` in-process on a free port of
// 127.0.0.1 with data in dir and the node at nodeAddr, and returns once it
// listens. Stop (also called at cleanup) ends it as SIGTERM would.
func startController(t *testing.T, dir, nodeAddr string) *runningController {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	rc := &runningController{stop: cancel, exit: make(chan int, 1), stderr: &lockedBuffer{}}
	go func() {
		code := runContext(ctx, []string{"sluice", "--log-level", "warn", "controller", "--listen", "127.0.0.1:0", "--data", dir, "--node", nodeAddr}, pw, rc.stderr)
		pw.Close()
		rc.exit <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("controller did not start: %v; stderr %q", err, rc.stderr.String())
	}
	go io.Copy(io.Discard, pr) // nothing more is written; drain anyway
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "controller listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	rc.URL = "http://" + addr
	t.Cleanup(func() { rc.Stop(t) })
	return rc
}

// Stop ends the controller and checks that it shut down cleanly.
func (rc *runningController) Stop(t *testing.T) {
	t.Helper()
	rc.once.Do(func() {
		rc.stop()
		if code := <-rc.exit; code != 0 {
			t.Errorf("controller exit %d, stderr %q", code, rc.stderr.String())
		}
	})
}

func TestControllerHelp(t *testing.T) {
	code, stdout, _ := runArgs(t, "controller", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--listen", "--data", "--node", "127.0.0.1:10080", "127.0.0.1:12345"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("controller help lacks %q:\n%s", want, stdout)
		}
	}
}

// TestControllerRestart checks that the controller keeps its metadata in
// --data across a clean stop and a start.
func TestControllerRestart(t *testing.T) {
	node, dir := resttest.StartNode(t), t.TempDir()
	rc := startController(t, dir, node)
	mustRun(t, "--controller", rc.URL, "scope", "create", "kept")
	rc.Stop(t)

	rc = startController(t, dir, node)
	// A controller given as host:port, without a scheme, is http://.
	out := mustRun(t, "--controller", strings.TrimPrefix(rc.URL, "http://"), "--output", "json", "scope", "list")
	var scopes []api.ScopeProperty
	if err := json.Unmarshal([]byte(out), &scopes); err != nil || len(scopes) != 1 || scopes[0].ScopeName != "kept" {
		t.Fatalf("scopes after restart: %q (%v)", out, err)
	}
}

func TestControllerErrors(t *testing.T) {
	node := resttest.StartNode(t)
	rc := startController(t, t.TempDir(), node)
	addr := strings.TrimPrefix(rc.URL, "http://")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"controller", "--listen", addr, "--data", t.TempDir()}, "listen on " + addr},
		{[]string{"controller", "--data", "/dev/null/sub"}, "/dev/null/sub"},
		{[]string{"controller", "extra"}, "extra"},
	} {
		code, stdout, stderr := runArgs(t, tc.args...)
		if code != 1 || stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q", tc.args, code, stdout)
		}
		oneErrorLine(t, stderr, tc.want)
	}
}

// mustRun runs a command that must succeed and returns its stdout.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runArgs(t, args...)
	if code != 0 || stderr != "" {
		t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
	}
	return stdout
}

// mustFail runs a command that must fail with one line on stderr
// containing want and nothing on stdout.
func mustFail(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := runArgs(t, args...)
	if code != 1 || stdout != "" {
		t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 1 and no output", args, code, stdout, stderr)
	}
	oneErrorLine(t, stderr, want)
}
