package rates

import (
	"testing"
	"time"
)

// TestReview2ClockJumpForwardAndBack: the node's wall clock (time.Now's
// UnixNano, which carries no monotonic reading) is stepped an hour ahead
// for one append and then corrected. The segment goes on at a steady 100
// events/s for another 80 s (10 of the longest window), so its rates must
// be about 100 events/s again. The Meter folds only when now passes the
// last fold by a Tick, and Snapshot ignores the pending counts while now
// is before the last fold: every rate stays at what the hour-long fold
// left (nearly 0) until the wall clock reaches that hour, while Age keeps
// growing, so the auto-scaler sees a busy segment as cold and merges it
// (and never splits a hot one) for the length of the jump.
func TestReview2ClockJumpForwardAndBack(t *testing.T) {
	var m Meter
	start := int64(1_000) * sec
	end := feed(&m, start, 80*time.Second, 100, 10)
	m.Add(&testCfg, end+3600*sec, 10, 100) // one append while the clock is an hour ahead
	now := feed(&m, end+int64(testCfg.Tick), 80*time.Second, 100, 10)
	r := m.Snapshot(&testCfg, now)
	for i, got := range r.Events {
		if !near(got, 100, 0.2) {
			t.Errorf("window %d: %.3f events/s after 80 s at 100 events/s, want about 100", i, got)
		}
	}
}
