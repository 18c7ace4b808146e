package leader

import (
	"fmt"
	"path"
	"sort"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/controller/assignment"
)

// LiveNodes returns the ids of the nodes registered under
// controller.NodesKey, from the store's List of that key: the last element
// of each child's key, sorted.
func LiveNodes(children []cluster.KV) []string {
	out := make([]string, 0, len(children))
	for _, kv := range children {
		out = append(out, path.Base(kv.Key))
	}
	sort.Strings(out)
	return out
}

// Decide is the deterministic core of the leader's assignment loop. From
// the published map (exists false: none yet) and the live nodes it returns
// the map to publish and whether it differs from the published one. A
// published map that cannot be read, or has another number of containers
// than containers, is an error: it is never replaced.
func Decide(published []byte, exists bool, live []string, containers int) (next assignment.Map, changed bool, err error) {
	cur := assignment.New(containers)
	if exists {
		if cur, err = assignment.Parse(published, containers); err != nil {
			return assignment.Map{}, false, fmt.Errorf("leader: the published container assignment is left as it is: %w", err)
		}
	}
	next, changed = assignment.Plan(cur, live)
	return next, changed, nil
}
