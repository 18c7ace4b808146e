package controller

import (
	"math/bits"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// This file is retention's deterministic core: which recorded cut to
// truncate at, which cuts to keep, whether to record one more. Nothing here
// does I/O or reads a clock; retention_driver.go does both.

// Retention defaults and bounds.
const (
	// DefaultRetentionInterval is how often retention runs
	// (Options.RetentionInterval).
	DefaultRetentionInterval = time.Minute
	// MaxRetentionCuts bounds the cuts kept per stream; the oldest go first
	// (which can only make retention keep more data, never less).
	MaxRetentionCuts = 256
	// retentionGrain: a new cut is recorded once the newest one is older
	// than 1/retentionGrain of the retention time (LIMITED_DAYS) or the
	// stream grew by 1/retentionGrain of the size limit (LIMITED_SIZE_MB):
	// truncation is that precise, and the list stays about that long.
	retentionGrain = 128

	dayMillis = 24 * 60 * 60 * 1000
	mib       = 1 << 20
)

// retentionCut is one recorded tail cut of a stream.
type retentionCut struct {
	// Time is when the cut was recorded (ms since the Unix epoch).
	Time int64 `json:"time"`
	// Size is the number of bytes from the stream's head cut to this cut,
	// as of the last retention step (the head moves with truncation).
	Size int64 `json:"size"`
	// Cut is segment number -> offset: the stream's tail then.
	Cut map[int64]int64 `json:"cut"`
}

// retentionRec is the value of scopes/<scope>/streams/<stream>/retention:
// the recorded cuts, oldest first.
type retentionRec struct {
	Cuts []retentionCut `json:"cuts"`
}

// notBehind reports whether cut leaves no segment it shares with head
// below head's offset. (That the cut lies wholly at or after the head is
// the driver's check, against the stream record.)
func notBehind(cut, head map[int64]int64) bool {
	for n, off := range cut {
		if h, ok := head[n]; ok && off < h {
			return false
		}
	}
	return true
}

// candidate reports whether c could be truncated at: it lies after the
// head (Size > 0) and moves no segment's head backwards.
func candidate(c retentionCut, head map[int64]int64) bool {
	return c.Size > 0 && notBehind(c.Cut, head)
}

// decideRetention is retention's decision. From the policy, the time now
// (ms), the stream's head cut, the recorded cuts (oldest first, Size
// measured from head) and the stream's current size (bytes from head to
// its tail) it returns the cut to truncate at, or false.
//
//	LIMITED_DAYS d:     the newest cut recorded at or before now - d days.
//	LIMITED_SIZE_MB m:  if size > m MiB, the newest cut that leaves at
//	                    least m MiB after it (size - cut.Size >= m MiB).
//
// Either way the cut is after the head, so the head only moves forwards,
// and a size policy never leaves less than its limit.
func decideRetention(p api.RetentionPolicy, now int64, head map[int64]int64, cuts []retentionCut, size int64) (map[int64]int64, bool) {
	i := newestCandidate(p, now, head, cuts, size)
	if i < 0 {
		return nil, false
	}
	return cuts[i].Cut, true
}

// newestCandidate returns the index of the cut decideRetention picks, or -1.
//
// Its arithmetic is exact: the API bounds a policy's value
// (api.RangeRetentionValue), but a record written before it did, or a
// clock far off, must still never make a limit wrap around to a small or
// negative one, which would truncate everything.
func newestCandidate(p api.RetentionPolicy, now int64, head map[int64]int64, cuts []retentionCut, size int64) int {
	limit, ok := retentionLimit(p)
	if !ok {
		return -1
	}
	best := -1
	switch p.Type {
	case api.RetentionLimitedDays:
		for i, c := range cuts {
			if apart(now, c.Time) >= limit && candidate(c, head) && (best < 0 || c.Time >= cuts[best].Time) {
				best = i
			}
		}
	case api.RetentionLimitedSizeMB:
		if size <= 0 || uint64(size) <= limit {
			return -1
		}
		for i, c := range cuts {
			if apart(size, c.Size) >= limit && candidate(c, head) && (best < 0 || c.Size >= cuts[best].Size) {
				best = i
			}
		}
	}
	return best
}

// retentionLimit returns p's limit exactly, in milliseconds (LIMITED_DAYS)
// or bytes (LIMITED_SIZE_MB), and true; or false if p limits nothing
// (no positive value, an unknown type) or its limit does not fit in 64
// bits: then no two int64 clock readings or sizes are that far apart, and
// nothing is ever truncated.
func retentionLimit(p api.RetentionPolicy) (uint64, bool) {
	if p.Value <= 0 {
		return 0, false
	}
	var unit uint64
	switch p.Type {
	case api.RetentionLimitedDays:
		unit = dayMillis
	case api.RetentionLimitedSizeMB:
		unit = mib
	default:
		return 0, false
	}
	hi, limit := bits.Mul64(uint64(p.Value), unit)
	return limit, hi == 0
}

// apart returns a-b exactly (as uint64, where it always fits), or 0 if b
// is not below a.
func apart(a, b int64) uint64 {
	if a <= b {
		return 0
	}
	return uint64(a) - uint64(b)
}

// trimRetention returns the cuts worth keeping: those after the head that
// are newer than the cut decideRetention picks now (that one included: it
// is truncated at and dropped by the next step, or kept if the truncation
// failed), at most MaxRetentionCuts of them, the newest. Older cuts can
// never be picked again: a newer one already satisfies the policy.
func trimRetention(p api.RetentionPolicy, now int64, head map[int64]int64, cuts []retentionCut, size int64) []retentionCut {
	best := newestCandidate(p, now, head, cuts, size)
	out := []retentionCut{}
	for i, c := range cuts {
		if !candidate(c, head) {
			continue
		}
		if best >= 0 && i != best && older(p, c, cuts[best]) {
			continue
		}
		out = append(out, c)
	}
	if len(out) > MaxRetentionCuts {
		out = out[len(out)-MaxRetentionCuts:]
	}
	return out
}

// older reports whether a lies before b in the order the policy picks by.
func older(p api.RetentionPolicy, a, b retentionCut) bool {
	if p.Type == api.RetentionLimitedSizeMB {
		return a.Size < b.Size
	}
	return a.Time < b.Time
}

// shouldRecord reports whether the tail (size bytes after the head, now)
// is worth recording after the newest recorded cut (see retentionGrain).
// A tail equal to the head (size 0) never is.
func shouldRecord(p api.RetentionPolicy, now int64, cuts []retentionCut, size int64) bool {
	limit, ok := retentionLimit(p)
	if size <= 0 || !ok {
		return false // nothing to record, or no cut could ever be truncated at
	}
	if len(cuts) == 0 {
		return true
	}
	last := cuts[len(cuts)-1]
	if p.Type == api.RetentionLimitedSizeMB {
		return apart(size, last.Size) >= limit/retentionGrain
	}
	return apart(now, last.Time) >= limit/retentionGrain
}

// bytesBetween is the number of bytes a reader crosses from cut from to cut
// to (from not after to): for each segment between them, from its offset
// in from (or 0) to its offset in to (or its length, in lengths).
func (r *streamRec) bytesBetween(from, to map[int64]int64, lengths map[int64]int64) int64 {
	var n int64
	for _, s := range r.between(from, to) {
		start, end := from[s], lengths[s]
		if off, ok := to[s]; ok {
			end = off
		}
		if end > start {
			n += end - start
		}
	}
	return n
}
