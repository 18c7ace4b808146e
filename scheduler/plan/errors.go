package plan

import "errors"

var (
	// ErrNoPod: the plan has no pod of that name.
	ErrNoPod = errors.New("plan: no such pod")
	// ErrFormat: a serialized plan could not be decoded.
	ErrFormat = errors.New("plan: bad serialized plan")
	// ErrVersion: a serialized plan has a version this code cannot read.
	ErrVersion = errors.New("plan: unsupported serialized plan version")
	// ErrPlacement: a placement constraint could not be parsed.
	ErrPlacement = errors.New("plan: bad placement constraint")
)
