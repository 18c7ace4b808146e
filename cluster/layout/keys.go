package layout

// Keys of cluster mode in the metadata store, relative to its root (see the
// package documentation for who writes each and what its value is).
const (
	// NodesKey holds one ephemeral child per live node (NodeKey).
	NodesKey = "cluster/nodes"
	// AssignmentKey holds the published Map, as JSON.
	AssignmentKey = "cluster/assignment"
	// DrainKey holds one child per node an operator is emptying
	// (DrainKey + "/" + id); the leader moves its containers away.
	DrainKey = "cluster/drain"
	// HandoverKey holds one child per container whose owner confirmed a
	// release: HandoverKey + "/" + container, JSON Released.
	HandoverKey = "cluster/handover"
	// ControllersKey holds one ephemeral child per live controller
	// (ControllerKey).
	ControllersKey = "cluster/controllers"
	// ElectionKey is the controllers' leader election.
	ElectionKey = "cluster/election"
)

// NodeKey is the key of node id's registration.
func NodeKey(id string) string { return NodesKey + "/" + id }

// ControllerKey is the key of controller id's registration.
func ControllerKey(id string) string { return ControllersKey + "/" + id }

// Released is the value of a HandoverKey child: the epoch the container
// was released under.
type Released struct {
	Epoch int64 `json:"epoch"`
}
