package api

import "encoding/json"

// ReaderGroupConfig is the body of POST /v1/scopes/{scope}/readergroups:
// a new reader group of Streams ("scope/stream"; one stream today),
// starting at StartCut (informational: where the group began; the reader
// positions live in State), with State its initial state. The controller
// stores State opaquely: it checks only that it is a JSON object of at
// most MaxReaderGroupState bytes. The client library defines its content
// (client/group_state.go).
type ReaderGroupConfig struct {
	GroupName string          `json:"groupName"`
	Streams   []string        `json:"streams"`
	StartCut  StreamCut       `json:"startCut,omitempty"`
	State     json.RawMessage `json:"state"`
}

// ReaderGroup is a reader group as GET returns it: its configuration,
// its state and the state's version, to be passed to
// PUT .../readergroups/{group}/state.
type ReaderGroup struct {
	ScopeName    string          `json:"scopeName"`
	GroupName    string          `json:"groupName"`
	Streams      []string        `json:"streams"`
	StartCut     StreamCut       `json:"startCut,omitempty"`
	CreationTime int64           `json:"creationTime"`
	Version      int64           `json:"version"`
	State        json.RawMessage `json:"state"`
}

// ReaderGroupState is the body of PUT .../readergroups/{group}/state (a
// compare-and-set: 409 CONFLICT unless Version is the state's current
// version) and its reply (Version: the new version).
type ReaderGroupState struct {
	Version int64           `json:"version"`
	State   json.RawMessage `json:"state,omitempty"`
}

// ReaderGroupList is the body of GET /v1/scopes/{scope}/readergroups.
type ReaderGroupList struct {
	ReaderGroups []ReaderGroup `json:"readerGroups"`
}

// MaxReaderGroupState bounds a reader group's state (256 KiB).
const MaxReaderGroupState = 256 << 10
