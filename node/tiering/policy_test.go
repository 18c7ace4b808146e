package tiering

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/container"
)

func TestDecide(t *testing.T) {
	now := time.Unix(1000, 0)
	p := Policy{SegmentBytes: 100, MaxLag: 10 * time.Second, PressureBytes: 150}
	seg := func(name string, untiered int64, age time.Duration, mod func(*container.TierState)) container.TierState {
		ts := container.TierState{Name: name, Untiered: untiered}
		if untiered > 0 {
			ts.Oldest = now.Add(-age)
		}
		if mod != nil {
			mod(&ts)
		}
		return ts
	}
	sealed := func(ts *container.TierState) { ts.Sealed = true }
	txn := func(ts *container.TierState) { ts.Transaction = true }
	override := func(ts *container.TierState) {
		ts.Attrs = map[string]int64{AttrSegmentBytes: 10, AttrMaxLagMillis: 1000}
	}
	for _, tc := range []struct {
		name     string
		states   []container.TierState
		untiered int64
		want     []Decision
	}{
		{"nothing waits", []container.TierState{seg("a", 0, 0, nil), seg("b", 0, 0, sealed)}, 0, nil},
		{"young and small", []container.TierState{seg("a", 50, time.Second, nil)}, 50, nil},
		{"size", []container.TierState{seg("a", 100, 0, nil)}, 100, []Decision{{"a", ReasonSize}}},
		{"age at half the lag bound", []container.TierState{seg("a", 1, 5*time.Second, nil), seg("b", 1, 4*time.Second, nil)}, 2,
			[]Decision{{"a", ReasonAge}}},
		{"sealed goes at once", []container.TierState{seg("a", 1, 0, sealed)}, 1, []Decision{{"a", ReasonSealed}}},
		{"transactions never", []container.TierState{seg("a", 1000, time.Hour, txn)}, 1000, nil},
		{"stream overrides", []container.TierState{seg("a", 10, 0, override), seg("b", 5, 600*time.Millisecond, override)}, 15,
			[]Decision{{"a", ReasonSize}, {"b", ReasonAge}}},
		{"pressure takes the largest until below", []container.TierState{
			seg("a", 40, 0, nil), seg("b", 90, 0, nil), seg("c", 60, 0, nil), seg("d", 10, 0, nil)}, 200,
			[]Decision{{"b", ReasonPressure}}},
		{"pressure counts what other rules take", []container.TierState{
			seg("a", 100, 0, nil), seg("b", 90, 0, nil), seg("c", 60, 0, nil)}, 250,
			[]Decision{{"a", ReasonSize}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(now, p, tc.states, tc.untiered); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}
