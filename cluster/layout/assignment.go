package layout

import (
	"encoding/json"
	"fmt"
)

// Owner is the node that serves a container, and the epoch of that
// assignment. Node is "" while the container is unassigned.
type Owner struct {
	Node  string `json:"node"`
	Epoch int64  `json:"epoch"`
	// MoveTo, when set, asks Node to hand the container over to MoveTo:
	// release it through tier 2 under Epoch and confirm (HandoverKey).
	MoveTo string `json:"moveTo,omitempty"`
	// From, when set, is the epoch of the hand-over Node builds the
	// container from (its previous owner released it under From).
	From int64 `json:"from,omitempty"`
}

// Map is the assignment of every container, published in the metadata
// store under AssignmentKey as JSON (see the package documentation).
type Map struct {
	// Containers[i] owns container i.
	Containers []Owner `json:"containers"`
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

// Moving returns the containers with a move in flight, sorted.
func (m Map) Moving() []int {
	var out []int
	for i, o := range m.Containers {
		if o.MoveTo != "" {
			out = append(out, i)
		}
	}
	return out
}

func set(xs []string) map[string]bool {
	s := make(map[string]bool, len(xs))
	for _, x := range xs {
		s[x] = true
	}
	return s
}
