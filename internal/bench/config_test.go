package bench

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestShareSplitsCountEvenly(t *testing.T) {
	for _, tc := range []struct {
		count   int64
		writers int
		want    []int64
	}{
		{0, 3, []int64{0, 0, 0}}, // until the duration is over
		{10, 1, []int64{10}},
		{10, 3, []int64{4, 3, 3}},
		{11, 3, []int64{4, 4, 3}},
		{2, 5, []int64{1, 1, 0, 0, 0}},
	} {
		var sum int64
		for i, want := range tc.want {
			got := share(tc.count, tc.writers, i)
			if got != want {
				t.Errorf("share(%d, %d, %d) = %d, want %d", tc.count, tc.writers, i, got, want)
			}
			sum += got
		}
		if sum != tc.count {
			t.Errorf("shares of %d over %d writers sum to %d", tc.count, tc.writers, sum)
		}
	}
}

// TestIntervalPacesTheRate: each of w writers writes one event every
// w/rate seconds, so together they write rate events/s.
func TestIntervalPacesTheRate(t *testing.T) {
	for _, tc := range []struct {
		rate    float64
		writers int
		want    time.Duration
	}{
		{0, 4, 0}, // unpaced
		{1000, 1, time.Millisecond},
		{3000, 3, time.Millisecond},
		{10240, 1, 97656 * time.Nanosecond}, // 10 MiB/s of 1 KiB events
		{0.5, 2, 4 * time.Second},
	} {
		if got := interval(tc.rate, tc.writers); got != tc.want {
			t.Errorf("interval(%v, %d) = %v, want %v", tc.rate, tc.writers, got, tc.want)
		}
	}
}

func TestDefaultsAndExpected(t *testing.T) {
	base := Config{Mode: Write, Writers: 1, Readers: 1, Segments: 1, EventSize: 1}
	if c := base.withDefaults(); c.Duration != DefaultDuration || c.Count != 0 ||
		c.DiskProbeBytes != DefaultDiskProbeBytes || c.DiskProbeSyncs != DefaultDiskProbeSyncs || c.DiskProbeGroup != DefaultDiskProbeGroup {
		t.Errorf("write defaults: %+v", c)
	}
	read := base
	read.Mode = Read
	if c := read.withDefaults(); c.Count != DefaultCount || c.Duration != 0 {
		t.Errorf("read defaults: count %d duration %v, want %d and 0", c.Count, c.Duration, DefaultCount)
	}
	given := base
	given.Count, given.DiskProbeBytes, given.DiskProbeSyncs, given.DiskProbeGroup = 7, 4<<20, 50, time.Second
	if c := given.withDefaults(); c.Count != 7 || c.Duration != 0 || c.DiskProbeBytes != 4<<20 || c.DiskProbeSyncs != 50 || c.DiskProbeGroup != time.Second {
		t.Errorf("given values replaced: %+v", c)
	}

	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{Count: 500}, 500},
		{Config{Count: 5 << 20}, 1 << 20},
		{Config{Rate: 1000, Duration: 10 * time.Second}, 11000},
		{Config{Duration: time.Second}, 1 << 20},
	} {
		if got := tc.c.expected(); got != tc.want {
			t.Errorf("expected() of count %d rate %v duration %v = %d, want %d", tc.c.Count, tc.c.Rate, tc.c.Duration, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Mode: E2E, Writers: 1, Readers: 1, Segments: 1, EventSize: 8}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Mode = "scan" }, `mode "scan": want write, read, e2e or scale`},
		{func(c *Config) { c.Writers = 0 }, "--writers 0: want at least 1"},
		{func(c *Config) { c.Readers = 0 }, "--readers 0: want at least 1"},
		{func(c *Config) { c.Segments = 0 }, "--segments 0: want at least 1"},
		{func(c *Config) { c.Stream, c.Keep = "s/x", true }, "--keep applies to the stream bench creates"},
		{func(c *Config) { c.EventSize = 8<<20 + 1 }, "--event-size 8388609: want 1 to 8388608"},
		{func(c *Config) { c.EventSize = 4 }, "e2e events carry an 8-byte timestamp"},
		{func(c *Config) { c.Rate = -1 }, "--rate -1: want 0 (unlimited) or more"},
		{func(c *Config) { c.FinePacing = true }, "--fine-pacing paces a --rate; there is none"},
		{func(c *Config) { c.SlowOver = -time.Millisecond }, "--slow-over -1ms: want 0 or more"},
		{func(c *Config) { c.Mode, c.SlowLog = Read, io.Discard }, "--slow-log: with bench write or e2e"},
		{func(c *Config) { c.Duration = -time.Second }, "--duration -1s: want more than 0"},
		{func(c *Config) { c.Count = -1 }, "--count -1: want at least 1"},
		{func(c *Config) { c.Count, c.Duration = 1, time.Second }, "--duration and --count exclude each other"},
		{func(c *Config) { c.DiskProbeSyncs = -1 }, "disk probe"},
		{func(c *Config) { c.DiskProbeGroup = -time.Second }, "an ideal log for -1s"},
		{func(c *Config) { c.DiskCanary = true }, "--disk-canary: with --measure-disk"},
		{func(c *Config) { c.Mode, c.DiskCanary, c.DiskDir = Read, true, t.TempDir() }, "--disk-canary: with --measure-disk, and bench write or e2e"},
		{func(c *Config) { c.DiskDir = file }, "--disk-dir " + file + ": not a directory"},
	} {
		c := ok
		tc.change(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Validate() = %v, want ErrInvalidConfig with %q", err, tc.want)
		}
	}
	// Write events need no timestamp.
	w := ok
	w.Mode, w.EventSize = Write, 1
	if err := w.Validate(); err != nil {
		t.Errorf("1-byte write events: %v", err)
	}
}
