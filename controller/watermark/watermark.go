package watermark

import (
	"errors"
	"fmt"
	"sort"
)

// ErrInvalid is wrapped by Compute's error for inputs that cannot come
// from a stream's record (an epoch list that is empty).
var ErrInvalid = errors.New("watermark: invalid input")

// Report is a writer's latest note of event time.
type Report struct {
	// Writer is the writer's id.
	Writer string
	// Time is the event time noted, in ms since the Unix epoch.
	Time int64
	// Position is, per segment number, the offset just after the writer's
	// last acknowledged event there when it noted Time.
	Position map[int64]int64
	// Received is when the controller received the report (ms); the
	// timeout counts from it.
	Received int64
}

// Watermark is a stream's event-time bound at a cut (segment number ->
// offset, the segments of one epoch).
type Watermark struct {
	Lower int64           `json:"lower"`
	Upper int64           `json:"upper"`
	Epoch int64           `json:"epoch"`
	Cut   map[int64]int64 `json:"cut"`
}

// Input is what Compute needs.
type Input struct {
	// Now is the current time (ms); Timeout the longest a writer may stay
	// silent and still count (ms; <= 0: never timed out).
	Now, Timeout int64
	// Epochs[e] lists the segment numbers active in epoch e (the stream
	// record's epochs; the last is current).
	Epochs [][]int64
	// Created maps a segment number to the epoch that created it. A
	// reported segment missing here is ignored.
	Created map[int64]int64
	// Reports are the writers' latest reports.
	Reports []Report
	// Prev is the latest watermark, nil if none yet.
	Prev *Watermark
}

// Output is Compute's decision.
type Output struct {
	// Next is the new watermark, nil if none is due.
	Next *Watermark
	// TimedOut lists the writers (sorted) whose last report is older
	// than the timeout.
	TimedOut []string
}

// Compute decides the next watermark (see the package documentation).
func Compute(in Input) (Output, error) {
	var out Output
	if len(in.Epochs) == 0 {
		return out, fmt.Errorf("%w: no epochs", ErrInvalid)
	}
	var active []Report
	for _, r := range in.Reports {
		if in.Timeout > 0 && in.Now-r.Received > in.Timeout {
			out.TimedOut = append(out.TimedOut, r.Writer)
			continue
		}
		active = append(active, r)
	}
	sort.Strings(out.TimedOut)
	if len(active) == 0 {
		return out, nil
	}
	lower, upper := active[0].Time, active[0].Time
	for _, r := range active[1:] {
		lower = min(lower, r.Time)
		upper = max(upper, r.Time)
	}
	if in.Prev != nil {
		if lower <= in.Prev.Lower {
			return out, nil // a writer has not reported past the last watermark
		}
		upper = max(upper, in.Prev.Upper)
	}

	// The epoch of the cut: the newest that created a reported segment,
	// or the previous cut's.
	epoch := int64(-1)
	if in.Prev != nil {
		epoch = in.Prev.Epoch
	}
	offsets := map[int64]int64{}
	for _, r := range active {
		for n, off := range r.Position {
			e, ok := in.Created[n]
			if !ok || off < 0 {
				continue
			}
			epoch = max(epoch, e)
			offsets[n] = max(offsets[n], off)
		}
	}
	if epoch < 0 {
		epoch = int64(len(in.Epochs) - 1) // nothing written yet: the current epoch at 0
	}
	if epoch >= int64(len(in.Epochs)) {
		return out, fmt.Errorf("%w: epoch %d of a reported segment is past the last epoch %d", ErrInvalid, epoch, len(in.Epochs)-1)
	}
	cut := map[int64]int64{}
	for _, n := range in.Epochs[epoch] {
		off := offsets[n]
		if in.Prev != nil {
			off = max(off, in.Prev.Cut[n])
		}
		cut[n] = off
	}
	out.Next = &Watermark{Lower: lower, Upper: upper, Epoch: epoch, Cut: cut}
	return out, nil
}
