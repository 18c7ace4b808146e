// Package client is Sluice's Go client library: event writers and readers (and, next,
// reader groups) over a stream's segments, with the routing,
// batching, retries and exactly-once resends that package segclient leaves
// out.
//
// # Client
//
// A Client holds what writers and readers share: the controller (a REST
// client behind the narrow Controller interface), a pool of node
// connections (one segclient.Conn per node address, redialled when broken)
// and a cache segment -> node address filled from the controller's
// GET /v1/segments/{segment}/uri and dropped when a node answers WrongHost
// or ContainerUnavailable or the connection breaks (Invalidate).
//
// # Routing
//
// An event's routing key is hashed with protocol.KeyHash into [0, 1); the
// event goes to the active segment whose range [low, high) holds the hash.
// Events with an empty key are spread round-robin over the active segments.
//
// # Writers
//
// See Writer. In short: one goroutine per segment owns that segment's
// events in order; it batches them into append blocks (everything queued at
// once when nothing is in flight, up to MaxBatch while blocks are in
// flight), numbers events per (writer, segment), and after every
// (re)connection calls SetupAppend and resends only the blocks after the
// last event number the node has, so every event is stored exactly once.
// A sealed segment's unacknowledged events go, in order, to its successors.
//
// # Readers
//
// See Reader. A Reader reads one stream alone (reader groups, which share a
// stream's segments among readers, come later). Its core is "read these
// segments from these offsets, follow successors under the rules": a
// deterministic segmentTracker holds, per segment, the offset after the
// last event returned, the segments read to their end whose successors
// have not started, and the successor graph; a fetch goroutine per segment
// keeps one read in flight (a long poll at the tail, never a tight loop of
// empty reads), retries what may pass, and at a sealed end asks the
// controller for the successors. A successor starts only when every
// predecessor of its scale has been read to its end, so a routing key's
// events come out in write order across scaling, and the position
// (Reader.Position, Event.Position) is always a consistent stream cut that
// FromCut continues from with no loss and no duplicate. A read below a
// segment's start (truncation) moves the reader to the stream's head cut
// for that part of the key space and reports it (WithTruncationFunc).
package client
