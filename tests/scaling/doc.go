// Package scaling holds the end-to-end proof of auto-scaling (tests
// only): the real sluice binary, built once by TestMain, run as `sluice
// standalone` with rate windows, poll and cooldown of seconds (flags), and
// a BY_RATE_IN_EVENTS_PER_SEC stream written through the client library.
//
// TestAutoScaleEndToEnd raises one writer's rate on the lower half of the
// key space until the auto-scaler has split it at least twice, then
// lowers it until cold neighbours have merged back to the stream's
// minSegments. Meanwhile three readers of one reader group read every
// event; writers come and go (one closes and a new writer id takes its
// keys over, one stops noting event time and is timed out) and note event
// times. It checks: each scale in the stream's history is a split of one
// segment into scaleFactor equal parts or a merge of two neighbours, no
// epoch has fewer than minSegments segments, every acknowledged event is
// read exactly once and each key's events in the order written, and the
// watermarks read from the REST API never go back (lower and upper time,
// and the cut: a segment's offset never decreases, and a segment replaced
// in a later cut is replaced by one created in a later epoch).
package scaling
