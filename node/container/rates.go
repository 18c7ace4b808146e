package container

import (
	"time"

	"github.com/sluice-streams/sluice/node/rates"
)

// processStart is the instant RatesNow counts from.
var processStart = time.Now()

// RatesNow is the time the meters are given: nanoseconds since an instant
// taken when the process started, plus one (the Meter takes 0 as never),
// read from the monotonic clock. A step of the wall clock (NTP, an
// operator) then neither freezes nor inflates a segment's rates.
func RatesNow() int64 { return int64(time.Since(processStart)) + 1 }

// Rates returns a segment's append rates as of now (RatesNow): what
// AppendAsync and Merge counted in this process (appends of new blocks,
// and a merged transaction's events and bytes at its commit; resends and
// replayed records are not counted). The first
// call starts the segment's measuring if no append did (rates.Meter.Start),
// so a segment nobody writes to ages at zero rates. The rates are zero if
// Config.Rates is nil. A missing segment is an error wrapping
// protocol.ErrNoSuchSegment.
func (c *Container) Rates(segment string, now int64) (rates.Rates, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.segmentLocked(segment)
	if err != nil {
		return rates.Rates{}, err
	}
	if c.cfg.Rates == nil {
		return rates.Rates{}, nil
	}
	s.meter.Start(now)
	return s.meter.Snapshot(c.cfg.Rates, now), nil
}
