package api

// StreamTier is the tier-2 state of a stream's segments (GET
// /v1/scopes/{scope}/streams/{stream}/tier).
type StreamTier struct {
	Scope  string `json:"scope"`
	Stream string `json:"stream"`
	// TieredBytes and UntieredBytes sum the segments': bytes readable
	// from tier 2, and durable bytes only in tier 1.
	TieredBytes   int64 `json:"tieredBytes"`
	UntieredBytes int64 `json:"untieredBytes"`
	// LagMillis is the age of the oldest event not yet in tier 2.
	LagMillis int64         `json:"lagMillis"`
	Segments  []SegmentTier `json:"segments"`
}

// SegmentTier is one segment's tier-2 state.
type SegmentTier struct {
	Segment     string `json:"segment"`
	StartOffset int64  `json:"startOffset"`
	Length      int64  `json:"length"`
	Sealed      bool   `json:"sealed"`
	// TieredOffset: every byte kept below it is in tier 2.
	TieredOffset  int64 `json:"tieredOffset"`
	UntieredBytes int64 `json:"untieredBytes"`
	LagMillis     int64 `json:"lagMillis"`
	// Tier2Error is the latest tier-2 failure of the segment's container
	// while its tiering is stalled.
	Tier2Error string `json:"tier2Error,omitempty"`
}

// NodeTierList is the tier-2 state of every node (GET /v1/nodes/tier).
type NodeTierList struct {
	Nodes []NodeTier `json:"nodes"`
}

// NodeTier is one node's tier-2 state, per container it hosts.
type NodeTier struct {
	Node string `json:"node"`
	Addr string `json:"addr"`
	// Error says why the node could not be asked; Containers is then empty.
	Error      string          `json:"error,omitempty"`
	Containers []ContainerTier `json:"containers"`
}

// ContainerTier is one container's storage writer counters.
type ContainerTier struct {
	Container     int    `json:"container"`
	TieredBytes   int64  `json:"tieredBytes"`
	Chunks        int64  `json:"chunks"`
	UntieredBytes int64  `json:"untieredBytes"`
	LagMillis     int64  `json:"lagMillis"`
	Errors        int64  `json:"errors"`
	LastError     string `json:"lastError,omitempty"`
	Stalled       bool   `json:"stalled"`
}

// NodeList is the cluster's nodes (GET /v1/nodes): those registered now
// and those the container assignment names.
type NodeList struct {
	Nodes []NodeStatus `json:"nodes"`
}

// NodeStatus is one node: whether it is registered (live), draining,
// whether it has tier 2 (so its containers can be handed over), the
// containers the assignment gives it and those moving away from it.
type NodeStatus struct {
	ID         string `json:"id"`
	Addr       string `json:"addr,omitempty"`
	Live       bool   `json:"live"`
	Draining   bool   `json:"draining"`
	Tier2      bool   `json:"tier2"`
	Containers []int  `json:"containers"`
	Moving     []int  `json:"moving"`
}

// DrainRequest is the body of PUT /v1/nodes/{node}/drain. Drain is
// required: true starts draining the node, false stops.
type DrainRequest struct {
	Drain bool `json:"drain"`
}
