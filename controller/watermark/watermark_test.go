package watermark

import (
	"errors"
	"reflect"
	"testing"
)

// The stream of the tests: epoch 0 has segments 0 [0,.5) and 1 [.5,1);
// epoch 1 splits 0 into 2 and 3; epoch 2 merges 3 and 1 into 4.
var (
	epochs  = [][]int64{{0, 1}, {2, 3, 1}, {2, 4}}
	created = map[int64]int64{0: 0, 1: 0, 2: 1, 3: 1, 4: 2}
)

func rep(w string, t int64, recv int64, pos map[int64]int64) Report {
	return Report{Writer: w, Time: t, Position: pos, Received: recv}
}

func TestCompute(t *testing.T) {
	prev := &Watermark{Lower: 100, Upper: 150, Epoch: 0, Cut: map[int64]int64{0: 40, 1: 70}}
	tests := []struct {
		name     string
		in       Input
		want     *Watermark
		timedOut []string
	}{
		{
			name: "no writers: no watermark",
			in:   Input{Now: 1000, Timeout: 100, Epochs: epochs, Created: created},
		},
		{
			name: "first watermark: min and max of times, max offsets in the epoch",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Reports: []Report{
				rep("a", 200, 1000, map[int64]int64{0: 10, 1: 5}),
				rep("b", 300, 1000, map[int64]int64{0: 30}),
			}},
			want: &Watermark{Lower: 200, Upper: 300, Epoch: 0, Cut: map[int64]int64{0: 30, 1: 5}},
		},
		{
			name: "a writer that has written nothing yet: cut at its epoch's start",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Reports: []Report{
				rep("a", 200, 1000, nil),
			}},
			want: &Watermark{Lower: 200, Upper: 200, Epoch: 0, Cut: map[int64]int64{0: 0, 1: 0}},
		},
		{
			name: "a writer not past the previous lower bound holds time back",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Prev: prev, Reports: []Report{
				rep("a", 400, 1000, map[int64]int64{0: 50}),
				rep("b", 100, 1000, map[int64]int64{1: 80}),
			}},
		},
		{
			name: "times and cut never move back: upper and offsets keep the previous",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Prev: prev, Reports: []Report{
				rep("a", 120, 1000, map[int64]int64{0: 20}),
				rep("b", 130, 1000, map[int64]int64{1: 90}),
			}},
			want: &Watermark{Lower: 120, Upper: 150, Epoch: 0, Cut: map[int64]int64{0: 40, 1: 90}},
		},
		{
			name: "a silent writer is timed out and no longer holds time back",
			in: Input{Now: 1000, Timeout: 100, Epochs: epochs[:1], Created: created, Prev: prev, Reports: []Report{
				rep("a", 400, 950, map[int64]int64{0: 50}),
				rep("b", 100, 800, map[int64]int64{1: 80}),
			}},
			want:     &Watermark{Lower: 400, Upper: 400, Epoch: 0, Cut: map[int64]int64{0: 50, 1: 70}},
			timedOut: []string{"b"},
		},
		{
			name: "all writers timed out: none",
			in: Input{Now: 1000, Timeout: 100, Epochs: epochs, Created: created, Prev: prev, Reports: []Report{
				rep("b", 900, 800, nil), rep("a", 900, 700, nil),
			}},
			timedOut: []string{"a", "b"},
		},
		{
			name: "positions in two epochs: the cut is the newer epoch's segments",
			in: Input{Now: 1000, Epochs: epochs[:2], Created: created, Prev: prev, Reports: []Report{
				rep("old", 200, 1000, map[int64]int64{0: 60, 1: 75}), // has not seen the split
				rep("new", 210, 1000, map[int64]int64{2: 8}),
			}},
			want: &Watermark{Lower: 200, Upper: 210, Epoch: 1, Cut: map[int64]int64{2: 8, 3: 0, 1: 75}},
		},
		{
			name: "a previous cut in a newer epoch than every report keeps its epoch",
			in: Input{Now: 1000, Epochs: epochs, Created: created,
				Prev:    &Watermark{Lower: 100, Upper: 100, Epoch: 2, Cut: map[int64]int64{2: 5, 4: 9}},
				Reports: []Report{rep("a", 200, 1000, map[int64]int64{0: 99, 1: 99})}},
			want: &Watermark{Lower: 200, Upper: 200, Epoch: 2, Cut: map[int64]int64{2: 5, 4: 9}},
		},
		{
			name: "a merge: the merged segment replaces both predecessors",
			in: Input{Now: 1000, Epochs: epochs, Created: created, Prev: prev, Reports: []Report{
				rep("a", 300, 1000, map[int64]int64{3: 12, 2: 4}),
				rep("b", 310, 1000, map[int64]int64{4: 7}),
			}},
			want: &Watermark{Lower: 300, Upper: 310, Epoch: 2, Cut: map[int64]int64{2: 4, 4: 7}},
		},
		{
			name: "a transaction's commit time and parents' offsets count like a writer's",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Prev: prev, Reports: []Report{
				rep("w", 500, 1000, map[int64]int64{0: 41}),
				rep("txn-writer", 450, 1000, map[int64]int64{0: 300, 1: 200}),
			}},
			want: &Watermark{Lower: 450, Upper: 500, Epoch: 0, Cut: map[int64]int64{0: 300, 1: 200}},
		},
		{
			name: "segments unknown to the record and negative offsets are ignored",
			in: Input{Now: 1000, Epochs: epochs[:1], Created: created, Reports: []Report{
				rep("a", 200, 1000, map[int64]int64{0: -5, 77: 10}),
			}},
			want: &Watermark{Lower: 200, Upper: 200, Epoch: 0, Cut: map[int64]int64{0: 0, 1: 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Compute(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out.Next, tt.want) {
				t.Errorf("next = %+v, want %+v", out.Next, tt.want)
			}
			if !reflect.DeepEqual(out.TimedOut, tt.timedOut) {
				t.Errorf("timed out = %v, want %v", out.TimedOut, tt.timedOut)
			}
		})
	}
}

