package diskprobe

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// A Canary times one small write+fdatasync at a fixed interval while
// something else uses the disk (a benchmark run), so that each second of
// the run can be set against what the disk did in that same second: a
// second whose events were slow while the canary's syncs were fast points
// at the system under test, not at the disk. It rewrites one 4 KiB block
// of its own file, so its syncs commit data only; at one sync every 10 ms
// it adds 100 flushes a second beside the 1,700-7,000 of a log taking
// 10 MiB/s of 1 KiB events.
type Canary struct {
	f    *os.File
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	syncs []CanarySync
	err   error
}

// CanarySync is one of the canary's syncs: when it ended and how long its
// write and fdatasync took.
type CanarySync struct {
	At   time.Time
	Took time.Duration
}

// StartCanary starts a canary in dir that syncs once every interval until
// Stop.
func StartCanary(dir string, every time.Duration) (*Canary, error) {
	if every <= 0 {
		return nil, fmt.Errorf("%w: canary interval %v", ErrInvalidArgument, every)
	}
	t := time.NewTicker(every)
	c, err := startCanary(dir, t.C)
	if err != nil {
		t.Stop()
		return nil, err
	}
	go func() { <-c.done; t.Stop() }()
	return c, nil
}

// startCanary is StartCanary on any source of ticks: one sync per tick.
func startCanary(dir string, ticks <-chan time.Time) (*Canary, error) {
	f, err := os.CreateTemp(dir, ".diskprobe-canary-*")
	if err != nil {
		return nil, fmt.Errorf("diskprobe: %w", err)
	}
	c := &Canary{f: f, stop: make(chan struct{}), done: make(chan struct{})}
	block := pattern(DefaultSyncSize)
	if err := c.sync(block); err != nil { // the block exists before the first timed sync
		c.close()
		return nil, err
	}
	c.syncs = c.syncs[:0]
	go c.run(ticks, block)
	return c, nil
}

func (c *Canary) run(ticks <-chan time.Time, block []byte) {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-ticks:
			if err := c.sync(block); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			}
		}
	}
}

// sync writes the block and fdatasyncs it, and records how long that took.
func (c *Canary) sync(block []byte) error {
	start := time.Now()
	if _, err := c.f.WriteAt(block, 0); err != nil {
		return fmt.Errorf("diskprobe: canary write: %w", err)
	}
	if err := fdatasync(c.f); err != nil {
		return fmt.Errorf("diskprobe: canary: %w", err)
	}
	end := time.Now()
	c.mu.Lock()
	c.syncs = append(c.syncs, CanarySync{At: end, Took: end.Sub(start)})
	c.mu.Unlock()
	return nil
}

// Stop stops the canary, removes its file and returns its syncs in the
// order they ended, or the error that stopped it early. Call it once.
func (c *Canary) Stop() ([]CanarySync, error) {
	close(c.stop)
	<-c.done
	cerr := c.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.syncs, c.err
	}
	return c.syncs, cerr
}

// close closes and removes the canary's file.
func (c *Canary) close() error {
	err := c.f.Close()
	if rerr := os.Remove(c.f.Name()); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("diskprobe: canary: %w", err)
	}
	return nil
}
