package main

import (
	"fmt"
	"testing"
	"time"
)

// TestWindows is the windows core's table: readings and closes in, results
// and late counts out.
func TestWindows(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(0, 0).UTC().Add(time.Duration(s * float64(time.Second))) }
	rd := func(sensor string, seq int64, s float64) Reading {
		return Reading{Sensor: sensor, Seq: seq, Time: at(s)}
	}
	res := func(sensor string, start float64, count, minSeq, maxSeq int64) Result {
		return Result{Sensor: sensor, Start: at(start), End: at(start + 10), Count: count, MinSeq: minSeq, MaxSeq: maxSeq}
	}
	type step struct {
		add   []Reading
		close float64 // seconds; <0: no close
		want  []Result
	}
	for _, tc := range []struct {
		name          string
		steps         []step
		late, counted int64
		open          int
	}{
		{name: "a window closes when lower reaches its end, not before",
			steps: []step{
				{add: []Reading{rd("a", 0, 1), rd("a", 1, 9.999), rd("b", 0, 5)}, close: 9.999},
				{close: 10, want: []Result{res("a", 0, 2, 0, 1), res("b", 0, 1, 0, 0)}},
				{close: 10}, // nothing twice
			},
			counted: 3},
		{name: "several windows close at once, in window then sensor order",
			steps: []step{
				{add: []Reading{rd("b", 0, 25), rd("a", 0, 12), rd("b", 1, 3), rd("a", 1, 31)}, close: -1},
				{close: 29.5, want: []Result{res("b", 0, 1, 1, 1), res("a", 10, 1, 0, 0)}},
				{close: 40, want: []Result{res("b", 20, 1, 0, 0), res("a", 30, 1, 1, 1)}},
			},
			counted: 4},
		{name: "a reading of a closed window is late and not counted",
			steps: []step{
				{add: []Reading{rd("a", 0, 1)}, close: 15, want: []Result{res("a", 0, 1, 0, 0)}},
				{add: []Reading{rd("a", 1, 2), rd("a", 2, 10), rd("b", 0, 19.999)}, close: -1},
				{close: 20, want: []Result{res("a", 10, 1, 2, 2), res("b", 10, 1, 0, 0)}},
			},
			late: 1, counted: 3},
		{name: "seqs out of order keep min and max",
			steps: []step{
				{add: []Reading{rd("a", 5, 1), rd("a", 2, 2), rd("a", 9, 3)}, close: 100, want: []Result{res("a", 0, 3, 2, 9)}},
			},
			counted: 3},
		{name: "an earlier lower than closed moves nothing back",
			steps: []step{
				{close: 30},
				{add: []Reading{rd("a", 0, 25)}, close: 5},
				{close: 31},
			},
			late: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := windows{Size: 10 * time.Second}
			for i, s := range tc.steps {
				for _, r := range s.add {
					w.add(r)
				}
				if s.close < 0 {
					continue
				}
				got := w.close(at(s.close))
				if fmt.Sprint(got) != fmt.Sprint(s.want) {
					t.Fatalf("step %d: closed %v, want %v", i, got, s.want)
				}
			}
			if w.Late != tc.late || w.Counted != tc.counted || len(w.Open) != tc.open {
				t.Fatalf("late %d counted %d open %d, want %d %d %d", w.Late, w.Counted, len(w.Open), tc.late, tc.counted, tc.open)
			}
		})
	}
}

// TestWindowsCloseAll: at the input's end every open window closes, in
// order, and a later reading is late.
func TestWindowsCloseAll(t *testing.T) {
	w := windows{Size: 10 * time.Second}
	if got := w.closeAll(); got != nil {
		t.Fatalf("nothing open: closed %v", got)
	}
	base := time.Unix(100, 0).UTC()
	w.add(Reading{Sensor: "b", Seq: 0, Time: base.Add(25 * time.Second)})
	w.add(Reading{Sensor: "a", Seq: 0, Time: base.Add(2 * time.Second)})
	got := w.closeAll()
	if len(got) != 2 || got[0].Sensor != "a" || got[1].Sensor != "b" || len(w.Open) != 0 || !w.ClosedUpTo.Equal(base.Add(30*time.Second)) {
		t.Fatalf("closed %v, open %v, closed up to %v", got, w.Open, w.ClosedUpTo)
	}
	if !w.add(Reading{Sensor: "a", Seq: 1, Time: base.Add(29 * time.Second)}) || w.Late != 1 {
		t.Fatalf("a reading after closeAll: late %d", w.Late)
	}
}
