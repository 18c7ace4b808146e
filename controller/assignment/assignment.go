package assignment

import (
	"sort"

	"github.com/sluice-streams/sluice/cluster/layout"
)

// Move is a container that a balanced cluster would serve from another
// node.
type Move struct {
	Container int
	From, To  string
}

// Input is what the leader knows besides the published map.
type Input struct {
	// Live are the registered nodes.
	Live []string
	// Draining are nodes an operator is emptying: they get no container,
	// and theirs move to other live nodes.
	Draining []string
	// Released holds, per container, the epoch under which its owner
	// confirmed a release (hand-over written to tier 2).
	Released map[int]int64
	// MaxMoves bounds the hand-overs in flight at once; 0 starts none
	// (moves in flight still complete).
	MaxMoves int
	// NoHandover are live nodes that cannot take part in a hand-over (no
	// tier 2): their containers stay, and no move goes to them.
	NoHandover []string
}

// Plan returns the next map when nothing moves: unassigned containers go to
// the least loaded live nodes. See PlanWith.
func Plan(m layout.Map, live []string) (next layout.Map, changed bool) {
	return PlanWith(m, Input{Live: live})
}

// PlanWith returns the next map and whether it differs from m:
//
//  1. A container whose owner released it for a move (Released holds its
//     epoch) goes to MoveTo under the next epoch, built from the hand-over
//     (From).
//  2. A move whose target is no longer live, or drains, is pointed at
//     another target, or cancelled if there is none.
//  3. Unassigned containers go to the live, not draining node with the
//     fewest containers (dead nodes' containers count for their node, so
//     a returning node is not overloaded; ties: the smallest id).
//  4. While fewer than MaxMoves are in flight, new moves start: first the
//     containers of draining nodes, then those that balance the live
//     nodes (Moves). A dead node's containers never move: their logs are
//     on its disk. Nodes in NoHandover neither give nor take moves.
func PlanWith(m layout.Map, in Input) (next layout.Map, changed bool) {
	next = m.Clone()
	nodes := append([]string(nil), in.Live...)
	sort.Strings(nodes)
	isLive, draining, pinned := set(nodes), set(in.Draining), set(in.NoHandover)
	var targets, moveTargets []string
	for _, n := range nodes {
		if !draining[n] {
			targets = append(targets, n)
			if !pinned[n] {
				moveTargets = append(moveTargets, n)
			}
		}
	}
	load := map[string]int{}
	for _, o := range next.Containers {
		if o.Node != "" {
			load[o.Node]++
		}
		if o.MoveTo != "" {
			load[o.MoveTo]++ // the container is on its way there
		}
	}
	least := func(among []string, except string) string {
		best := ""
		for _, n := range among {
			if n != except && (best == "" || load[n] < load[best]) {
				best = n
			}
		}
		return best
	}
	inFlight := 0
	for i, o := range next.Containers {
		if o.MoveTo == "" {
			if e, ok := in.Released[i]; ok && e == o.Epoch && o.Node != "" {
				// Released for a move that was called off (its target
				// went before the release was confirmed): the owner hosts
				// it again under a new epoch, so that the old
				// confirmation and hand-over match no later move (which
				// would skip the release and import a state older than
				// the owner's) and the owner's state orders after them.
				next.Containers[i] = layout.Owner{Node: o.Node, Epoch: o.Epoch + 1}
				changed = true
			}
			continue
		}
		if e, ok := in.Released[i]; ok && e == o.Epoch {
			load[o.Node]--
			next.Containers[i] = layout.Owner{Node: o.MoveTo, Epoch: o.Epoch + 1, From: o.Epoch}
			changed = true
			continue
		}
		if !isLive[o.MoveTo] || draining[o.MoveTo] {
			load[o.MoveTo]--
			o.MoveTo = least(moveTargets, o.Node)
			if o.MoveTo != "" {
				load[o.MoveTo]++
			}
			next.Containers[i] = o
			changed = true
		}
		if o.MoveTo != "" {
			inFlight++
		}
	}
	for i, o := range next.Containers {
		if o.Node != "" || len(targets) == 0 {
			continue
		}
		best := least(targets, "")
		next.Containers[i] = layout.Owner{Node: best, Epoch: o.Epoch + 1}
		load[best]++
		changed = true
	}
	if inFlight < in.MaxMoves {
		var movable []string
		for _, n := range nodes {
			if !pinned[n] {
				movable = append(movable, n)
			}
		}
		for _, mv := range Moves(next, movable, in.Draining) {
			if inFlight >= in.MaxMoves {
				break
			}
			o := next.Containers[mv.Container]
			if o.MoveTo != "" {
				continue
			}
			o.MoveTo = mv.To
			next.Containers[mv.Container] = o
			inFlight++
			changed = true
		}
	}
	return next, changed
}

// Moves returns the moves that would empty the draining nodes and leave
// every live, not draining node with the same number of containers, give
// or take one, moving as few as possible: containers of draining nodes
// first, by container number. Only live owners' containers move, and a
// container already moving counts for its target.
func Moves(m layout.Map, live, drainingNodes []string) []Move {
	isLive, draining := set(live), set(drainingNodes)
	var targets []string
	for _, n := range live {
		if !draining[n] {
			targets = append(targets, n)
		}
	}
	sort.Strings(targets)
	if len(targets) == 0 {
		return nil
	}
	owned := map[string][]int{}
	var pool []int // must move: on draining live nodes
	total := 0
	for i, o := range m.Containers {
		holder := o.Node
		if o.MoveTo != "" {
			holder = o.MoveTo
		}
		switch {
		case holder == "" || !isLive[o.Node]:
			// unassigned, or with a dead node: not ours to move
		case draining[holder]:
			total++
			if o.MoveTo == "" {
				pool = append(pool, i)
			}
		default:
			total++
			owned[holder] = append(owned[holder], i)
		}
	}
	target := map[string]int{}
	for k, node := range targets {
		target[node] = total / len(targets)
		if k < total%len(targets) {
			target[node]++
		}
	}
	var extra []int
	for _, node := range targets {
		for len(owned[node]) > target[node] {
			last := owned[node][len(owned[node])-1]
			owned[node] = owned[node][:len(owned[node])-1]
			if m.Containers[last].MoveTo == "" {
				extra = append(extra, last)
			}
		}
	}
	sort.Ints(pool)
	sort.Ints(extra)
	pool = append(pool, extra...)
	var moves []Move
	for _, node := range targets {
		for len(owned[node]) < target[node] && len(pool) > 0 {
			c := pool[0]
			pool = pool[1:]
			owned[node] = append(owned[node], c)
			moves = append(moves, Move{Container: c, From: m.Containers[c].Node, To: node})
		}
	}
	return moves
}

func set(xs []string) map[string]bool {
	s := make(map[string]bool, len(xs))
	for _, x := range xs {
		s[x] = true
	}
	return s
}
