package layout

import (
	"encoding/json"
	"fmt"
	"time"
)

// NodeRegistration is the value of a node's registration (NodeKey), as
// JSON: written by the node (node/membership), read by the controllers.
type NodeRegistration struct {
	ID   string `json:"id"`
	Addr string `json:"addr"` // the node's data-plane address
	// Started is when the node process started (RFC 3339 in the JSON).
	Started time.Time `json:"started"`
	// Tier2: the node has tier 2, so containers can be handed over to
	// and from it.
	Tier2 bool `json:"tier2,omitempty"`
}

// Encode returns the registration's JSON.
func (r NodeRegistration) Encode() []byte { return encode(r) }

// ParseNodeRegistration decodes a NodeKey value. On error it returns what
// it decoded before the error, and the error.
func ParseNodeRegistration(b []byte) (NodeRegistration, error) {
	var r NodeRegistration
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("layout: decode a node registration: %w", err)
	}
	return r, nil
}

// ControllerRegistration is the value of a controller's registration
// (ControllerKey), as JSON: written by the controller (controller/leader).
type ControllerRegistration struct {
	ID   string `json:"id"`
	Addr string `json:"addr"` // the controller's REST API address
}

// Encode returns the registration's JSON.
func (r ControllerRegistration) Encode() []byte { return encode(r) }

// ParseControllerRegistration decodes a ControllerKey value. On error it
// returns what it decoded before the error, and the error.
func ParseControllerRegistration(b []byte) (ControllerRegistration, error) {
	var r ControllerRegistration
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("layout: decode a controller registration: %w", err)
	}
	return r, nil
}

// encode returns v's JSON; v is a registration, whose plain fields always
// encode.
func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
