package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildSluice builds cmd/sluice into dir and returns the binary's path.
// Call it from TestMain.
func BuildSluice(dir string) (string, error) {
	bin := filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "github.com/sluice-streams/sluice/cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build sluice: %w", err)
	}
	return bin, nil
}

// Main is the TestMain of a package whose tests run the sluice binary: it
// builds the binary into a temporary directory named for the package
// (name also prefixes a failure to build), sets *bin to its path, runs
// the tests, removes the directory and exits with the tests' code.
func Main(m *testing.M, name string, bin *string) {
	dir, err := os.MkdirTemp("", "sluice-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *bin, err = BuildSluice(dir); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Proc is a running child process.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	args []string
	mu   sync.Mutex
	log  strings.Builder // stdout and stderr, as they came
	out  []string        // stdout lines
	done chan struct{}   // closed when the process has exited
	err  error           // its exit, once done is closed
}

// Write collects the child's stderr.
func (p *Proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// Logs returns everything the child printed so far.
func (p *Proc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Start runs bin with args (env added to the test's environment). The
// child dies with the test process, is killed at cleanup, and its output is
// logged there if the test failed.
func Start(t testing.TB, bin, name string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("----- output of %s (%s) -----\n%s", name, strings.Join(args, " "), p.Logs())
		}
	})
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	go func() {
		<-lines // Wait closes the pipe: read it all first
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited; Err then says how.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is how the process exited, once Done is closed.
func (p *Proc) Err() error { return p.err }

// Kill sends SIGKILL and waits (up to 10 s) for the process to end.
func (p *Proc) Kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// Stop sends SIGTERM and requires a clean exit within timeout.
func (p *Proc) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("%s exited with %v after SIGTERM", p.Name, p.err)
		}
	case <-time.After(timeout):
		p.Kill()
		t.Fatalf("%s did not stop within %v of SIGTERM", p.Name, timeout)
	}
}

// Line waits up to timeout for a stdout line starting with prefix and
// returns the rest of it.
func (p *Proc) Line(t testing.TB, prefix string, timeout time.Duration) string {
	t.Helper()
	var rest string
	WaitFor(t, fmt.Sprintf("%s to print %q", p.Name, prefix), timeout, func() (bool, string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range p.out {
			if r, ok := strings.CutPrefix(l, prefix); ok {
				rest = r
				return true, ""
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before printing %q", p.Name, p.err, prefix)
		default:
		}
		return false, "not printed yet"
	})
	return rest
}

// WaitFor polls cond until it holds, failing after timeout with what cond
// said last. It returns how long it took.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	began := time.Now()
	deadline := began.Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return time.Since(began)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition
	}
}