func TestComputeRefusesBadEpochs(t *testing.T) {
	if _, err := Compute(Input{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no epochs: err = %v, want ErrInvalid", err)
	}
	_, err := Compute(Input{Epochs: epochs[:1], Created: created, Reports: []Report{rep("a", 1, 0, map[int64]int64{4: 1})}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("segment of a future epoch: err = %v, want ErrInvalid", err)
	}
}

// TestComputeMonotonic feeds a sequence of reports through Compute and
// checks that every watermark is at or after the previous one.
func TestComputeMonotonic(t *testing.T) {
	var prev *Watermark
	times := []int64{10, 5, 30, 20, 50, 45, 70, 90, 80, 100}
	for i, tm := range times {
		ep := min(i/3, 2)
		seg := epochs[ep][0]
		in := Input{Now: int64(i), Epochs: epochs[:ep+1], Created: created, Prev: prev, Reports: []Report{
			rep("a", tm, int64(i), map[int64]int64{seg: int64(i * 10)}),
			rep("b", tm+3, int64(i), nil),
		}}
		out, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		if out.Next == nil {
			continue
		}
		if prev != nil {
			if out.Next.Lower <= prev.Lower || out.Next.Upper < prev.Upper || out.Next.Epoch < prev.Epoch {
				t.Fatalf("step %d: %+v moved back from %+v", i, out.Next, prev)
			}
			if out.Next.Epoch == prev.Epoch {
				for n, off := range prev.Cut {
					if out.Next.Cut[n] < off {
						t.Fatalf("step %d: segment %d went back from %d to %d", i, n, off, out.Next.Cut[n])
					}
				}
			}
		}
		prev = out.Next
	}
	if prev == nil || prev.Lower != 100 {
		t.Fatalf("last watermark %+v, want lower 100", prev)
	}
}
