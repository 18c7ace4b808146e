// Package rates measures a segment's append rates on the node: events per
// second and bytes per second, each as exponentially decaying averages
// over NumWindows windows (Pravega's 2, 5, 10 and 20 minutes by default;
// Config.Windows makes them seconds for tests and the standalone).
//
// A Meter is a small value (64 bytes) kept in the container's segment
// state and changed only under the container's lock, which the append
// already holds: Add is two additions on the hot path, and folds the
// counts into the averages at most once per Config.Tick (one exp per
// window). It allocates nothing. Snapshot computes the averages as of a
// given time without changing the Meter (counts since the last fold
// included, decay since then applied), so a quiet segment's rates fall
// without appends.
//
// The average of window w after an interval dt holding c events is
//
//	r' = r*exp(-dt/w) + (c/dt)*(1 - exp(-dt/w))
//
// so a steady rate x is approached from 0 as x*(1 - exp(-t/w)), and a rate
// that stops decays as exp(-t/w). Age is the time since the Meter's first
// Add or Start in this process (the container starts a segment's Meter
// when its rates are first asked for, so a segment that is never written
// to is measured at zero from then on): a restarted node or a container
// that moved starts at 0, and the controller does not call a segment cold
// before its Age reaches the longest window (until then its averages do
// not cover the whole window).
//
// Everything takes the time as an argument (nanoseconds; the container
// passes container.RatesNow, a monotonic reading since the process
// started, so a step of the wall clock does not disturb the rates): the
// package reads no clock. A time before the last fold moves the fold
// point back to it (Add), so even a clock that steps back does not
// freeze the averages.
package rates
