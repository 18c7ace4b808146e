// Package rest is the controller's HTTP API: a handler that serves a
// controller.Service as JSON over HTTP. Its typed Go client is
// client/ctlclient (the CLI and the client library call the controller
// through it), which shares the bodies of protocol/api with this handler.
//
// # Routes
//
// The route table (routes.go) is the one list of what is served; the OpenAPI
// document docs/openapi.yaml describes the same routes and a test keeps the
// two equal. The routes are shaped like Pravega's controller REST API
// (/v1/scopes, /v1/scopes/{scope}/streams, .../state to seal,
// .../scaling-events for a stream's epochs), plus what the client library
// needs (segments, successors, cuts, transactions, writers' event times
// and watermarks: POST .../streams/{stream}/writers/{writer}/time, DELETE
// .../writers/{writer}, GET .../watermarks?after=SEQ; and
// GET /v1/segments/{segment}/uri: the node that serves a segment now, from
// the controller's controller.SegmentLocator given with WithLocator; and
// GET /v1/tier2: {"uri": ...}, the root of tier 2 from
// controller.Options.Tier2URI, 404 if it is not configured, which
// `sluice hive ddl` uses for a table's LOCATION).
//
// Bodies are the JSON types of protocol/api, the wrappers (lists,
// transaction leases, a pair of cuts, health, a segment's node) included.
// Request bodies are at most 1 MiB, must be one JSON value, and may carry
// no unknown field.
//
// # Input checks
//
// Before a route runs, the handler checks what every route shares:
//
//   - the path: one the mux would redirect (an empty or dot element, a
//     trailing slash) is a 404 like any unknown path;
//   - the origin: a POST, PUT, PATCH or DELETE from another origin (an
//     Origin header that is not this server's, or Sec-Fetch-Site other
//     than same-origin or none; net/http.CrossOriginProtection) is a 403.
//     The API has no authentication yet, so a web page in a browser on
//     the controller's machine must not be able to change anything;
//     clients outside browsers send neither header;
//   - the media type: such a request with a body or a Content-Type must
//     say application/json (415 otherwise: browsers send text/plain and
//     form bodies across origins without asking first);
//   - the path parameters, by wildcard name: scope, stream and group
//     follow protocol.ValidateName, segment protocol.ValidateSegmentName,
//     id api.ValidateTxnID, node api.ValidateNodeID, writer
//     api.ValidateWriterID (400 otherwise).
//
// Then the route decodes its body and checks it with the body's Validate
// method: every number against its api.Range (docs/openapi.yaml states
// the same ranges; TestOpenAPIRangesMatchCode keeps them equal). PUT
// /v1/nodes/{node}/drain needs {"drain": true} or false, and a node the
// cluster knows (404 otherwise; 409 for a standalone controller's one
// node, which has nowhere to move its containers).
//
// # Segment names in paths
//
// A segment's qualified name ("sales/orders/3.#epoch.1") holds '/' and '#'.
// Routes that take one carry the whole name path-escaped in ONE path element
// (url.PathEscape: '/' is %2F, '#' is %23):
//
//	GET /v1/segments/sales%2Forders%2F3.%23epoch.1/successors
//
// # Errors
//
// Every failure is a 4xx or 5xx with an api.Error body: a stable code (the
// api.Code* constants) and a message for people.
//
//	400 INVALID             controller.ErrInvalid; malformed JSON, an unknown
//	                        field, trailing data, a body over 1 MiB, a bad
//	                        path or query parameter, a number out of range
//	400 NOT_EVENT_BOUNDARY  protocol.ErrNotEventBoundary: a truncation cut
//	                        with an offset inside an event (the message
//	                        names the segment, the offset and the nearest
//	                        event boundaries)
//	403 FORBIDDEN           a change asked from another origin
//	404 NOT_FOUND           controller.ErrNotFound; a path no route serves
//	405 METHOD_NOT_ALLOWED  a route's path with a method it does not serve
//	                        (the Allow header lists those it does)
//	415 UNSUPPORTED_MEDIA_TYPE  a request body that is not application/json
//	409 EXISTS              controller.ErrExists
//	409 SCALE_PENDING       controller.ErrScalePending: a new transaction
//	                        while a scale runs or waits (retriable)
//	409 CONFLICT            controller.ErrConflict
//	500 INTERNAL            anything else (the store's or a node's failure,
//	                        a panic), logged
//	503 UNAVAILABLE         protocol.ErrContainerUnavailable: a container the
//	                        request needs has no live node now (cluster
//	                        mode), or the handler has no locator
//
// # Metrics
//
// /metrics is not served yet: GET /metrics answers 404
// like any other unknown path.
package rest
