package hadooptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds the wait for a MiniDFSCluster to serve.
const StartTimeout = 90 * time.Second

// stopTimeout bounds a clean shutdown before the JVM is killed.
const stopTimeout = 30 * time.Second

// HDFS is a MiniDFSCluster that a test started: one NameNode and one
// DataNode in a JVM, on 127.0.0.1, with its data in a directory of the
// caller's.
type HDFS struct {
	// NameNode is the NameNode's RPC address, "127.0.0.1:PORT".
	NameNode string
	// HTTP is the NameNode's HTTP (WebHDFS) address.
	HTTP string

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logPath string
	done    chan struct{} // closed when the JVM has exited
	err     error         // its exit, once done is closed
	replies chan string   // answer lines (replyPrefixes), in order

	mu    sync.Mutex
	lines []string // stdout
}

// NewHDFS starts a cluster with its data under dir and returns once the
// NameNode serves. Use StartHDFS in a test; NewHDFS is for a cluster that
// a test package shares (started in TestMain, stopped there).
func NewHDFS(dir string) (*HDFS, error) {
	h, line, err := start(dir, "NAMENODE ", "hdfs", filepath.Join(dir, "dfs"))
	if err != nil {
		return nil, err
	}
	// "127.0.0.1:RPC HTTP 127.0.0.1:HTTP"
	f := strings.Fields(line)
	if len(f) != 3 || f[1] != "HTTP" {
		h.kill()
		return nil, fmt.Errorf("hadooptest: unexpected line from the harness: %q", line)
	}
	h.NameNode, h.HTTP = f[0], f[2]
	return h, nil
}

// replyPrefixes start the harness's answers on stdout (see Harness.java
// and HaCluster.java); start and HA.Failover read them from h.replies.
var replyPrefixes = []string{"NAMENODE ", "HA ", "ACTIVE ", "ERROR "}

// start runs the harness with args, its working directory and log in dir,
// and returns once it prints a line starting with ready: the cluster and
// the rest of that line.
func start(dir, ready string, args ...string) (*HDFS, string, error) {
	r, err := FindHarness()
	if err != nil {
		return nil, "", err
	}
	h := &HDFS{logPath: filepath.Join(dir, "hdfs.log"), done: make(chan struct{}), replies: make(chan string, 16)}
	logf, err := os.Create(h.logPath)
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	cmd := r.Command(args...)
	h.cmd = cmd
	cmd.Dir = dir
	cmd.Stderr = logf
	// The cluster dies with the test process, even if that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("hadooptest: start the HDFS harness: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			h.mu.Lock()
			h.lines = append(h.lines, line)
			h.mu.Unlock()
			for _, p := range replyPrefixes {
				if strings.HasPrefix(line, p) {
					select {
					case h.replies <- line:
					default: // nobody asked; it stays in h.lines
					}
				}
			}
		}
		io.Copy(io.Discard, stdout)
		h.err = cmd.Wait()
		close(h.done)
	}()
	line, err := h.reply(StartTimeout)
	if err != nil {
		return nil, "", err
	}
	rest, ok := strings.CutPrefix(line, ready)
	if !ok {
		h.kill()
		return nil, "", fmt.Errorf("hadooptest: unexpected line from the harness: %q", line)
	}
	return h, rest, nil
}

// reply returns the harness's next answer line, waiting up to timeout.
// A JVM that exits or does not answer in time is an error carrying the
// log's tail; the JVM is killed after a timeout.
func (h *HDFS) reply(timeout time.Duration) (string, error) {
	select {
	case line := <-h.replies:
		return line, nil
	case <-h.done:
		return "", fmt.Errorf("hadooptest: the HDFS harness exited (%v) before answering; its log:\n%s", h.err, h.LogTail())
	case <-time.After(timeout):
		h.kill()
		return "", fmt.Errorf("hadooptest: no answer from the HDFS harness within %v; its log:\n%s", timeout, h.LogTail())
	}
}

// StartHDFS starts a cluster for t in a temporary directory, stops it when
// t ends, and returns the NameNode's RPC address. It fails t if the
// cluster does not serve within StartTimeout.
func StartHDFS(t testing.TB) string {
	t.Helper()
	return StartCluster(t).NameNode
}

// StartCluster is StartHDFS returning the cluster, for tests that stop it
// themselves or need its HTTP address.
func StartCluster(t testing.TB) *HDFS {
	t.Helper()
	h, err := NewHDFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h.stopWith(t)
	return h
}

// stopWith stops h when t ends, logging the harness log's tail if t
// failed.
func (h *HDFS) stopWith(t testing.TB) {
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("----- HDFS harness log (tail) -----\n%s", h.LogTail())
		}
	})
}

// Stop shuts the cluster down cleanly (closing its stdin) and waits for
// the JVM to exit; after stopTimeout it kills it and reports that. Stop
// may be called more than once.
func (h *HDFS) Stop() error {
	select {
	case <-h.done:
		return nil
	default:
	}
	h.stdin.Close()
	select {
	case <-h.done:
		if h.err != nil {
			return fmt.Errorf("hadooptest: HDFS harness exited with %v on stop", h.err)
		}
		return nil
	case <-time.After(stopTimeout):
		h.kill()
		return fmt.Errorf("hadooptest: HDFS harness did not stop within %v; killed", stopTimeout)
	}
}

// kill ends the JVM at once and waits for it.
func (h *HDFS) kill() {
	_ = h.cmd.Process.Kill()
	<-h.done
}

// LogTail returns the last 8 KiB of the cluster's log.
func (h *HDFS) LogTail() string {
	b, _ := os.ReadFile(h.logPath)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(bytes.TrimSpace(b))
}
