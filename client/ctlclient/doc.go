// Package ctlclient is the typed Go client of the controller's REST API
// (served by controller/rest, described by docs/openapi.yaml). The CLI and
// the client library call the controller through it.
//
// It imports the standard library and protocol/api only, never the
// controller: the bodies it sends and reads are protocol/api's types, the
// same ones the handler writes.
//
// # Calls
//
// Each Client method is one HTTP request to one route. It blocks until the
// reply or until ctx is done (or WithRequestTimeout's bound, if set), and
// retries nothing; a Client is safe for concurrent use. Segment names
// travel path-escaped in one path element ('/' is %2F, '#' is %23), as
// the routes expect.
//
// # Errors
//
// A 4xx or 5xx reply is an *Error carrying the HTTP status, the api.Error
// code and the controller's message. Match it with errors.Is against the
// sentinels:
//
//	ErrNotFound     404 NOT_FOUND
//	ErrExists       409 EXISTS
//	ErrInvalid      400 INVALID
//	ErrConflict     409 CONFLICT
//	ErrUnavailable  503 UNAVAILABLE: a container the request needs has no
//	                live node now; retry later
//	ErrUnreachable  no reply at all (refused, reset, not HTTP, none within
//	                WithRequestTimeout); not an *Error
//
// A cancelled or expired ctx is returned wrapped (errors.Is(err,
// context.Canceled) or context.DeadlineExceeded), not as ErrUnreachable.
package ctlclient
