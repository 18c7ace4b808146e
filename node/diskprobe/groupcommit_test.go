package diskprobe

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeClock is groupLoop's clock in tests: commits and waits move it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// A commit that stalls delays every event that falls due during it, and
// the next commit takes them all: each event's latency runs from when it
// fell due.
func TestGroupLoopCountsEveryDelayedEvent(t *testing.T) {
	ms := time.Millisecond
	start := time.Unix(1000, 0)
	clock := &fakeClock{t: start}
	stalls := []time.Duration{3500 * time.Microsecond} // the first commit stalls; the rest take 0.5 ms
	var commits []int
	var waits []time.Duration
	loop := groupLoop{
		sched: schedule{start: start, interval: ms},
		total: 7,
		now:   clock.now,
		wait: func(t time.Time) error {
			waits = append(waits, t.Sub(start))
			if t.After(clock.t) {
				clock.t = t
			}
			return nil
		},
		commit: func(events int) error {
			commits = append(commits, events)
			took := 500 * time.Microsecond
			if len(stalls) > 0 {
				took, stalls = stalls[0], stalls[1:]
			}
			clock.t = clock.t.Add(took)
			return nil
		},
	}
	lat, syncs, err := loop.run(nil)
	if err != nil {
		t.Fatal(err)
	}
	// t=0: event 0, done at 3.5 ms. Events 1-3 fell due meanwhile: done at
	// 4 ms. Event 4 (due at 4 ms): done at 4.5. Then one event each, at
	// 5, 6 ms after a wait: done 0.5 ms later.
	wantCommits := []int{1, 3, 1, 1, 1}
	wantLat := []time.Duration{3500 * time.Microsecond, 3 * ms, 2 * ms, 1 * ms, 500 * time.Microsecond, 500 * time.Microsecond, 500 * time.Microsecond}
	if !reflect.DeepEqual(commits, wantCommits) || syncs != len(wantCommits) {
		t.Errorf("commits %v (%d syncs), want %v", commits, syncs, wantCommits)
	}
	if !reflect.DeepEqual(lat, wantLat) {
		t.Errorf("latencies %v, want %v", lat, wantLat)
	}
	if want := []time.Duration{5 * ms, 6 * ms}; !reflect.DeepEqual(waits, want) {
		t.Errorf("waited until %v, want %v", waits, want)
	}
}

func TestGroupLoopStopsAtTheFirstError(t *testing.T) {
	start := time.Unix(1000, 0)
	clock := &fakeClock{t: start.Add(10 * time.Millisecond)} // 11 events due at once
	boom := errors.New("boom")
	calls, advance := 0, time.Millisecond
	loop := groupLoop{sched: schedule{start: start, interval: time.Millisecond}, total: 20, now: clock.now,
		wait: func(time.Time) error { return boom },
		commit: func(int) error {
			if calls++; calls == 2 {
				return boom
			}
			clock.t = clock.t.Add(advance)
			return nil
		}}
	lat, syncs, err := loop.run(nil)
	if !errors.Is(err, boom) || syncs != 1 || len(lat) != 11 {
		t.Fatalf("commit error: got %d latencies, %d syncs, err %v; want 11, 1, boom", len(lat), syncs, err)
	}
	// A failed wait ends the loop too: one event due, committed, then
	// the wait for the next fails.
	clock.t, calls, advance = start, -100, 500*time.Microsecond
	lat, syncs, err = loop.run(nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "wait") || syncs != 1 || len(lat) != 1 {
		t.Fatalf("wait error: got %d latencies, %d syncs, err %v; want 1, 1, a failed wait", len(lat), syncs, err)
	}
}

func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	res, err := GroupCommit(dir, 1024, 2000, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 400 || len(res.Latencies) != 400 || res.Size != 1024 || res.Rate != 2000 {
		t.Fatalf("got %d events (%d latencies), want 400: %v", res.Events, len(res.Latencies), res)
	}
	if res.Syncs < 1 || res.Syncs > res.Events {
		t.Fatalf("%d syncs for %d events", res.Syncs, res.Events)
	}
	if res.Latencies.Min() <= 0 {
		t.Fatalf("an event was durable before it fell due: %v", res.Latencies)
	}
	if !strings.Contains(res.String(), "400 events of 1024 B") {
		t.Fatalf("String() = %q", res.String())
	}
	assertEmpty(t, dir)
}

// A load that would need a larger file than the bound is probed for
// fewer events: the file never holds more than the bound.
func TestGroupCommitBoundsItsFile(t *testing.T) {
	dir := t.TempDir()
	res, err := groupCommit(dir, 1024, 1e10, time.Second, 64<<10) // faster than one event a nanosecond
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 64 || len(res.Latencies) != 64 {
		t.Fatalf("%d events (%d latencies), want the 64 that fit 64 KiB", res.Events, len(res.Latencies))
	}
	assertEmpty(t, dir)
}

func TestGroupCommitErrors(t *testing.T) {
	dir := t.TempDir()
	for _, err := range []error{
		func() error { _, err := GroupCommit(dir, 0, 100, time.Second); return err }(),
		func() error { _, err := GroupCommit(dir, 1, 0, time.Second); return err }(),
		func() error { _, err := GroupCommit(dir, 1, 100, time.Millisecond); return err }(), // no event falls due
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("err = %v, want ErrInvalidArgument", err)
		}
	}
	if _, err := groupCommit(dir, 2048, 100, time.Second, 1024); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("an event larger than the file: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := GroupCommit(filepath.Join(dir, "missing"), 1024, 100, time.Second); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing dir: err = %v, want ErrNotExist", err)
	}
	assertEmpty(t, dir)
}
