package noderole

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGoMemoryLimit(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want int64
	}{
		{"derived from the cache", Config{CacheSize: 64 << 20}, 64<<20 + MemoryMargin},
		{"the default cache", Config{}, 256<<20 + MemoryMargin},
		{"the flag wins", Config{CacheSize: 64 << 20, MemoryLimit: 1 << 30}, 1 << 30},
	}
	for _, tt := range tests {
		if got := tt.cfg.GoMemoryLimit(); got != tt.want {
			t.Errorf("%s: limit %d, want %d", tt.name, got, tt.want)
		}
	}
}

// ApplyMemoryLimit sets the derived limit, or the flag's, and leaves the
// one GOMEMLIMIT gave the runtime unless the flag is set.
func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	t.Setenv("GOMEMLIMIT", "")
	if got, from := ApplyMemoryLimit(Config{CacheSize: 32 << 20}); got != 32<<20+MemoryMargin || from != MemoryLimitDerived {
		t.Fatalf("derived: %d from %q", got, from)
	}
	if now := debug.SetMemoryLimit(-1); now != 32<<20+MemoryMargin {
		t.Fatalf("the runtime's limit is %d, want %d", now, 32<<20+MemoryMargin)
	}

	// As if the runtime had read GOMEMLIMIT=1GiB at start.
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	if got, from := ApplyMemoryLimit(Config{CacheSize: 32 << 20}); got != 1<<30 || from != MemoryLimitEnv {
		t.Fatalf("with GOMEMLIMIT: %d from %q, want the environment's %d", got, from, 1<<30)
	}
	if got, from := ApplyMemoryLimit(Config{CacheSize: 32 << 20, MemoryLimit: 200 << 20}); got != 200<<20 || from != MemoryLimitFlag {
		t.Fatalf("the flag with GOMEMLIMIT: %d from %q", got, from)
	}
	if now := debug.SetMemoryLimit(-1); now != 200<<20 {
		t.Fatalf("the runtime's limit is %d, want the flag's %d", now, 200<<20)
	}

	// GOMEMLIMIT=off: the runtime has no limit, and it stays so.
	t.Setenv("GOMEMLIMIT", "off")
	debug.SetMemoryLimit(math.MaxInt64)
	if got, from := ApplyMemoryLimit(Config{}); got != math.MaxInt64 || from != MemoryLimitEnv {
		t.Fatalf("GOMEMLIMIT=off: %d from %q", got, from)
	}
}

func TestValidateRefusesANegativeMemoryLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MemoryLimit = -1
	if err := cfg.Validate(); err == nil {
		t.Fatal("a negative memory limit validated")
	}
}
