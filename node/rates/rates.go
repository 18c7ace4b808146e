package rates

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// NumWindows is the number of averaging windows.
const NumWindows = 4

// ErrInvalid is returned by Config.Validate.
var ErrInvalid = errors.New("rates: invalid configuration")

// DefaultWindows are Pravega's: 2, 5, 10 and 20 minutes.
var DefaultWindows = [NumWindows]time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 20 * time.Minute}

// Config holds the windows (shortest first) and the tick: counts are
// folded into the averages at most once per Tick.
type Config struct {
	Windows [NumWindows]time.Duration
	Tick    time.Duration
}

// DefaultConfig returns DefaultWindows with a tick of a tenth of the
// shortest window, at most 5 s.
func DefaultConfig() Config { return ConfigFor(DefaultWindows) }

// ConfigFor returns windows with the tick DefaultConfig would choose.
func ConfigFor(w [NumWindows]time.Duration) Config {
	return Config{Windows: w, Tick: min(w[0]/10, 5*time.Second)}
}

// Validate checks that the windows are positive and rising and the tick
// positive and no longer than the shortest window.
func (c Config) Validate() error {
	for i, w := range c.Windows {
		if w <= 0 {
			return fmt.Errorf("%w: window %d is %v: want > 0", ErrInvalid, i+1, w)
		}
		if i > 0 && w < c.Windows[i-1] {
			return fmt.Errorf("%w: window %d (%v) is shorter than window %d (%v): want them shortest first", ErrInvalid, i+1, w, i, c.Windows[i-1])
		}
	}
	if c.Tick <= 0 || c.Tick > c.Windows[0] {
		return fmt.Errorf("%w: tick %v: want > 0 and at most the shortest window %v", ErrInvalid, c.Tick, c.Windows[0])
	}
	return nil
}

// Meter is one segment's rates. The zero Meter is empty (no Add yet).
// It is not safe for concurrent use: its owner's lock guards it.
type Meter struct {
	born   int64 // unix ns of the first Add; 0: never
	folded int64 // unix ns of the last fold
	events int64 // counted since the last fold
	bytes  int64
	ev     [NumWindows]float32 // events/s per window, as of folded
	by     [NumWindows]float32 // bytes/s per window, as of folded
}

// Rates is a Meter's averages at one time.
type Rates struct {
	Age    time.Duration       // since the first Add or Start; 0 if neither
	Events [NumWindows]float64 // events per second, per window
	Bytes  [NumWindows]float64 // bytes per second, per window
}

// Add counts events and bytes appended at now (unix ns). A time before
// the last fold (a clock stepped back) moves the fold point back to now:
// the averages are kept and the counts go on from there, so rates do not
// freeze until the clock catches up with a time it once jumped to.
func (m *Meter) Add(c *Config, now int64, events, bytes int64) {
	if m.born == 0 {
		m.born, m.folded = now, now
	}
	if now < m.folded {
		m.folded = now
		m.born = min(m.born, now)
	}
	m.events += events
	m.bytes += bytes
	if now-m.folded >= int64(c.Tick) {
		m.ev, m.by = m.fold(c, now)
		m.folded, m.events, m.bytes = now, 0, 0
	}
}

// fold returns the averages at now with the pending counts spread over
// [folded, now].
func (m *Meter) fold(c *Config, now int64) (ev, by [NumWindows]float32) {
	dt := float64(now-m.folded) / 1e9
	if dt <= 0 {
		return m.ev, m.by
	}
	ie, ib := float64(m.events)/dt, float64(m.bytes)/dt
	for i, w := range c.Windows {
		k := math.Exp(-dt / w.Seconds())
		ev[i] = float32(float64(m.ev[i])*k + ie*(1-k))
		by[i] = float32(float64(m.by[i])*k + ib*(1-k))
	}
	return ev, by
}

// Start begins measuring at now if nothing was counted yet: a segment
// without appends is then measured at zero from now on, and its Age
// grows. A started Meter is left as it is.
func (m *Meter) Start(now int64) {
	if m.born == 0 {
		m.born, m.folded = now, now
	}
}

// Snapshot returns the averages as of now without changing m.
func (m *Meter) Snapshot(c *Config, now int64) Rates {
	var r Rates
	if m.born == 0 {
		return r
	}
	r.Age = time.Duration(max(now-m.born, 0))
	ev, by := m.fold(c, now)
	for i := range ev {
		r.Events[i], r.Bytes[i] = float64(ev[i]), float64(by[i])
	}
	return r
}
