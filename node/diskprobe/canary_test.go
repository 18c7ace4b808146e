package diskprobe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// One sync per tick, each recorded when it ended, in order; Stop removes
// the file.
func TestCanarySyncsOncePerTick(t *testing.T) {
	dir := t.TempDir()
	ticks := make(chan time.Time) // unbuffered: a send returns once the canary took the tick
	c, err := startCanary(dir, ticks)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	for range 3 {
		ticks <- time.Now()
	}
	syncs, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(syncs) != 3 {
		t.Fatalf("%d syncs for 3 ticks: %v", len(syncs), syncs)
	}
	for i, s := range syncs {
		if s.Took <= 0 || s.At.Before(before) || (i > 0 && s.At.Before(syncs[i-1].At)) {
			t.Fatalf("sync %d: %+v (previous %+v)", i, s, syncs[max(i-1, 0)])
		}
	}
	assertEmpty(t, dir)
}

func TestStartCanary(t *testing.T) {
	dir := t.TempDir()
	c, err := StartCanary(dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
	if _, err := StartCanary(dir, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("interval 0: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := StartCanary(filepath.Join(dir, "missing"), time.Millisecond); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing dir: err = %v, want ErrNotExist", err)
	}
}
