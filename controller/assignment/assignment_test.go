package assignment

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/sluice-streams/sluice/cluster/layout"
)

func owners(m layout.Map) string {
	s := ""
	for i, o := range m.Containers {
		s += fmt.Sprintf("%d:%s@%d ", i, o.Node, o.Epoch)
	}
	return s
}

func TestPlanSpreadsUnassignedEvenly(t *testing.T) {
	m, changed := Plan(layout.New(8), []string{"n2", "n1", "n3"})
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
	m, _ := Plan(layout.New(4), []string{"a", "b"})
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
	// ...and no move takes a dead node's containers, whose logs are on its disk.
	if moves := Moves(m, []string{"b", "c"}, nil); len(moves) != 1 || moves[0].From != "b" || moves[0].To != "c" {
		t.Fatalf("moves %+v", moves)
	}
}

func TestPlanWithNoLiveNodesChangesNothing(t *testing.T) {
	if m, changed := Plan(layout.New(3), nil); changed || len(m.Of("")) != 3 {
		t.Fatalf("%s %v", owners(m), changed)
	}
}

func TestUnassignedEpochsKeepGrowing(t *testing.T) {
	m := layout.New(2)
	m.Containers[1] = layout.Owner{Node: "", Epoch: 5} // released by a hand-over
	next, _ := Plan(m, []string{"x"})
	if next.Containers[1].Epoch != 6 || next.Containers[0].Epoch != 1 {
		t.Fatalf("%s", owners(next))
	}
}

func TestMovesOfABalancedMapIsEmpty(t *testing.T) {
	m, _ := Plan(layout.New(7), []string{"a", "b", "c"})
	if moves := Moves(m, []string{"a", "b", "c"}, nil); len(moves) != 0 {
		t.Fatalf("moves %+v", moves)
	}
}

// TestHandOverSequence walks a node joining, the moves onto it one at a
// time, their completion, and then the draining of a node.
func TestHandOverSequence(t *testing.T) {
	m, _ := Plan(layout.New(6), []string{"a", "b"})
	in := Input{Live: []string{"a", "b", "c"}, MaxMoves: 1, Released: map[int]int64{}}
	step := func(what string) {
		t.Helper()
		var changed bool
		m, changed = PlanWith(m, in)
		if !changed {
			t.Fatalf("%s: nothing changed: %s", what, owners(m))
		}
	}
	step("c joins")
	if mv := m.Moving(); len(mv) != 1 || m.Containers[mv[0]].MoveTo != "c" {
		t.Fatalf("one move onto c expected: %+v", m.Containers)
	}
	c0 := m.Moving()[0]
	// Nothing more while it is in flight.
	if again, changed := PlanWith(m, in); changed {
		t.Fatalf("a second move started with MaxMoves 1: %+v", again.Containers)
	}
	// The owner confirms: c owns it under the next epoch, built from the hand-over.
	old := m.Containers[c0]
	in.Released[c0] = old.Epoch
	step("released")
	if got := m.Containers[c0]; got.Node != "c" || got.Epoch != old.Epoch+1 || got.From != old.Epoch || got.MoveTo != "" {
		t.Fatalf("after the release: %+v (was %+v)", got, old)
	}
	for len(m.Moving()) > 0 || len(Moves(m, in.Live, nil)) > 0 {
		if mv := m.Moving(); len(mv) > 0 {
			in.Released[mv[0]] = m.Containers[mv[0]].Epoch
		}
		step("balancing")
	}
	for _, n := range []string{"a", "b", "c"} {
		if len(m.Of(n)) != 2 {
			t.Fatalf("not balanced: %s", owners(m))
		}
	}
	// Drain b: its containers move to a and c, b gets nothing new.
	in.Draining = []string{"b"}
	for len(m.Of("b")) > 0 {
		if mv := m.Moving(); len(mv) > 0 {
			if to := m.Containers[mv[0]].MoveTo; to == "b" {
				t.Fatalf("a move onto a draining node: %+v", m.Containers[mv[0]])
			}
			in.Released[mv[0]] = m.Containers[mv[0]].Epoch
		}
		step("draining")
	}
	if len(m.Of("a")) != 3 || len(m.Of("c")) != 3 {
		t.Fatalf("after draining b: %s", owners(m))
	}
	// A move whose target dies is pointed elsewhere.
	in = Input{Live: []string{"a", "c", "d"}, MaxMoves: 1, Released: map[int]int64{}}
	step("d joins")
	mv := m.Moving()[0]
	in.Live = []string{"a", "c", "e"}
	step("d dies mid-move")
	if to := m.Containers[mv].MoveTo; to != "e" {
		t.Fatalf("the move now goes to %q, want e", to)
	}
	// A dead owner's move waits for it (its log is on its disk).
	in.Live = []string{"e"}
	if next, _ := PlanWith(m, in); next.Containers[mv].Node != m.Containers[mv].Node {
		t.Fatal("a dead owner's container moved")
	}
}

func TestNoHandoverNodesAreLeftAlone(t *testing.T) {
	m, _ := Plan(layout.New(4), []string{"a"})
	in := Input{Live: []string{"a", "b"}, MaxMoves: 2, NoHandover: []string{"a"}}
	if next, changed := PlanWith(m, in); changed {
		t.Fatalf("moves from a node without tier 2: %s", owners(next))
	}
	in.NoHandover = []string{"b"}
	if next, changed := PlanWith(m, in); changed {
		t.Fatalf("moves to a node without tier 2: %s", owners(next))
	}
	// Unassigned containers still go to it.
	if next, _ := PlanWith(layout.New(2), in); len(next.Of("b")) != 1 {
		t.Fatalf("a node without tier 2 got no new container: %s", owners(next))
	}
}

// TestCancelledMoveRaisesTheEpoch: the target of a move dies before the
// owner's release is confirmed and no other target is left, so the move
// is called off; then the owner's confirmation of the release comes.
// The owner gets the container under a new epoch: the stale confirmation
// must match no later move (which would then skip the release and build
// the container from a hand-over older than the owner's state).
func TestCancelledMoveRaisesTheEpoch(t *testing.T) {
	m, _ := Plan(layout.New(2), []string{"a"})
	in := Input{Live: []string{"a", "b"}, MaxMoves: 1, Released: map[int]int64{}}
	m, _ = PlanWith(m, in)
	mv := m.Moving()
	if len(mv) != 1 || m.Containers[mv[0]].MoveTo != "b" {
		t.Fatalf("one move onto b expected: %+v", m.Containers)
	}
	c, old := mv[0], m.Containers[mv[0]]
	in.Live = []string{"a"} // b dies mid-move: the move is called off
	m, _ = PlanWith(m, in)
	if got := m.Containers[c]; got.MoveTo != "" || got.Node != "a" || got.Epoch != old.Epoch {
		t.Fatalf("after b died: %+v", got)
	}
	in.Released[c] = old.Epoch // the owner's release finishes anyway
	m, changed := PlanWith(m, in)
	if got := m.Containers[c]; !changed || got.Node != "a" || got.Epoch != old.Epoch+1 || got.From != 0 || got.MoveTo != "" {
		t.Fatalf("after the late confirmation: %+v (was %+v), changed %v", got, old, changed)
	}
	// A later move needs a new release: the old confirmation is stale.
	in.Live = []string{"a", "b"}
	m, _ = PlanWith(m, in)
	if got := m.Containers[c]; got.Node != "a" || got.MoveTo == "" {
		t.Fatalf("the next move: %+v, want a release from a first", got)
	}
}
