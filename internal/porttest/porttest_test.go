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

// TestReservedPortsNotHandedOutTwice: while one reservation holds its
// ports another never gets them (the locks are per open file, so this
// stands for a second process); after release they can come back.
func TestReservedPortsNotHandedOutTwice(t *testing.T) {
	first, release, err := Reserve(50)
	if err != nil {
		t.Fatal(err)
	}
	held := map[int]bool{}
	for _, p := range first {
		held[p] = true
	}
	for range 20 {
		second, rel2, err := Reserve(50)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range second {
			if held[p] {
				t.Fatalf("port %d handed out while reserved", p)
			}
		}
		rel2()
	}
	release()
}

// TestBusyPortSkipped: a port something listens on is never handed out.
func TestBusyPortSkipped(t *testing.T) {
	span := Candidates(readEphemeral())
	// Occupy a whole small window of the span would be slow to arrange;
	// instead occupy every port Reserve returns and ask again.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	busy := map[int]bool{}
	ports, release, err := Reserve(30)
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, p := range ports {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		busy[p] = true
	}
	for range 20 {
		again, rel, err := Reserve(30)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range again {
			if busy[p] {
				t.Fatalf("busy port %d handed out (span %d-%d)", p, span.Lo, span.Hi)
			}
		}
		rel()
	}
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
