package noderole

import (
	"runtime"
	"testing"
)

func TestProcsFor(t *testing.T) {
	for _, c := range []struct {
		env      string
		current  int
		want     int
		wantFrom ProcsSource
	}{
		{"", 2, 3, ProcsDerived},
		{"", 1, 2, ProcsDerived},
		{"", 16, 17, ProcsDerived},
		{"2", 2, 2, ProcsEnv},
		{"4", 4, 4, ProcsEnv},
		{"1", 1, 1, ProcsEnv},
	} {
		if got, from := procsFor(c.env, c.current); got != c.want || from != c.wantFrom {
			t.Errorf("procsFor(%q, %d) = %d from %q, want %d from %q", c.env, c.current, got, from, c.want, c.wantFrom)
		}
	}
}

// ApplyProcs adds SyncProcs to the runtime's default, however often it
// is called, and leaves the value GOMAXPROCS gave the runtime.
func TestApplyProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	t.Setenv("GOMAXPROCS", "")
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	for range 2 {
		if n, from := ApplyProcs(); n != def+1 || from != ProcsDerived {
			t.Fatalf("derived: %d from %q, want %d", n, from, def+1)
		}
		if now := runtime.GOMAXPROCS(0); now != def+1 {
			t.Fatalf("the runtime runs %d Ps, want %d", now, def+1)
		}
	}

	// As if the runtime had read GOMAXPROCS=1 at start.
	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	if n, from := ApplyProcs(); n != 1 || from != ProcsEnv {
		t.Fatalf("with GOMAXPROCS: %d from %q, want the environment's 1", n, from)
	}
	if now := runtime.GOMAXPROCS(0); now != 1 {
		t.Fatalf("the runtime runs %d Ps, want the environment's 1", now)
	}
}
