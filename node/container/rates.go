package container

import (
	"github.com/sluice-streams/sluice/node/rates"
)

// Rates returns a segment's append rates as of now (unix ns): what
// AppendAsync counted in this process (appends of new blocks only: resends
// and replayed records are not counted), and what Merge added of a
// transaction segment merged into it (its bytes, and the events
// AppendAsync counted in it in this process: those appended before a
// restart count as bytes only). The first
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
