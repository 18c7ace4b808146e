package bench

import (
	"testing"
	"time"
)

// Each row gets the slowest canary sync that ended in its second; syncs
// before second 0 or after the last row count only in the total.
func TestFoldCanary(t *testing.T) {
	ms := time.Millisecond
	rows := []SecondRow{{Second: 0}, {Second: 1}, {Second: 2}}
	syncs := []canarySync{
		{at: -500 * ms, took: 9 * ms},
		{at: 200 * ms, took: 1 * ms},
		{at: 700 * ms, took: 3 * ms},
		{at: 1500 * ms, took: 2 * ms},
		{at: 5 * time.Second, took: 4 * ms},
	}
	all := foldCanary(rows, syncs)
	if all == nil || all.Max != 9 || all.P50 != 3 {
		t.Fatalf("all syncs: %+v, want max 9 and p50 3", all)
	}
	want := []float64{3, 2}
	for i, w := range want {
		if rows[i].DiskMaxMS == nil || *rows[i].DiskMaxMS != w {
			t.Errorf("second %d: disk max %v, want %v", i, rows[i].DiskMaxMS, w)
		}
	}
	if rows[2].DiskMaxMS != nil {
		t.Errorf("second 2 had no sync, got disk max %v", *rows[2].DiskMaxMS)
	}
	if foldCanary(rows, nil) != nil {
		t.Error("no syncs: want no canary latency")
	}
}

// The canary's stalls are set on the wall clock's 100 ms grid: the
// report gives their count, the share on one phase and that phase; a run
// without a stall has no grid.
func TestCanaryGrid(t *testing.T) {
	ms := time.Millisecond
	base := time.Unix(1_800_000_000, 0)
	var syncs []canarySync
	for i := 0; i < 10; i++ {
		end := base.Add(time.Duration(i)*CanaryGridPeriod + 71*ms)
		syncs = append(syncs, canarySync{took: 12 * ms, wall: end}, canarySync{took: ms / 4, wall: end.Add(5 * ms)})
	}
	syncs = append(syncs, canarySync{took: 5 * ms, wall: base.Add(20 * ms)}) // off the grid
	g := canaryGrid(syncs)
	if g == nil || g.Stalls != 11 || g.OnGrid != 10 || g.PhaseMS < 69 || g.PhaseMS > 73 || g.PeriodMS != 100 {
		t.Fatalf("grid: %+v, want 10 of 11 stalls at 71 ms of 100", g)
	}
	if canaryGrid(syncs[1:2]) != nil {
		t.Error("no stall: want no grid")
	}
}
