package assignment

import (
	"fmt"
	"reflect"
	"testing"
)

func owners(m Map) string {
	s := ""
	for i, o := range m.Containers {
		s += fmt.Sprintf("%d:%s@%d ", i, o.Node, o.Epoch)
	}
	return s
}

func TestPlanSpreadsUnassignedEvenly(t *testing.T) {
	m, changed := Plan(New(8), []string{"n2", "n1", "n3"})
	if !changed {
		t.Fatal("a new map was not changed")
	}
	count := map[string]int{}
	for _, o := range m.Containers {
		if o.Epoch != 1 {
			t.Fatalf("first assignment epoch %d: %s", o.Epoch, owners(m))
		}
		count[o.Node]++
	}
	if count["n1"] != 3 || count["n2"] != 3 || count["n3"] != 2 {
		t.Fatalf("uneven: %v (%s)", count, owners(m))
	}
	// Planning again changes nothing.
	if again, changed := Plan(m, []string{"n1", "n2", "n3"}); changed || !reflect.DeepEqual(again, m) {
		t.Fatalf("replanning changed the map: %s", owners(again))
	}
}

func TestDeadNodeKeepsItsContainers(t *testing.T) {
	m, _ := Plan(New(4), []string{"a", "b"})
	next, changed := Plan(m, []string{"b"}) // a died
	if changed || !reflect.DeepEqual(next, m) {
		t.Fatalf("a dead node's containers moved: %s -> %s", owners(m), owners(next))
	}
	if got := next.Unavailable([]string{"b"}); !reflect.DeepEqual(got, m.Of("a")) {
		t.Fatalf("Unavailable = %v, want a's %v", got, m.Of("a"))
	}
	// A new node gets nothing while every container is assigned...
	if next, changed := Plan(m, []string{"b", "c"}); changed || len(next.Of("c")) != 0 {
		t.Fatalf("a new node took containers without a hand-over: %s", owners(next))
	}
	// ...but Balance says what a hand-over would move: a's (dead) first.
	moves := Balance(m, []string{"b", "c"})
	if len(moves) != 2 || moves[0].From != "a" || moves[1].From != "a" {
		t.Fatalf("moves %+v", moves)
	}
}

func TestPlanWithNoLiveNodesChangesNothing(t *testing.T) {
	if m, changed := Plan(New(3), nil); changed || len(m.Of("")) != 3 {
		t.Fatalf("%s %v", owners(m), changed)
	}
}

func TestUnassignedEpochsKeepGrowing(t *testing.T) {
	m := New(2)
	m.Containers[1] = Owner{Node: "", Epoch: 5} // released by a hand-over
	next, _ := Plan(m, []string{"x"})
	if next.Containers[1].Epoch != 6 || next.Containers[0].Epoch != 1 {
		t.Fatalf("%s", owners(next))
	}
}

func TestBalanceOfABalancedMapIsEmpty(t *testing.T) {
	m, _ := Plan(New(7), []string{"a", "b", "c"})
	if moves := Balance(m, []string{"a", "b", "c"}); len(moves) != 0 {
		t.Fatalf("moves %+v", moves)
	}
}

func TestParseRejectsWrongSize(t *testing.T) {
	m, _ := Plan(New(3), []string{"a"})
	if _, err := Parse(m.Encode(), 4); err == nil {
		t.Fatal("a 3-container map parsed for 4 containers")
	}
	got, err := Parse(m.Encode(), 3)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %v %v", got, err)
	}
}
