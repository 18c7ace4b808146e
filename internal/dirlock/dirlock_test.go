package dirlock_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/dirlock"
)

// holdEnv makes the test binary a lock holder (see TestMain): it locks the
// directory the variable names, prints "locked", and holds the lock until
// stdin closes or it is killed. If the lock is refused it prints the error
// and exits with status 3.
const holdEnv = "DIRLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		l, err := dirlock.Acquire(dir)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes it
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder is the test binary re-run as a lock holder.
type holder struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	out   *bufio.Reader
	done  chan error
}

// startHolder starts a child process that locks dir and returns once it
// has printed its first line (which it returns).
func startHolder(t *testing.T, dir string) (*holder, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), done: make(chan error, 1)}
	line, err := h.out.ReadString('\n')
	go func() { h.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-h.done
	})
	if err != nil {
		t.Fatalf("holder printed nothing: %v", err)
	}
	return h, strings.TrimSpace(line)
}

// wait waits for the holder to exit (bounded: a hung child fails the test).
func (h *holder) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("holder did not exit")
		return nil
	}
}

func TestSecondAcquireInProcessRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dirlock.Acquire(dir)
	if !errors.Is(err, dirlock.ErrLocked) {
		t.Fatalf("second Acquire: %v, want ErrLocked", err)
	}
	var le *dirlock.LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Dir != dir {
		t.Fatalf("second Acquire: %#v, want holder pid %d and dir %s", err, os.Getpid(), dir)
	}
	if want := "process " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %q", err, want)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l, err = dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l.Release()
}

func TestPIDFile(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, dirlock.FileName))
	if err != nil || string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("lock file holds %q (%v), want this pid", b, err)
	}
	l.Release()
	b, err = os.ReadFile(filepath.Join(dir, dirlock.FileName))
	if err != nil || len(b) != 0 {
		t.Fatalf("released lock file holds %q (%v), want nothing", b, err)
	}
}

// TestUnknownHolder: a lock file whose pid is missing or garbage still
// refuses, naming no pid.
func TestUnknownHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, content := range []string{"", "garbage\n", "-4\n", strings.Repeat("9", 100)} {
		if err := os.WriteFile(filepath.Join(dir, dirlock.FileName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := dirlock.Acquire(dir)
		var le *dirlock.LockedError
		if !errors.As(err, &le) || le.PID != 0 || !strings.Contains(err.Error(), "an unknown process") {
			t.Fatalf("lock file %q: %v, want ErrLocked naming an unknown process", content, err)
		}
	}
}

func TestMissingDirectory(t *testing.T) {
	_, err := dirlock.Acquire(filepath.Join(t.TempDir(), "absent"))
	if err == nil || errors.Is(err, dirlock.ErrLocked) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Acquire of a missing directory: %v", err)
	}
}

// TestAcrossProcesses: a child process holds the lock; this process is
// refused with the child's pid; the child is refused while this process
// holds it; after kill -9 of the holder the lock is free again.
func TestAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	h, line := startHolder(t, dir)
	if line != "locked" {
		t.Fatalf("holder: %q", line)
	}
	_, err := dirlock.Acquire(dir)
	var le *dirlock.LockedError
	if !errors.As(err, &le) || le.PID != h.cmd.Process.Pid {
		t.Fatalf("Acquire while a child holds the lock: %v, want the child's pid %d", err, h.cmd.Process.Pid)
	}

	// kill -9: the kernel drops the lock with the process.
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.wait(t)
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}

	// And the other way round: this process holds it, a child is refused.
	h2, line := startHolder(t, dir)
	if want := "process " + strconv.Itoa(os.Getpid()); !strings.Contains(line, want) {
		t.Fatalf("child while this process holds the lock printed %q, want it to name %q", line, want)
	}
	var exit *exec.ExitError
	if err := h2.wait(t); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("refused child exited with %v, want status 3", err)
	}
	l.Release()

	// Released by a clean exit too.
	h3, line := startHolder(t, dir)
	if line != "locked" {
		t.Fatalf("holder after Release: %q", line)
	}
	h3.stdin.Close()
	if err := h3.wait(t); err != nil {
		t.Fatalf("holder exit: %v", err)
	}
	l, err = dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder exited: %v", err)
	}
	l.Release()
}
