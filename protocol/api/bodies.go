package api

// The REST API's wrapper bodies: lists, the transaction lease, a pair of
// cuts, health and a segment's node. The controller's handler
// (controller/rest) writes them and the Go client (client/ctlclient) reads
// them, so both share these one definitions.

// Error codes of Error (controller/rest's package documentation maps them
// to HTTP statuses).
const (
	CodeInvalid = "INVALID"
	// CodeNotEventBoundary is a 400 for a stream cut with an offset that
	// is not where an event starts in its segment (its node says so).
	CodeNotEventBoundary = "NOT_EVENT_BOUNDARY"
	CodeNotFound         = "NOT_FOUND"
	CodeExists           = "EXISTS"
	CodeConflict         = "CONFLICT"
	// CodeScalePending is a 409 for a new transaction on a stream whose
	// automatic scale waits for its open transactions to end, or that is
	// scaling: retriable, the scale runs once they have (controller/doc.go,
	// "Transactions and scaling").
	CodeScalePending     = "SCALE_PENDING"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeInternal         = "INTERNAL"
	CodeUnavailable      = "UNAVAILABLE"
	// CodeForbidden: a change asked from another origin (a web page).
	CodeForbidden = "FORBIDDEN"
	// CodeUnsupportedMediaType: a request body that is not
	// application/json.
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
)

// Health is the body of GET /health.
type Health struct {
	Status string `json:"status"`
}

// ScopeList is the body of GET /v1/scopes.
type ScopeList struct {
	Scopes []ScopeProperty `json:"scopes"`
}

// StreamList is the body of GET /v1/scopes/{scope}/streams.
type StreamList struct {
	Streams []StreamInfo `json:"streams"`
}

// SegmentList is the body of the routes that return segments. Cut is set
// only by GET .../segments?at=T: the position of time T (the same segments,
// with the offsets a reader starts at).
type SegmentList struct {
	Segments []SegmentRange `json:"segments"`
	Cut      StreamCut      `json:"cut,omitempty"`
}

// EpochList is the body of GET .../streams/{stream}/scaling-events: every
// epoch of the stream, oldest first.
type EpochList struct {
	Epochs []EpochInfo `json:"epochs"`
	// Pending is the automatic scale waiting for the stream's open
	// transactions to end, if one is (new transactions are refused with
	// CodeScalePending meanwhile).
	Pending *PendingScale `json:"pending,omitempty"`
	// GivenUp are the newest automatic scales that waited too long for
	// the stream's transactions, or were overtaken, and were dropped;
	// oldest first.
	GivenUp []PendingScale `json:"givenUp,omitempty"`
}

// PendingScale is an automatic scale recorded while the stream's
// transactions held it up: the segments it seals, the key ranges of their
// successors, why (Reason, as EpochInfo's), since when it waits
// (ms since the Unix epoch) and, once dropped, when and why.
type PendingScale struct {
	Since          int64      `json:"since"`
	SealedSegments []int64    `json:"sealedSegments"`
	NewRanges      []KeyRange `json:"newRanges"`
	Reason         string     `json:"reason"`
	GivenUpTime    int64      `json:"givenUpTime,omitempty"`
	GivenUpReason  string     `json:"givenUpReason,omitempty"`
}

// SuccessorList is the body of GET /v1/segments/{segment}/successors.
type SuccessorList struct {
	Successors []Successor `json:"successors"`
}

// TxnRequest is the (optional) body of POST .../transactions and
// POST .../transactions/{id}/ping: the lease wanted, in milliseconds (0 or
// absent: the controller's default).
type TxnRequest struct {
	LeaseMillis int64 `json:"leaseMillis"`
}

// CutRange is the body of POST .../segments-between: an empty From is the
// stream's head, an empty To its end.
type CutRange struct {
	From StreamCut `json:"from,omitempty"`
	To   StreamCut `json:"to,omitempty"`
}

// SegmentURI is the body of GET /v1/segments/{segment}/uri: the node that
// serves the segment now (host:port of its wire protocol), the segment's
// container and the epoch under which that node holds it.
type SegmentURI struct {
	Endpoint  string `json:"endpoint"`
	Container int    `json:"container"`
	Epoch     int64  `json:"epoch"`
}
