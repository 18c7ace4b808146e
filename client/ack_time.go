package client

import "time"

// Settled returns when the Writer learnt the Ack's outcome: the time its
// Done channel closed, taken just before, on the same clock as time.Now
// (with its monotonic reading). It is the zero Time before Done is closed,
// and for an Ack that failed in Write itself. A benchmark subtracts its
// Write time from it to time an acknowledgement without the wake-up of
// the goroutine that waits on Done.
func (a *Ack) Settled() time.Time {
	select {
	case <-a.g.done:
		return a.g.at
	default:
		return time.Time{}
	}
}
