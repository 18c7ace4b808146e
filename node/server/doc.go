// Package server is the node's TCP server: it accepts connections, decodes
// the frames of package protocol, runs each request against the container
// that owns its segment (node.Node.ContainerFor) and writes the replies.
//
// # Goroutines of a connection
//
// Each connection has one reader and one writer, plus a goroutine per
// request that waits (reads, setups, and the other commands that wait for
// their fsync). The connection owns them all and waits for them before it
// closes; the Server owns the connections and waits for them in Close.
//
//	           +--------+  AppendAsync (in order)   +-----------+
//	socket --> | reader | ------------------------> | ack FIFO  | ----------+
//	           +--------+                           | (bounded) |           |
//	               |  read / setup / other ops      +-----------+           v
//	               +----> one goroutine each ----> reply queue ----> writer --> socket
//
// The reader decodes a frame, validates the request (Request.Validate) and
// dispatches it. It calls Container.AppendAsync itself, so a writer's
// blocks are logged in the order they arrived; the pending append (or the
// error that refused it) goes into the connection's ack FIFO. The writer
// is also the acker: it selects on the reply queue, the FIFO and the
// durability of the append at the FIFO's head (PendingAppend.Done), and
// encodes each append's reply, in FIFO order, as soon as its log batch is
// durable, so DataAppended and the errors of appends are answered in
// request order, and a group commit wakes one goroutine per connection
// (not an acker and then the writer). A resend waits for a sync point,
// not a batch: the writer flushes what it holds and then waits for it. A
// full FIFO stops the reader: backpressure on the client. Reads are
// bounded per connection (Options.MaxReadsPerConn); at the bound the
// reader waits too.
//
// The writer drains the reply queue and the durable acks into a buffered
// encoder and flushes when nothing more is ready, so pipelined acks share
// syscalls. A SegmentRead
// with data is written straight to the socket after a flush: header and
// the cached blocks in one writev, without a copy.
//
// # Limits on peers
//
// Every peer is assumed to be possibly hostile, and bounded (Options):
//
//   - MaxConnections open connections; at the cap Serve stops accepting.
//     MaxConnsPerPeer of them per peer (a remote IPv4 address, or an IPv6
//     /64): a connection beyond its peer's cap is closed as soon as it is
//     accepted.
//   - HandshakeTimeout: a connection that has not delivered one complete
//     frame by then is closed.
//   - IdleTimeout: a connection with no writer set up, no request in
//     flight and no frame received for that long is closed. A connection
//     with a writer is never idle.
//   - FrameTimeout: once a frame that reserves request memory has its
//     reservation, the rest of it must arrive within FrameTimeout (and,
//     before the first complete frame, within HandshakeTimeout), or the
//     connection is closed and the frame's memory released. The deadline
//     is set by the first read of the frame's body from the socket
//     (sockReader), so a body already in the decoder's buffer costs
//     nothing. It replaces an idle or handshake deadline set before the
//     frame began: the time spent waiting for memory counts for no
//     timeout, and a connection that waits for memory is not idle.
//     Frames that reserve nothing hold only their connection.
//   - WriteTimeout: a write deadline that far ahead, set at the start of
//     each batch of replies, before each read's data and every 256
//     replies (writeRearm), so a peer that reads on is never cut off by
//     a long batch. A peer that stops reading its replies blocks the
//     writer, and with it the acks and the reservations of the appends
//     behind it; at the timeout the connection is closed and its context
//     cancelled, and the writer, draining, releases every reservation as
//     its append becomes durable.
//   - RequestMemory bytes held for requests, node-wide, and
//     PeerRequestMemory per peer: the reader acquires a frame's whole
//     size (protocol.Budget) before it reads the frame's body, and an
//     append's bytes are released once it is durable or refused (in
//     order, by the ack FIFO). A reader that waits for budget reads
//     nothing: back-pressure on its client, not allocation. The wait
//     ends when the budget is granted or the connection dies (its writer
//     failed or timed out, or the server closes). Budgets are at least
//     one maximal frame and reservations are whole frames, so no
//     connection waits while holding part of one: the budget cannot
//     deadlock. With the two timeouts above, no peer holds its share for
//     longer than FrameTimeout or WriteTimeout plus the time its appends
//     take to become durable, so peers that stop mid-frame or stop
//     reading cannot stall the others for ever.
//
// The handshake, idle and frame deadlines are the socket's read
// deadline, set and cleared under conn.mu as the connection's state
// changes (invariants: an idle deadline is set only while nothing is
// registered on the connection; a frame deadline is cleared only by the
// reader, once the frame is read). The reader of a connection with a
// writer loads two atomics per frame, and takes conn.mu and updates the
// deadline's timer only for a frame whose body it has to wait for.
//
// Server.Stats reports the open connections, the bytes held and the
// connections refused or closed by each timeout.
//
// # Errors
//
// Every failed request gets an ErrorReply with its request id and the code
// of protocol.CodeOf; the connection goes on. A frame the decoder cannot
// read but could skip (unknown type, bad msgpack) is answered the same way.
// A frame that breaks the stream (bad header, length above
// protocol.MaxFrameSize) is answered with request id -1, then the
// connection is closed after the replies of the requests before it; other
// connections are not affected. A Hello whose LowVersion is above
// protocol.WireVersion is refused the same way.
//
// # Appends
//
// GetWriterState (writerstate.go) answers what a segment holds of a
// writer without binding the writer to the connection: a writer may ask
// it of any segment, on any connection, and still needs a SetupAppend
// before it appends.
//
// A writer appends on a connection only after a SetupAppend there has
// completed: it binds the writer id to a segment (a later SetupAppend
// re-binds it when it completes). A second SetupAppend for a writer whose
// setup is still in flight is refused with protocol.ErrSetupInProgress;
// the first completes normally. An AppendBlock for a writer with no
// completed setup gets protocol.ErrWriterNotSetUp. Within one setup a
// writer's blocks must rise in event number (protocol.ErrInvalidEventNumber
// otherwise, never an acknowledgement as a resend), and a block refused
// with a retriable error unbinds the writer: its next blocks get
// protocol.ErrWriterNotSetUp until it sets up again and resends, so none
// is stored ahead of the refused one. Hello is optional: a
// client should send it first to learn the node's version.
//
// # Segment info and tier 2
//
// On a node with tier 2, GetSegmentInfo's TieredOffset is what the
// container's newest recovery record in tier 2 holds
// (container.TierState.Recorded), not only what its chunks hold: the
// bytes that survive the loss of the node's disk. UntieredBytes counts
// the rest.
package server
