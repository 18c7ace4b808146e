package membership_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/cluster/zkstore"
	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/membership"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestIDsTheAPICannotDrainAreRefused: a node registers only under an id
// the REST API accepts, so every registered node can be drained. The id is
// checked before the store or the node is used (both are placeholders).
func TestIDsTheAPICannotDrainAreRefused(t *testing.T) {
	for _, id := range []string{"a/b", "tab\there", "..", strings.Repeat("n", api.MaxNodeIDLength+1)} {
		_, err := membership.Start(t.Context(), membership.Config{Store: &zkstore.Store{}, Node: &node.Node{}, ID: id})
		if !errors.Is(err, api.ErrInvalid) {
			t.Errorf("Start with id %q = %v, want api.ErrInvalid", id, err)
		}
	}
}
