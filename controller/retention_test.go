package controller

import (
	"testing"

	"github.com/sluice-streams/sluice/protocol/api"
)

func TestDecideRetention(t *testing.T) {
	const day = int64(dayMillis)
	days := func(d int64) api.RetentionPolicy {
		return api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: d}
	}
	mb := func(m int64) api.RetentionPolicy {
		return api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: m}
	}
	at := func(time, size int64, off int64) retentionCut {
		return retentionCut{Time: time, Size: size, Cut: map[int64]int64{0: off}}
	}
	head0 := map[int64]int64{0: 0}
	cuts := []retentionCut{at(0, 100, 100), at(day/2, 200, 200), at(day, 300, 300), at(2*day, 400, 400)}
	tests := []struct {
		name string
		p    api.RetentionPolicy
		now  int64
		head map[int64]int64
		cuts []retentionCut
		size int64
		want int64 // offset of segment 0 in the cut, -1: none
	}{
		{"days: nothing old enough", days(1), day - 1, head0, cuts, 400, -1},
		{"days: exactly old enough", days(1), day, head0, cuts, 400, 100},
		{"days: newest old enough", days(1), 2*day + day/2, head0, cuts, 400, 300},
		{"days: all old", days(1), 10 * day, head0, cuts, 400, 400},
		{"days: no cuts", days(1), 10 * day, head0, nil, 400, -1},
		{"days: cut at the head is no move", days(1), 10 * day, map[int64]int64{0: 400}, []retentionCut{at(0, 0, 400)}, 0, -1},
		{"days: never backwards", days(1), 10 * day, map[int64]int64{0: 250}, []retentionCut{at(0, 10, 200)}, 150, -1},
		{"days: zero value", days(0), 10 * day, head0, cuts, 400, -1},
		{"size: under the limit", mb(1), 0, head0, []retentionCut{at(0, mib/2, mib/2)}, mib, -1},
		{"size: over, keeps at least the limit", mb(1), 0, head0,
			[]retentionCut{at(0, 100, 100), at(1, mib/2, mib/2), at(2, mib, mib), at(3, mib+200, mib+200)}, mib + 300, 100},
		{"size: newest that leaves exactly the limit", mb(1), 0, head0,
			[]retentionCut{at(0, 100, 100), at(1, 300, 300), at(2, 400, 400)}, mib + 300, 300},
		{"size: none leaves enough", mb(1), 0, head0,
			[]retentionCut{at(0, 400, 400)}, mib + 300, -1},
		{"size: limit is MiB, not MB", mb(1), 0, head0,
			[]retentionCut{at(0, 100, 100)}, 1000000 + 200, -1},
		{"unknown policy", api.RetentionPolicy{Type: "FOREVER", Value: 1}, 10 * day, head0, cuts, 400, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decideRetention(tc.p, tc.now, tc.head, tc.cuts, tc.size)
			if tc.want < 0 {
				if ok {
					t.Fatalf("truncate at %v, want none", got)
				}
				return
			}
			if !ok || got[0] != tc.want {
				t.Fatalf("got %v (%v), want offset %d", got, ok, tc.want)
			}
			if tc.p.Type == api.RetentionLimitedSizeMB {
				left := tc.size - got[0] // one segment from 0: offset == size from the head
				if left < tc.p.Value*mib {
					t.Fatalf("leaves %d bytes, below the limit", left)
				}
			}
		})
	}
}

func TestTrimRetention(t *testing.T) {
	const day = int64(dayMillis)
	at := func(time, size int64) retentionCut {
		return retentionCut{Time: time, Size: size, Cut: map[int64]int64{0: size}}
	}
	times := func(cs []retentionCut) []int64 {
		out := []int64{}
		for _, c := range cs {
			out = append(out, c.Time)
		}
		return out
	}
	head := map[int64]int64{0: 0}
	days := api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 1}
	cuts := []retentionCut{at(0, 0), at(1, 10), at(2, 20), at(day+1, 30), at(day+2, 40)}
	// At day+2: cut 2 is the newest old enough; 0 (at the head) and 1 go.
	equal(t, "days", times(trimRetention(days, day+2, head, cuts, 40)), []int64{2, day + 1, day + 2})
	// Nothing old enough: all kept but the one at the head.
	equal(t, "days, young", times(trimRetention(days, 1, head, cuts, 40)), []int64{1, 2, day + 1, day + 2})

	size := api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: 1}
	big := []retentionCut{at(1, 100), at(2, 200), at(3, mib), at(4, mib+100)}
	// Size mib+250: cut 2 (200) leaves >= 1 MiB; cut 1 goes.
	equal(t, "size", times(trimRetention(size, 5, head, big, mib+250)), []int64{2, 3, 4})

	var many []retentionCut
	for i := int64(1); i <= MaxRetentionCuts+10; i++ {
		many = append(many, at(i, i))
	}
	got := trimRetention(days, 2, head, many, MaxRetentionCuts+10)
	if len(got) != MaxRetentionCuts || got[len(got)-1].Time != MaxRetentionCuts+10 {
		t.Fatalf("kept %d cuts ending at %d, want the newest %d", len(got), got[len(got)-1].Time, MaxRetentionCuts)
	}
}

func TestShouldRecord(t *testing.T) {
	days := api.RetentionPolicy{Type: api.RetentionLimitedDays, Value: 1}
	size := api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: 128}
	last := []retentionCut{{Time: 1000, Size: 1000}}
	for _, tc := range []struct {
		name string
		p    api.RetentionPolicy
		now  int64
		cuts []retentionCut
		size int64
		want bool
	}{
		{"first", days, 0, nil, 1, true},
		{"empty stream", days, 0, nil, 0, false},
		{"days: too soon", days, 1000 + dayMillis/retentionGrain - 1, last, 2000, false},
		{"days: due", days, 1000 + dayMillis/retentionGrain, last, 2000, true},
		{"size: too little growth", size, 5000, last, 1000 + mib - 1, false},
		{"size: due", size, 5000, last, 1000 + mib, true},
	} {
		if got := shouldRecord(tc.p, tc.now, tc.cuts, tc.size); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
