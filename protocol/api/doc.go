// Package api is the contract of the controller's REST API: the JSON bodies
// that the controller serves and that the client library and the CLI send.
// It holds types, their validation and the text form of stream cuts; no I/O.
//
// The JSON is shaped like Pravega's controller REST API: camelCase field
// names, scaling and retention policies as tagged objects:
//
//	{
//	  "scopeName": "sales",
//	  "streamName": "orders",
//	  "scalingPolicy": {"type": "BY_RATE_IN_EVENTS_PER_SEC", "targetRate": 100,
//	                    "scaleFactor": 2, "minSegments": 1},
//	  "retentionPolicy": {"type": "LIMITED_DAYS", "value": 7},
//	  "tags": {"team": "billing"}
//	}
//
// A FIXED_NUM_SEGMENTS policy uses minSegments as the segment count.
//
// # Ranges
//
// Every number a request carries has one closed range, listed once in
// Ranges (ranges.go) and checked by the Validate methods of the request
// bodies (StreamConfig, ScaleRequest, TxnRequest, ReaderGroupState,
// CutRange, ReaderGroupConfig, StreamCut, WriterTime). The bounds keep each
// conversion the controller and nodes make (days to milliseconds, MiB to
// bytes, milliseconds to a time.Duration) inside int64. docs/openapi.yaml
// states the same ranges as minimum/maximum (minItems/maxItems for
// counts). Node ids, transaction ids and writer ids in paths are checked
// by ValidateNodeID, ValidateTxnID and ValidateWriterID.
//
// # Event time
//
// WriterTime is a writer's report of event time (ms since the Unix
// epoch) with its position, a StreamCut of the segments it wrote to, or
// with a committed transaction's id; Watermark is one of a stream's
// watermarks: lower and upper time, the cut (one epoch's segments) and
// the cut's segments with their key ranges.
//
// # Stream cuts
//
// A StreamCut maps segment qualified names (protocol.SegmentName) to
// offsets. In JSON it is an object {"sales/orders/0.#epoch.0": 120, ...}.
// Its text form, for command lines and logs, is one line:
//
//	scope/stream:N.#epoch.E=OFFSET,N.#epoch.E=OFFSET,...
//
// with the segments in increasing segment number (then epoch), offsets as
// canonical non-negative decimals, and no spaces. A cut spanning several
// streams (never produced by the controller, but representable) lists one
// such group per stream, groups sorted by scope/stream and separated by ';'.
// The empty cut is the empty string. ParseStreamCut(c.String()) equals c for
// every cut whose keys are stream segment names; ParseStreamCut refuses
// anything else (missing ':' or '=', a bad name or number, a negative or
// non-canonical offset, a transaction segment, a segment listed twice) with
// an error wrapping ErrInvalid that says what and where.
package api
