package assignment

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Owner is the node that serves a container, and the epoch of that
// assignment. Node is "" while the container is unassigned.
type Owner struct {
	Node  string `json:"node"`
	Epoch int64  `json:"epoch"`
}

// Map is the assignment of every container, published in the metadata
// store under the key "cluster/assignment" as JSON.
type Map struct {
	// Containers[i] owns container i.
	Containers []Owner `json:"containers"`
}

// Move is a container that a balanced cluster would serve from another
// node.
type Move struct {
	Container int
	From, To  string
}

// New is the map of n unassigned containers.
func New(n int) Map { return Map{Containers: make([]Owner, n)} }

// Parse decodes a published map and checks it has n containers.
func Parse(b []byte, n int) (Map, error) {
	var m Map
	if err := json.Unmarshal(b, &m); err != nil {
		return Map{}, fmt.Errorf("assignment: decode: %w", err)
	}
	if len(m.Containers) != n {
		return Map{}, fmt.Errorf("assignment: the map has %d containers, this cluster has %d", len(m.Containers), n)
	}
	return m, nil
}

// Encode returns the map's JSON.
func (m Map) Encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a slice of plain structs always encodes
	}
	return b
}

// Clone returns a copy that does not share the slice.
func (m Map) Clone() Map {
	return Map{Containers: append([]Owner(nil), m.Containers...)}
}

// Of returns the containers owned by node, sorted.
func (m Map) Of(node string) []int {
	var out []int
	for i, o := range m.Containers {
		if o.Node == node {
			out = append(out, i)
		}
	}
	return out
}

// Unavailable returns the containers whose owner is not live, or that are
// unassigned, sorted.
func (m Map) Unavailable(live []string) []int {
	isLive := set(live)
	var out []int
	for i, o := range m.Containers {
		if o.Node == "" || !isLive[o.Node] {
			out = append(out, i)
		}
	}
	return out
}

// Plan returns the next map: every unassigned container given to the live
// node with the fewest containers (dead nodes' containers count for their
// node, so a returning node is not overloaded), nothing else changed.
// changed reports whether the map differs from m.
func Plan(m Map, live []string) (next Map, changed bool) {
	next = m.Clone()
	if len(live) == 0 {
		return next, false
	}
	nodes := append([]string(nil), live...)
	sort.Strings(nodes)
	load := map[string]int{}
	for _, o := range next.Containers {
		if o.Node != "" {
			load[o.Node]++
		}
	}
	for i, o := range next.Containers {
		if o.Node != "" {
			continue
		}
		best := nodes[0]
		for _, n := range nodes[1:] {
			if load[n] < load[best] {
				best = n
			}
		}
		next.Containers[i] = Owner{Node: best, Epoch: o.Epoch + 1}
		load[best]++
		changed = true
	}
	return next, changed
}

// Balance returns the moves that would leave every live node with the same
// number of containers, give or take one, moving as few as possible and
// moving dead nodes' containers first. Plan does not apply them: a move
// needs a hand-over through tier 2.
func Balance(m Map, live []string) []Move {
	if len(live) == 0 {
		return nil
	}
	nodes := append([]string(nil), live...)
	sort.Strings(nodes)
	isLive := set(nodes)
	owned := map[string][]int{}
	var orphans []int // containers of dead nodes (or unassigned)
	for i, o := range m.Containers {
		if o.Node != "" && isLive[o.Node] {
			owned[o.Node] = append(owned[o.Node], i)
		} else {
			orphans = append(orphans, i)
		}
	}
	n := len(m.Containers)
	// Targets: n/len each, the first n%len nodes one more.
	target := map[string]int{}
	for k, node := range nodes {
		target[node] = n / len(nodes)
		if k < n%len(nodes) {
			target[node]++
		}
	}
	// Take from nodes above their target, then hand out orphans and those.
	pool := orphans
	for _, node := range nodes {
		for len(owned[node]) > target[node] {
			last := owned[node][len(owned[node])-1]
			owned[node] = owned[node][:len(owned[node])-1]
			pool = append(pool, last)
		}
	}
	sort.Ints(pool)
	var moves []Move
	for _, node := range nodes {
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
