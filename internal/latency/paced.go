package latency

import "time"

// RunPaced runs n operations on a fixed schedule, one every interval from
// now, and records in rec each one's latency from its submission to its
// completion. submit starts operation i without waiting for it and returns
// the function that waits for it; the waits run in submission order on one
// goroutine, so submission never waits for completion (a stall of the
// system under test cannot hide behind a stalled generator). The pacing
// waits until each operation's scheduled time on a Pacer (a fine timer
// on Linux; elsewhere time.Sleep, whose waits under a millisecond last
// about one, so that operations leave in small bursts that catch up with
// the schedule); an operation that is late leaves at once. RunPaced
// returns the first error of a wait on the Pacer or of a submit (it then
// stops submitting), or of a wait for an operation.
func RunPaced(n int, interval time.Duration, rec *Recorder, submit func(i int) (wait func() error, err error)) error {
	type sent struct {
		wait      func() error
		submitted time.Time
	}
	inflight := make(chan sent, 1<<16)
	done := make(chan error, 1)
	go func() {
		var first error
		for s := range inflight {
			if err := s.wait(); err != nil && first == nil {
				first = err
			}
			rec.Since(s.submitted)
		}
		done <- first
	}()
	pacer := NewPacer()
	defer pacer.Close()
	start := time.Now()
	var submitErr error
	for i := 0; i < n; i++ {
		if interval > 0 {
			if err := pacer.Until(start.Add(time.Duration(i) * interval)); err != nil {
				submitErr = err
				break
			}
		}
		submitted := time.Now()
		wait, err := submit(i)
		if err != nil {
			submitErr = err
			break
		}
		inflight <- sent{wait, submitted}
	}
	close(inflight)
	waitErr := <-done
	if submitErr != nil {
		return submitErr
	}
	return waitErr
}
