package latency

import (
	"runtime"
	"testing"
	"time"
)

// TestPacerNeverEarly: Until returns no earlier than its deadline, on the
// fine timer (Linux) and, once closed, on time.Sleep; a deadline that
// has passed returns at once.
func TestPacerNeverEarly(t *testing.T) {
	p := NewPacer()
	if got, want := p.Fine(), runtime.GOOS == "linux"; got != want {
		t.Fatalf("Fine() = %v on %s, want %v", got, runtime.GOOS, want)
	}
	check := func(what string) {
		t.Helper()
		for _, d := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
			due := time.Now().Add(d)
			if err := p.Until(due); err != nil {
				t.Fatalf("%s: Until(now+%v): %v", what, d, err)
			}
			if now := time.Now(); now.Before(due) {
				t.Fatalf("%s: Until(now+%v) returned %v early", what, d, due.Sub(now))
			}
		}
		if err := p.Until(time.Now().Add(-time.Second)); err != nil {
			t.Fatalf("%s: Until of a past time: %v", what, err)
		}
	}
	check("fine")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Fine() {
		t.Fatal("Fine() after Close = true")
	}
	check("closed")
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestRunPacedKeepsTheSchedule: operation i is submitted no earlier
// than i intervals after RunPaced was called.
func TestRunPacedKeepsTheSchedule(t *testing.T) {
	const n, interval = 40, 100 * time.Microsecond
	var at []time.Time
	before := time.Now() // the schedule starts after this
	err := RunPaced(n, interval, NewRecorder(n), func(i int) (func() error, error) {
		at = append(at, time.Now())
		return func() error { return nil }, nil
	})
	if err != nil || len(at) != n {
		t.Fatalf("err %v, %d submitted", err, len(at))
	}
	for i, x := range at {
		if due := before.Add(time.Duration(i) * interval); x.Before(due) {
			t.Fatalf("operation %d submitted %v before its time", i, due.Sub(x))
		}
	}
}
