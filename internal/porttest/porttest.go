package porttest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Span is an inclusive range of ports.
type Span struct{ Lo, Hi int }

// defaultEphemeral is Linux's default ip_local_port_range, used when the
// file cannot be read.
var defaultEphemeral = Span{32768, 60999}

// lowest is the lowest port handed out: below it sit well-known and
// registered services' ports.
const lowest = 10000

// Ports returns n distinct ports, each free on every address a moment
// ago, outside the ephemeral range and reserved against other callers
// of this package (in any process) until t's cleanup. It fails t if n
// ports cannot be found.
func Ports(t testing.TB, n int) []int {
	t.Helper()
	ports, release, err := Reserve(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return ports
}

// Port is Ports(t, 1)[0].
func Port(t testing.TB) int {
	t.Helper()
	return Ports(t, 1)[0]
}

// Addr is "127.0.0.1:" and Port(t).
func Addr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(Port(t))
}

// Reserve is Ports for callers without a testing.TB (a harness that
// outlives one test): release drops the reservations.
func Reserve(n int) (ports []int, release func(), err error) {
	return reserveIn(Candidates(readEphemeral()), n)
}

// reserveIn is Reserve over the ports of span.
func reserveIn(span Span, n int) (ports []int, release func(), err error) {
	// A directory per user: another user's lock files would not open.
	dir := filepath.Join(os.TempDir(), "sluice-test-ports-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, nil, fmt.Errorf("porttest: %w", err)
	}
	var locks []*os.File
	release = func() {
		for _, f := range locks {
			f.Close() // drops the lock
		}
	}
	size := span.Hi - span.Lo + 1
	start := rand.IntN(size)
	for i := 0; i < size && len(ports) < n; i++ {
		p := span.Lo + (start+i)%size
		f, err := lock(filepath.Join(dir, strconv.Itoa(p)))
		if errors.Is(err, unix.EWOULDBLOCK) {
			continue
		}
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("porttest: reserve port %d: %w", p, err)
		}
		if !bindable(p) {
			f.Close()
			continue
		}
		locks = append(locks, f)
		ports = append(ports, p)
	}
	if len(ports) < n {
		release()
		return nil, nil, fmt.Errorf("porttest: only %d of %d ports free in %d-%d", len(ports), n, span.Lo, span.Hi)
	}
	return ports, release, nil
}

// lock opens (creating) the file at path and takes an exclusive
// flock(2) on it without waiting; the lock lasts until the file is
// closed or the process ends. The files stay: removing one would let two
// processes lock two different files of one name.
func lock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// bindable reports whether a TCP listener can take port on every
// address right now.
func bindable(port int) bool {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Candidates is the span ports are chosen from given the ephemeral
// range: the larger of [lowest, eph.Lo-1] and [eph.Hi+1, 65535].
func Candidates(eph Span) Span {
	below := Span{lowest, eph.Lo - 1}
	above := Span{eph.Hi + 1, 65535}
	if below.Hi-below.Lo >= above.Hi-above.Lo {
		return below
	}
	return above
}

// readEphemeral reads the kernel's ephemeral port range.
func readEphemeral() Span {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeral
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeral
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo > hi {
		return defaultEphemeral
	}
	return Span{lo, hi}
}
