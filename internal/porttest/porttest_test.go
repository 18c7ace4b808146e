package porttest

import (
	"net"
	"strconv"
	"testing"
)

// TestPortsOutsideEphemeralAndBindable: every port handed out lies
// outside the kernel's ephemeral range, is distinct and can be bound.
func TestPortsOutsideEphemeralAndBindable(t *testing.T) {
	eph := readEphemeral()
	ports := Ports(t, 8)
	seen := map[int]bool{}
	for _, p := range ports {
		if p >= eph.Lo && p <= eph.Hi {
			t.Errorf("port %d inside the ephemeral range %d-%d", p, eph.Lo, eph.Hi)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d: %v", p, err)
			continue
		}
		l.Close()
	}
}

// TestReservedPortNotHandedOutTwice: a port one reservation holds is
// never handed out to another (the lock belongs to the open file, so
// this stands for a second process) until it is released.
func TestReservedPortNotHandedOutTwice(t *testing.T) {
	ports, release, err := Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	only := Span{ports[0], ports[0]}
	if got, _, err := reserveIn(only, 1); err == nil {
		t.Fatalf("port %d handed out again while reserved (got %v)", ports[0], got)
	}
	release()
	got, rel, err := reserveIn(only, 1)
	if err != nil || len(got) != 1 || got[0] != ports[0] {
		t.Fatalf("after release: %v, %v; want [%d]", got, err, ports[0])
	}
	rel()
}

// TestBusyPortSkipped: a port something listens on is never handed out.
func TestBusyPortSkipped(t *testing.T) {
	ports, release, err := Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	release()
	only := Span{ports[0], ports[0]}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := reserveIn(only, 1); err == nil {
		t.Fatalf("busy port %d handed out (got %v)", ports[0], got)
	}
	l.Close()
	got, rel, err := reserveIn(only, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("after the listener closed: %v, %v", got, err)
	}
	rel()
}

func TestCandidates(t *testing.T) {
	for _, c := range []struct{ eph, want Span }{
		{Span{32768, 60999}, Span{10000, 32767}},
		{Span{1024, 49151}, Span{49152, 65535}},
		{Span{20000, 30000}, Span{30001, 65535}},
	} {
		if got := Candidates(c.eph); got != c.want {
			t.Errorf("Candidates(%v) = %v, want %v", c.eph, got, c.want)
		}
	}
}
