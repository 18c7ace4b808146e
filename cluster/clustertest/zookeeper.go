package clustertest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/internal/porttest"
)

// ZooKeeperJar is the jar of Debian's zookeeper package (libzookeeper-java).
// Its manifest's Class-Path names the jars it needs (slf4j, netty, jute,
// jetty, metrics, ...), all under /usr/share/java, so it is the whole
// classpath. With no slf4j binding on it the server logs nothing, which
// suits tests.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// zkStartTimeout bounds the wait for a started server to serve.
const zkStartTimeout = 60 * time.Second

// ZooKeeper is a standalone ZooKeeper server that a test started: a JVM
// running ZooKeeperServerMain, listening on 127.0.0.1 only, its data in a
// directory of the caller's.
type ZooKeeper struct {
	// Addr is the server's client address, "127.0.0.1:PORT".
	Addr string

	cmd  *exec.Cmd
	dir  string
	done chan struct{} // closed when the JVM has exited
	err  error         // the JVM's exit, valid after done
}

// NewZooKeeper starts a ZooKeeper server with its data and log in dir and
// returns once it serves. Stop it with Stop. It fails, saying to run
// scripts/test-deps.sh, if java or Debian's zookeeper package is missing.
//
// Use StartZooKeeper in a test; NewZooKeeper is for a server that a whole
// test package shares (started on first use, stopped in TestMain).
func NewZooKeeper(dir string) (*ZooKeeper, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("clustertest: java not found on PATH; run scripts/test-deps.sh (make test does) to install default-jre-headless and zookeeper")
	}
	if _, err := os.Stat(ZooKeeperJar); err != nil {
		return nil, fmt.Errorf("clustertest: %s missing; run scripts/test-deps.sh (make test does) to install Debian's zookeeper package: %v", ZooKeeperJar, err)
	}
	// A free port can be taken between picking and binding it: try a few.
	var lastErr error
	for attempt := range 3 {
		z, err := startZooKeeper(java, filepath.Join(dir, strconv.Itoa(attempt)))
		if err == nil {
			return z, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startZooKeeper(java, dir string) (*ZooKeeper, error) {
	// The port stays reserved for the rest of the process (the lock goes
	// with it), so a Restart finds it still free.
	ports, _, err := porttest.Reserve(1)
	if err != nil {
		return nil, fmt.Errorf("clustertest: free port: %w", err)
	}
	return startZooKeeperAt(java, dir, ports[0])
}

// startZooKeeperAt starts a server on port with its files in dir (kept
// if they are there: a restart).
func startZooKeeperAt(java, dir string, port int) (*ZooKeeper, error) {
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	// A config file rather than `ZooKeeperServerMain PORT DIR`, so the
	// server listens on loopback only. A tick of 100 ms lets tests use
	// session timeouts from 200 ms.
	cfg := fmt.Sprintf(`tickTime=100
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
minSessionTimeout=200
maxSessionTimeout=60000
`, dataDir, port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "zookeeper.out")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()

	cmd := exec.Command(java,
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		// No admin web server (it would want port 8080), no fsync per
		// transaction (tests need no crash safety from ZooKeeper).
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.forceSync=no",
		"-cp", ZooKeeperJar,
		"org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath)
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	// The server dies with the test process, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("clustertest: start ZooKeeper: %w", err)
	}
	z := &ZooKeeper{
		Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		cmd:  cmd,
		dir:  dir,
		done: make(chan struct{}),
	}
	go func() {
		z.err = cmd.Wait()
		close(z.done)
	}()
	if err := z.waitServing(); err != nil {
		z.Stop()
		out, _ := os.ReadFile(logPath)
		if len(out) > 4096 {
			out = out[len(out)-4096:]
		}
		return nil, fmt.Errorf("clustertest: ZooKeeper on %s: %w; its output:\n%s", z.Addr, err, bytes.TrimSpace(out))
	}
	return z, nil
}

// waitServing polls the server with Exists("/") until it answers, the JVM
// exits, or zkStartTimeout passes.
func (z *ZooKeeper) waitServing() error {
	conn, _, err := zk.Connect([]string{z.Addr}, 10*time.Second, zk.WithLogger(nopLogger{}))
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.After(zkStartTimeout)
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		if ok, _, err := conn.Exists("/"); err == nil && ok {
			return nil
		}
		select {
		case <-z.done:
			return fmt.Errorf("server exited: %v", z.err)
		case <-deadline:
			return fmt.Errorf("not serving after %v", zkStartTimeout)
		case <-poll.C:
		}
	}
}

// Restart kills the server and starts it again on the same port with the
// same data, as an operator's restart of an ensemble: sessions whose
// timeout has not passed by the time it serves again survive it, and their
// clients reconnect. z then stands for the new server.
func (z *ZooKeeper) Restart() error {
	z.Stop()
	_, port, err := net.SplitHostPort(z.Addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	next, err := startZooKeeperAt(z.cmd.Path, z.dir, p)
	if err != nil {
		return err
	}
	*z = *next
	return nil
}

// Stop kills the server and waits for it to exit.
func (z *ZooKeeper) Stop() {
	select {
	case <-z.done:
		return
	default:
	}
	_ = z.cmd.Process.Kill()
	<-z.done
}

// StartZooKeeper starts a ZooKeeper server for t, stopped when t ends, and
// returns its address. It fails t (never skips) if java or ZooKeeper is
// missing.
func StartZooKeeper(t testing.TB) string {
	t.Helper()
	z, err := NewZooKeeper(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Stop)
	return z.Addr
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
