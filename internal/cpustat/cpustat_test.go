package cpustat

import (
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	got, err := Parse("cpu  5022544 1352 3301073 5395608 343810 0 167662 168950 0 0")
	if err != nil {
		t.Fatal(err)
	}
	want := Times{User: 5022544, Nice: 1352, System: 3301073, Idle: 5395608, IOWait: 343810, IRQ: 0, SoftIRQ: 167662, Steal: 168950}
	if got != want {
		t.Fatalf("Parse = %+v, want %+v", got, want)
	}
	// An old kernel: no steal, no iowait.
	got, err = Parse("cpu 10 0 5 85")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Times{User: 10, System: 5, Idle: 85}); got != want {
		t.Fatalf("Parse of four counters = %+v, want %+v", got, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, line := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "intr 1 2 3", "cpu 1 2 3", "cpu 1 2 x 4", "cpu 1 2 3 -4"} {
		if _, err := Parse(line); err == nil {
			t.Errorf("Parse(%q) = nil error", line)
		}
	}
	if _, err := Parse("cpu0 1 2 3 4"); !errors.Is(err, ErrNotCPULine) {
		t.Errorf("Parse of a per-CPU line: %v, want ErrNotCPULine", err)
	}
}

func TestBetween(t *testing.T) {
	a := Times{User: 100, System: 50, Idle: 800, IOWait: 10, SoftIRQ: 5, Steal: 35}
	b := Times{User: 160, System: 70, Idle: 880, IOWait: 20, SoftIRQ: 10, Steal: 60}
	// Deltas: busy 60+20+5 = 85, idle 80, iowait 10, steal 25: 200.
	s := Between(a, b)
	want := Shares{Busy: 85.0 / 200, Idle: 80.0 / 200, IOWait: 10.0 / 200, Steal: 25.0 / 200}
	if s != want {
		t.Fatalf("Between = %+v, want %+v", s, want)
	}
	if s := Between(a, a); s != (Shares{}) {
		t.Fatalf("Between of one sample = %+v, want zeros", s)
	}
	// A counter that went backwards counts as nothing.
	c := b
	c.Steal = 0
	if s := Between(b, c); s != (Shares{}) {
		t.Fatalf("Between with a counter going back = %+v, want zeros", s)
	}
}

// TestReadAdvances reads the machine's own counters while spinning: this
// CPU's busy (or stolen) time must show, and the shares add up to 1.
func TestReadAdvances(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, err := Read(); err == nil {
			t.Fatal("Read without /proc/stat: nil error")
		}
		return
	}
	a, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	// The counters move in clock ticks (10 ms at USER_HZ 100), each CPU's
	// at its own tick: spin until the busy or stolen time moves, so the
	// test needs no sleep. A busy column read as idle would never move.
	deadline := time.Now().Add(10 * time.Second)
	var b Times
	for {
		if b, err = Read(); err != nil {
			t.Fatal(err)
		}
		if b.busy() > a.busy() || b.Steal > a.Steal {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no busy or stolen time in %s after 10 s of spinning: %+v then %+v", Path, a, b)
		}
	}
	s := Between(a, b)
	if sum := s.Busy + s.Idle + s.IOWait + s.Steal; math.Abs(sum-1) > 1e-9 {
		t.Fatalf("shares %+v add up to %v, want 1", s, sum)
	}
}
