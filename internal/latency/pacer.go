package latency

import "time"

// A Pacer waits until scheduled times, finely. time.Sleep is coarse for
// waits under a millisecond: the runtime's poller waits in whole
// milliseconds when nothing else wakes it, so on an idle machine a
// 100 µs sleep takes about 1.1 ms, and a schedule of one operation every
// 100 µs leaves as bursts of ten or more every millisecond. On Linux a
// Pacer waits on a timerfd instead, which the kernel's high-resolution
// timers fire on time and the runtime's poller wakes for at once; a wait
// costs two or three system calls and, when the CPU was idle, its
// wake-up (about 33 µs of system time each on the virtual machine of
// docs/BENCHMARKS.md: a third of a CPU at 10,000 waits a second).
// Elsewhere it sleeps.
//
// A Pacer is for one goroutine at a time. Close releases it.
type Pacer struct {
	t *timerFile // nil: time.Sleep
}

// NewPacer returns a Pacer; one that sleeps if the fine timer cannot be
// made (not Linux, or out of file descriptors).
func NewPacer() *Pacer {
	t, err := newTimerFile()
	if err != nil {
		return &Pacer{}
	}
	return &Pacer{t: t}
}

// Until waits until t, returning at once if t has passed; it never
// returns before t unless the wait failed, with that error.
func (p *Pacer) Until(t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	if p.t == nil {
		time.Sleep(d) // pacing the load, not synchronisation
		return nil
	}
	return p.t.wait(d)
}

// Fine says whether the Pacer waits on the fine timer (false: it sleeps).
func (p *Pacer) Fine() bool { return p.t != nil }

// Close releases the timer; the Pacer then sleeps.
func (p *Pacer) Close() error {
	if p.t == nil {
		return nil
	}
	t := p.t
	p.t = nil
	return t.close()
}
