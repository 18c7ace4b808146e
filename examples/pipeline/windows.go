package main

import (
	"sort"
	"time"
)

// Reading is one sensor reading (the JSON examples/sensors writes); the
// pipeline uses its sensor, seq and time.
type Reading struct {
	Sensor string    `json:"sensor"`
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
}

// Result is one closed window of one sensor, as written to the output
// stream (one JSON line per event).
type Result struct {
	Sensor string    `json:"sensor"`
	Start  time.Time `json:"window_start"`
	End    time.Time `json:"window_end"`
	Count  int64     `json:"count"`
	MinSeq int64     `json:"min_seq"`
	MaxSeq int64     `json:"max_seq"`
}

// windows is the deterministic core: readings in, closed windows out, no
// I/O and no clock. Windows are tumbling, [k*size, (k+1)*size) in Unix
// time. A window closes when close is called with a time at or after its
// end; a reading of a window that closed already is late: it is counted
// in Late and otherwise left out (a result once written is never revised).
// The whole value is what the pipeline's state file keeps of it.
type windows struct {
	Size time.Duration `json:"size"`
	// ClosedUpTo: every window that ends at or before it is closed.
	ClosedUpTo time.Time `json:"closed_up_to"`
	// Open are the partial counts of the windows not closed yet.
	Open []Result `json:"open"`
	// Late counts readings that came after their window closed; Counted
	// those counted in a window.
	Late    int64 `json:"late"`
	Counted int64 `json:"counted"`
}

// windowOf returns the start of t's window.
func (w *windows) windowOf(t time.Time) time.Time {
	return t.Truncate(w.Size).UTC()
}

// add counts r in its window, or as late. It reports whether r was late.
func (w *windows) add(r Reading) bool {
	start := w.windowOf(r.Time)
	end := start.Add(w.Size)
	if !end.After(w.ClosedUpTo) {
		w.Late++
		return true
	}
	w.Counted++
	for i := range w.Open {
		o := &w.Open[i]
		if o.Sensor == r.Sensor && o.Start.Equal(start) {
			o.Count++
			o.MinSeq, o.MaxSeq = min(o.MinSeq, r.Seq), max(o.MaxSeq, r.Seq)
			return false
		}
	}
	w.Open = append(w.Open, Result{Sensor: r.Sensor, Start: start, End: end, Count: 1, MinSeq: r.Seq, MaxSeq: r.Seq})
	return false
}

// close closes every window that ends at or before lower (a reader's
// time window's lower bound: every reading up to it has been read) and
// returns their results, sorted by window, then sensor.
func (w *windows) close(lower time.Time) []Result {
	upTo := w.windowOf(lower)
	if !upTo.After(w.ClosedUpTo) {
		return nil
	}
	w.ClosedUpTo = upTo
	var out []Result
	keep := w.Open[:0]
	for _, o := range w.Open {
		if o.End.After(upTo) {
			keep = append(keep, o)
		} else {
			out = append(out, o)
		}
	}
	clear(w.Open[len(keep):])
	w.Open = keep
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].Sensor < out[j].Sensor
	})
	return out
}

// closeAll closes every open window (the input has ended: no reading can
// come any more) and returns their results, as close does.
func (w *windows) closeAll() []Result {
	var last time.Time
	for _, o := range w.Open {
		if o.End.After(last) {
			last = o.End
		}
	}
	if last.IsZero() {
		return nil
	}
	return w.close(last)
}
