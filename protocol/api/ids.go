package api

import (
	"fmt"
	"unicode/utf8"

	"github.com/sluice-streams/sluice/protocol"
)

// MaxNodeIDLength bounds a node id (in bytes).
const MaxNodeIDLength = 255

// ValidateNodeID checks a node id as it appears in a path (PUT
// /v1/nodes/{node}/drain) and as the controller stores a drain under it:
// 1-255 bytes of UTF-8 with no control character and no '/', and not "."
// or "..", so that it is one element of a metadata key. A node registers
// only under an id this rule accepts (node/membership), so every node can
// be drained. The error wraps ErrInvalid.
func ValidateNodeID(id string) error {
	if len(id) == 0 || len(id) > MaxNodeIDLength {
		return fmt.Errorf("%w: node id %q: length %d not in 1..%d", ErrInvalid, id, len(id), MaxNodeIDLength)
	}
	if id == "." || id == ".." {
		return fmt.Errorf("%w: node id %q is reserved", ErrInvalid, id)
	}
	for i, r := range id {
		if r == utf8.RuneError || r < 0x20 || r >= 0x7f && r <= 0x9f || r == '/' {
			_, size := utf8.DecodeRuneInString(id[i:])
			return fmt.Errorf("%w: node id %q: character %q at byte %d: want UTF-8 text without control characters or '/'", ErrInvalid, id, id[i:i+size], i)
		}
	}
	return nil
}

// ValidateTxnID checks a transaction id: a canonical UUID (36 characters,
// lower-case hex). The error wraps ErrInvalid.
func ValidateTxnID(id string) error {
	if !protocol.IsCanonicalUUID(id) {
		return fmt.Errorf("%w: transaction id %q is not a canonical lower-case UUID", ErrInvalid, id)
	}
	return nil
}
