package leader

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/controller/assignment"
)

// LiveNodes returns the ids of the nodes registered under
// layout.NodesKey, from the store's List of that key: the last element
// of each child's key, sorted.
func LiveNodes(children []cluster.KV) []string {
	out := make([]string, 0, len(children))
	for _, kv := range children {
		out = append(out, path.Base(kv.Key))
	}
	sort.Strings(out)
	return out
}

// NoHandover returns the live nodes whose registration says they have no
// tier 2 (so no container can be handed over to or from them).
func NoHandover(children []cluster.KV) []string {
	var out []string
	for _, kv := range children {
		if reg, err := layout.ParseNodeRegistration(kv.Value); err != nil || !reg.Tier2 {
			out = append(out, path.Base(kv.Key))
		}
	}
	sort.Strings(out)
	return out
}

// Released returns, per container, the epoch its owner released it under,
// from the store's List of layout.HandoverKey; unreadable entries are
// skipped (the owner writes them again).
func Released(children []cluster.KV) map[int]int64 {
	out := map[int]int64{}
	for _, kv := range children {
		id, err := strconv.Atoi(path.Base(kv.Key))
		if err != nil {
			continue
		}
		var r layout.Released
		if json.Unmarshal(kv.Value, &r) == nil {
			out[id] = r.Epoch
		}
	}
	return out
}

// Decide is the deterministic core of the leader's assignment loop. From
// the published map (exists false: none yet) and in (live and draining
// nodes, confirmed releases, moves allowed) it returns the map to publish
// and whether it differs from the published one. A published map that
// cannot be read, or has another number of containers than containers,
// is an error: it is never replaced.
func Decide(published []byte, exists bool, in assignment.Input, containers int) (next layout.Map, changed bool, err error) {
	cur := layout.New(containers)
	if exists {
		if cur, err = layout.Parse(published, containers); err != nil {
			return layout.Map{}, false, fmt.Errorf("leader: the published container assignment is left as it is: %w", err)
		}
	}
	next, changed = assignment.PlanWith(cur, in)
	return next, changed, nil
}
