package diskprobe

import (
	"fmt"
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-streams/sluice/internal/latency"
)

// GroupCommitResult is what GroupCommit measured.
type GroupCommitResult struct {
	Size   int     // bytes per event
	Rate   float64 // events per second offered
	Syncs  int     // fdatasyncs: the batches the events were written in
	Events int
	// Latencies holds one latency per event: from the moment the event
	// was due (on the fixed schedule) to the end of the fdatasync that
	// covered it.
	Latencies latency.Sorted
}

func (r GroupCommitResult) String() string {
	return fmt.Sprintf("%d events of %d B at %.0f/s in %d syncs: %v", r.Events, r.Size, r.Rate, r.Syncs, r.Latencies)
}

// GroupCommit measures the latency an ideal write-ahead log would give on
// the disk under dir at a steady load: events of size bytes fall due on a
// fixed schedule, rate a second, for d. One loop writes every event that
// is due as one write and fdatasyncs it, then takes what fell due
// meanwhile, and so on; it waits for the next event only when none is
// due (on a timerfd, so the wait is not a timer's coarse sleep). The
// file is zero-filled and fsynced first, as a log's preallocated file:
// the fdatasyncs commit data only, never the file's size.
//
// Unlike SyncLatency, which times one sync at a time, this counts every
// event a slow sync delays: a 10 ms stall at 10,000 events a second makes
// 100 events late, not one. It is the disk's share of an acknowledged
// append's latency under the same open load a benchmark offers, without
// any of the node's own costs (no second thread, no copies, no network).
//
// The file holds at most MaxGroupCommitBytes: a load that would write more
// in d is probed for fewer events (Events says how many).
func GroupCommit(dir string, size int, rate float64, d time.Duration) (GroupCommitResult, error) {
	return groupCommit(dir, size, rate, d, MaxGroupCommitBytes)
}

// MaxGroupCommitBytes bounds GroupCommit's file: the events' bytes are
// zero-filled before the run.
const MaxGroupCommitBytes = 256 << 20

func groupCommit(dir string, size int, rate float64, d time.Duration, maxBytes int64) (GroupCommitResult, error) {
	total := int(math.Floor(rate*d.Seconds() + 1e-3)) // N/rate, cut to whole ns, still holds N events
	if size <= 0 || rate <= 0 || total <= 0 || int64(size) > maxBytes {
		return GroupCommitResult{}, fmt.Errorf("%w: size %d (at most %d), rate %v/s for %v (at least one event)",
			ErrInvalidArgument, size, maxBytes, rate, d)
	}
	total = int(min(int64(total), maxBytes/int64(size)))
	res := GroupCommitResult{Size: size, Rate: rate, Events: total}
	lat := make([]time.Duration, 0, total)
	err := withTempFile(dir, func(f *os.File) error {
		if err := zeroFill(f, int64(total)*int64(size)); err != nil {
			return err
		}
		pacer := latency.NewPacer()
		defer pacer.Close()
		var buf []byte
		var off int64
		loop := groupLoop{
			sched: schedule{start: time.Now(), interval: max(time.Duration(float64(time.Second)/rate), 1)},
			total: total, now: time.Now, wait: pacer.Until,
			commit: func(events int) error {
				n := events * size
				if len(buf) < n {
					buf = pattern(max(n, 2*len(buf)))
				}
				if _, err := f.WriteAt(buf[:n], off); err != nil {
					return fmt.Errorf("diskprobe: write: %w", err)
				}
				off += int64(n)
				if err := fdatasync(f); err != nil {
					return fmt.Errorf("diskprobe: %w", err)
				}
				return nil
			},
		}
		var err error
		lat, res.Syncs, err = loop.run(lat)
		return err
	})
	if err != nil {
		return GroupCommitResult{}, err
	}
	res.Latencies = latency.Sort(lat)
	return res, nil
}

// groupLoop is GroupCommit's loop, apart from the clock and the disk:
// commit(n) writes the next n events and makes them durable, wait(t)
// returns at t or later.
type groupLoop struct {
	sched  schedule
	total  int
	now    func() time.Time
	wait   func(time.Time) error
	commit func(events int) error
}

// run commits the events as they fall due and appends each one's latency
// to lat, in event order; it returns them and the number of commits.
func (g groupLoop) run(lat []time.Duration) ([]time.Duration, int, error) {
	syncs := 0
	for done := 0; done < g.total; {
		due := min(g.sched.dueBy(g.now()), g.total)
		if due == done {
			if err := g.wait(g.sched.at(done)); err != nil {
				return lat, syncs, fmt.Errorf("diskprobe: wait: %w", err)
			}
			continue
		}
		if err := g.commit(due - done); err != nil {
			return lat, syncs, err
		}
		syncs++
		lat = g.sched.latencies(lat, done, due, g.now())
		done = due
	}
	return lat, syncs, nil
}

// schedule is GroupCommit's fixed arrivals: event i falls due at
// start + i*interval.
type schedule struct {
	start    time.Time
	interval time.Duration
}

// at is when event i falls due.
func (s schedule) at(i int) time.Time { return s.start.Add(time.Duration(i) * s.interval) }

// dueBy is how many events have fallen due by t.
func (s schedule) dueBy(t time.Time) int {
	if t.Before(s.start) {
		return 0
	}
	return int(t.Sub(s.start)/s.interval) + 1
}

// latencies appends the latencies of events from (inclusive) to to
// (exclusive), made durable at end.
func (s schedule) latencies(lat []time.Duration, from, to int, end time.Time) []time.Duration {
	for i := from; i < to; i++ {
		lat = append(lat, end.Sub(s.at(i)))
	}
	return lat
}

// fdatasync makes f's data durable without its metadata (its size does
// not change: zeroFill made the blocks).
func fdatasync(f *os.File) error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// zeroFill writes n zero bytes to f from its start, 1 MiB at a time, and
// fsyncs it: the blocks exist before the timed writes land in them.
func zeroFill(f *os.File, n int64) error {
	zeros := make([]byte, min(n, DefaultBlockSize))
	for off := int64(0); off < n; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), n-off)], off); err != nil {
			return fmt.Errorf("diskprobe: zero-fill: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("diskprobe: fsync: %w", err)
	}
	return nil
}
