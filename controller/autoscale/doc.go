// Package autoscale is the controller's deterministic auto-scaling core:
// one stream's state (its scaling policy, the current epoch's segments
// with their key ranges and measured rates, the time of its last scale,
// what keeps it from scaling now) in, at most one scale decision out.
// Nothing here does I/O or reads a clock; the controller's driver
// (controller/autoscale_driver.go) gathers the input from the stream
// record and the nodes (protocol.GetSegmentRates) and carries the
// decision out through the resumable scale workflow.
//
// The rules, in order:
//
//  1. A stream that cannot scale now (a workflow unfinished, sealed) gets
//     no decision.
//  2. Within Config.Cooldown of the stream's last scale (the current
//     epoch's creation time) there is no decision either: a new segment's
//     averages start from zero, and a scale needs time to show its effect.
//  3. Below the minimum: a stream with fewer active segments than
//     MinSegments (UpdateStream raised it) splits its widest segment (the
//     lowest key of equals) into ScaleFactor parts, no more than the
//     minimum needs, whatever the rates: one split per cooldown until
//     the minimum is reached.
//  4. Hot: a segment whose shortest window's rate is above the target.
//     The hottest one (highest rate, then lowest key; one wider than the
//     minimum width below before any at it) is split into
//     ScaleFactor segments of equal key ranges, fewer if that would pass
//     MaxSegments; at the maximum it is not split, and cold neighbours
//     (rule 5) merge instead, which makes room for it. A hot segment
//     whose key range is at most 1/MaxSegments wide (the minimum width:
//     each segment's share of a stream spread evenly over the maximum) is
//     not split either: one routing key above the target cannot be
//     spread, and halving its segment again and again (merging cold
//     neighbours to make room at the maximum, then splitting again) would
//     scale the stream for nothing. No room is made for it; cold pairs
//     still merge by rule 5.
//  5. Cold: a segment measured for at least the longest window whose
//     rate in every window is below the target times Config.ColdFraction
//     (a half by default). Two neighbours (adjacent key ranges) that are
//     both cold merge into one, unless the stream is at MinSegments; of
//     several such pairs the one with the lowest sum of shortest-window
//     rates merges (then the lowest key). One pair per scale: merging
//     further waits for the cooldown.
//  6. A decision while the stream has unfinished transactions is returned
//     with Blocked set: the scale workflow refuses it until they end, so
//     the driver records it as the stream's pending scale (new
//     transactions wait for it) and carries it out once they have ended
//     (controller/doc.go, "Transactions and scaling"; the reason of the
//     scale says how long it waited). The driver counts a pending scale
//     given up as a scale for LastScale, so the cooldown keeps it from
//     marking the stream again at once.
//
// The gap between the hot threshold (the target) and the cold one (a half
// of it on every window, each of a pair) is the hysteresis: a merged pair
// starts below the target, and a split segment's parts are not cold until
// their longest window has passed. A segment the nodes did not report
// (its container moving, a node down or restarted: Age 0) is neither hot
// nor cold, so a node restart or a container move never merges busy
// segments; it only delays decisions until the averages are rebuilt.
package autoscale
