package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress prints a line on stderr about once a second: events/s and MB/s
// over the last second and the p99 so far. On a terminal the line is
// rewritten in place (\r); otherwise each one is a line of its own.
type progress struct {
	w     io.Writer
	tty   bool
	label string

	mu   sync.Mutex
	quit chan struct{}
	done chan struct{}
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// start shows the progress of the counters until stop.
func (p *progress) start(events, bytes *atomic.Int64, h *histogram) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quit, p.done = make(chan struct{}), make(chan struct{})
	quit, done, label := p.quit, p.done, p.label
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		begin := time.Now()
		lastT, lastE, lastB := begin, int64(0), int64(0)
		printed := false
		for {
			select {
			case <-quit:
				if printed && p.tty {
					fmt.Fprintln(p.w)
				}
				return
			case now := <-t.C:
				e, b := events.Load(), bytes.Load()
				s := now.Sub(lastT).Seconds()
				line := fmt.Sprintf("%s%5.0fs  %9.0f events/s  %8.1f MB/s  p99 %.3f ms  (%d events)",
					label, now.Sub(begin).Seconds(), float64(e-lastE)/s, float64(b-lastB)/s/1e6, millis(h.percentile(99)), e)
				lastT, lastE, lastB = now, e, b
				if p.tty {
					fmt.Fprintf(p.w, "\r%s\033[K", line)
				} else {
					fmt.Fprintln(p.w, line)
				}
				printed = true
			}
		}
	}()
}

// stop ends the line started last; stopping twice is not an error.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quit == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.quit = nil
}
