// Package client is Sluice's Go client library: event writers,
// transactions, readers and reader groups over a stream's segments, with
// the routing, batching, retries and exactly-once resends that package
// segclient leaves out.
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
// # Blocking, cancellation and retries
//
// Every call that can block takes a ctx and returns once it is done (with
// ctx.Err(), wrapped, sometimes together with the last failure); none
// replaces the caller's ctx with one of its own, so a caller's deadline
// bounds the whole call, also when a node stops answering without closing
// its connection. The calls without a ctx (Reader.Close, Txn.Close,
// Client.Close, GroupReader's stop inside Close) only stop goroutines
// whose every network call runs on a context they cancel, and close
// sockets, so they return at once. Ack.Err waits for the outcome; Ack.Wait
// is its bounded form; Ack.Settled tells when the outcome was known (before
// the waiting goroutine wakes up: `sluice bench` times acknowledgements
// with it).
//
// What is retried inside, with exponential backoff and jitter (a
// Writer's and its transactions' waits within WithBackoff's bounds): a
// Writer's segment goroutines reconnect for ever until Close (a broken
// connection, WrongHost, ContainerUnavailable, an unreachable controller
// or node); NewWriter retries while the controller is
// unreachable or unavailable, until ctx; a Reader's fetches retry what may
// pass until Close; a GroupReader's heartbeat tries again on its next
// tick; reader group updates retry compare-and-set conflicts until ctx;
// Txn.Commit and Txn.Abort retry what may pass until ctx; BeginTxn
// retries one refusal, ctlclient.ErrScalePending (the stream is scaling,
// or its automatic scale waits for the open transactions to end and goes
// before new ones), until ctx, so a program with transactions back to
// back sees a pause rather than an error (WithoutScaleWait returns it at
// once instead: for a program that holds a transaction open while it
// begins the next, which would otherwise wait for itself). Everything
// else (Endpoint, NewReader, NewReaderGroup, JoinReaderGroup, State,
// Status, Ping, the Controller methods) tries once. WithRetryNotify
// reports each retry to the program, which decides what to show; the
// library logs nothing.
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
// once while fewer than four blocks are in flight, up to MaxBatch while
// more are), numbers events per (writer, segment), and after every
// (re)connection calls SetupAppend and resends only the blocks after the
// last event number the node has, so every event is stored exactly once.
// A sealed segment's unacknowledged events go, in order, to its successors.
// A block's Acks are settled by the connection's reader goroutine as the
// node's acknowledgement arrives (in order, until the session's first
// failure), so an Ack is done without waking the segment's goroutine; that
// goroutine still handles every failure and resend.
//
// # Writers across restarts
//
// A plain Writer's event numbers are its own: a Writer made again with the
// same WithWriterID continues after what the node holds, so a process that
// restarts and resends events it is not sure of writes them twice. A
// sequenced Writer (WithSequenced, which requires WithWriterID) takes its
// numbers from the application instead: WriteSeq(ctx, key, seq, event),
// seq rising within one Writer (ErrSequence otherwise), the same seq
// always naming the same key and bytes, whichever life of the
// application writes it. The number the nodes store per (writer,
// segment) is then the application's.
//
// Rules the writer keeps, so that each segment's stored set is a prefix,
// in seq order, of the events routed to it (the node drops a block
// numbered at or below what it holds as a resend, so a lower seq reaching
// a segment after a higher one would be lost):
//
//   - New events rise in seq (WriteSeq refuses others), and each segment's
//     goroutine sends its events in queue order, resending unchanged.
//   - An older segment of the writer whose range newer segments of the
//     writer cover wholly is superseded: it leaves the routes at once
//     (later events of its keys go to the newer ones) and takes no new
//     events but what moves into it. One only partly covered keeps its
//     routes (the older segment wins, and forwards once found sealed).
//   - A segment S sends nothing while an older overlapping segment of the writer
//     holds events, queued or in flight: their fate (stored there, or
//     moved on towards S) is not known yet. That is the merge case: S
//     replaces P and Q, P is found sealed first and its events move to S,
//     Q still holds lower numbers.
//   - Events moved into S are merged with S's queued events in seq order.
//   - Empty keys route as if the key were seq in decimal (round-robin
//     depends on the order of writes and could not be resumed).
//
// Resume: before its first write, NewWriter lists the stream's history
// (every epoch's segments with their key ranges) and asks each segment's
// node what it holds of the writer (GetWriterState, answered for sealed
// segments too; every failure but a deleted segment or a refused request,
// such as a node that refuses connections while it restarts, is retried
// with the writer's backoff until NewWriter's ctx ends). WriteSeq then treats (key, seq) as stored, and
// acknowledges it at once without sending it (Ack.Duplicate), iff
//
//	seq <= max{ stored(G) : G in the history, hash(key) in range(G) }
//
// Why this is exact, given the application resends every event from a
// point at or before its first unconfirmed one, in order: (if) an event
// stored in G was routed there by its key, so hash(key) is in range(G)
// and stored(G) >= seq. (Only if) let stored(G) = t >= seq, reached by
// event t of an earlier life L. If seq is below the point L resent from,
// it was confirmed stored. Otherwise L wrote seq before t. A writer's view
// of the epochs only moves forward, and along one hash the segments of
// successive epochs form a chain of predecessors; t ended in G, so when
// L wrote seq, the segment it routed seq to was G or an older segment of
// G's chain for hash(key). From there seq either was stored (or skipped
// as stored, by induction on the lives) or moved forward along that chain
// towards G, never past it before t, and so reached G ahead of t in G's
// seq order. G's stored set is a prefix in seq order that holds t, so it
// holds seq. Events that L stored after the history was listed cannot be
// in it (L is gone); a block of L still on the wire lands, if at all,
// before the node's seal of its segment, and SetupAppend's answer after a
// seal tells the new life which of its own resends to drop.
//
// Stored returns the highest stored seq on any segment: lower seqs may
// still be missing on other keys, so the application resends from its own
// last confirmed point (everything before it confirmed by Ack or Flush)
// and lets WriteSeq skip. Segments deleted by a truncation answer
// NoSuchSegment; they count as holding nothing (GoneSegments lists them),
// so resending events that only they held writes them again: resend from
// a point newer than the stream's truncation. Transactions are not
// sequenced: a transaction's writer numbers its own events (and has its
// own exactly-once commit).
//
// # Readers
//
// See Reader. A Reader reads one stream alone (reader groups, below, share a
// stream's segments among readers). Its core is "read these
// segments from these offsets, follow successors under the rules": a
// deterministic segmentTracker holds, per segment, the offset after the
// last event returned, the segments read to their end whose successors
// have not started, and the successor graph; a fetch goroutine per segment
// keeps one read in flight (a long poll at the tail, never a tight loop of
// empty reads) while the segment holds less than the read buffer, so the
// next read is on its way while the application takes the events of the
// last one (readahead.go: reads are queued as received and only an event
// cut by a read's end is copied), retries what may pass, and at a sealed
// end asks the controller for the successors. Data that arrives while
// ReadNext waits is handed to it by the connection's reader goroutine
// directly. A successor starts only when every
// predecessor of its scale has been read to its end, so a routing key's
// events come out in write order across scaling, and the position
// (Reader.Position, Event.Position) is always a consistent stream cut that
// FromCut continues from with no loss and no duplicate. A read below a
// segment's start (truncation) moves the reader to the stream's head cut
// for that part of the key space and reports it (WithTruncationFunc).
//
// # Reader groups
//
// NewReaderGroup creates a group of a stream, starting at its head, its
// tail or a cut; JoinReaderGroup adds a GroupReader to it. The group's
// state (GroupState) is one versioned record in the controller's metadata
// store, scopes/<scope>/readergroups/<group>, read with GET and written
// with PUT .../state and the version read (409 CONFLICT if it changed).
// The controller stores it opaquely; the rules live here, in GroupState's
// pure transitions (join, leave, expire, report, plan, acquire,
// startCheckpoint, reset; golden-tested), applied by a thin driver: each
// GroupReader's heartbeat goroutine reads the state, reports its
// positions and the segments it released or read to their end, expires
// readers silent for longer than the session timeout, then releases (at
// its exact position) the segments over its fair share
// ceil(segments/readers) or takes unassigned ones under it, and writes it
// all back in one compare-and-set, retrying on conflict (at once, then
// after short jittered waits: a reader that backed off further and further
// while the others heartbeat on schedule would lose every time and be
// expired while alive). Only after the
// write does it start reading segments it took, so a segment is read by
// one reader at a time (a reader that is expired while alive notices on
// its next heartbeat and drops everything).
//
// Guarantees: Close leaves at the exact position (no loss, no duplicate).
// A reader that dies is taken over from its last commit: the events it
// returned after its last commit are read again (at least once), at most
// one commit interval's worth. Successors of a segment are given out only
// once every predecessor of the scale is read to its end (the rule of the
// single reader), so per-key order holds across scaling and the group's
// position is always a consistent cut. InitiateCheckpoint freezes the
// assignment until every reader has returned its checkpoint event and
// reported its position there, then records the cut; ResetToCut and
// ResetToCheckpoint restart the group at a cut (readers see a new
// generation and drop what they held).
//
// # Bounded reads
//
// ToCut (a Reader) and GroupTo (a group, kept in its state so every
// reader honours it) end reading at an end cut, a consistent cut of the
// stream at or after the start (NewReader and NewReaderGroup refuse one
// before the start, of another stream or not consistent, with one error).
// As in Pravega: a segment of the end cut is read up to its offset there;
// a segment wholly before the cut is read to its end and its successors
// are followed; a segment after the cut is never read (only the end cut's
// segments lead to it, and their successors are not followed). An end
// offset must be an event boundary (cuts the system hands out are): one
// inside an event fails ReadNext with an error wrapping
// protocol.ErrNotEventBoundary when the reader gets there, after every
// event before it. Once every event before the end cut was returned,
// ReadNext returns ErrEndOfSlice (which errors.Is treats as
// ErrEndOfStream too), and the reader's Position is the end cut. In a
// group, a reader with nothing left waits in ReadNext until the whole
// group has read its slice, then every reader returns ErrEndOfSlice
// (Pravega returns null events meanwhile; here ReadNext blocks, returning
// checkpoint events if any).
//
// # Checkpoint events and restore
//
// ReaderGroup.InitiateCheckpoint(name) puts a checkpoint in the group's
// state; each GroupReader's heartbeat sees it and its next ReadNext
// returns, once, an Event with Checkpoint == name and no Data, before any
// further event (also when it waits at the tail). The reader's position
// at that event is its share of the checkpoint's cut: every event it
// returned before lies before the cut, every later one after. An
// application that saves its own state when it sees the event saves it
// at exactly the cut. The next heartbeat reports that position; the
// checkpoint completes when every reader has (a reader that closes counts
// at the position it left at, one that is expired at its last commit,
// one of a group that has read everything at once, without the event),
// and InitiateCheckpoint returns the cut (or ErrCheckpointAborted if a
// reset dropped the checkpoint first). The group keeps the last 8
// checkpoints by name: ReaderGroup.Checkpoint(name) returns one's cut and
// ResetToCheckpoint(name) makes the group read from it again (as
// ResetToCut: every reader drops what it holds).
//
// Truncation past a GroupReader (a read below the segment's start, or a
// segment deleted by truncation) goes through the group too: the reader
// stops reading the affected segments, calls its WithTruncationFunc, and
// reports the truncation on its next heartbeat; the transition truncated
// replaces the segment by itself at the head cut's offset, or, if it was
// deleted, by the head cut's segments that replace it, each placed once
// (one already in the state, because another reader met the same
// truncation first, is not placed again) and unassigned, so the plan hands
// them out like any other. The segments the truncation removed leave the
// whole state at once, also those another reader holds that has not met
// the truncation yet (it finds them gone when it does; its report of them
// is then ignored), so no reader keeps a deleted segment in the fair share
// or in a checkpoint's cut. The reader never takes a segment by itself, so
// two readers truncated into the same successor do not both read it.
//
// Why the controller's store and not Pravega's state synchronizer (a
// segment of conditional appends replayed by every reader): Sluice's
// controller already keeps versioned records with compare-and-set in
// bbolt or ZooKeeper, so one small record gives the same linearisable
// updates without an internal stream per group, and `sluice readergroup`
// can read it with one GET. The cost is that every heartbeat rewrites the
// whole state (bounded at 256 KiB) through the controller, which suits
// groups of tens of readers and heartbeats of about a second, not
// thousands of readers.
//
// # Event time and watermarks
//
// As in Pravega, a stream carries event time as watermarks that the
// controller computes from its writers' notes (watermark.go). A writer
// calls Writer.NoteTime(ctx, t) to promise that every event it writes
// from then on has a time at or after t; NoteTime waits until every event
// written before is acknowledged, then reports t with the writer's
// position (per segment, the end of its last acknowledged event, from the
// nodes' append acknowledgements). A transaction's Txn.CommitAt(ctx, t)
// commits and reports t for the Writer that began it, at the end of the
// committed data. Writer.Close tells the controller the writer is gone
// (best effort, never failing the Close).
// Times are time.Time, kept to the millisecond (the REST API's unit).
//
// The controller (package controller, "Watermarks") combines the active
// writers' latest reports into watermarks (lower time, upper time, cut).
// Reader.CurrentTimeWindow (and GroupReader's) places the reader's
// position among them: Lower is the lower time of the newest watermark
// whose cut the reader has reached everywhere it reads (every event with a
// time at or before Lower has been read), Upper the upper time of the
// oldest watermark whose cut the reader has not passed anywhere (every
// event read so far has a time at or before Upper); either is zero while
// unknown. Positions and cuts are compared per overlapping key range: the
// same segment by offset, different segments by the epoch that created
// them (the older was sealed before the newer began), so a reader group's
// reader gets the window of its own segments. The watermarks and the key
// ranges come from a goroutine of the Reader that the first
// CurrentTimeWindow starts and Close stops, polling the controller every
// WithWatermarkPoll (1 s): ReadNext never waits for the controller.
//
// To close event-time windows: write with a writer that calls NoteTime
// regularly (say each second, with the least time it will still write),
// read, and close every window that ends at or before
// CurrentTimeWindow().Lower.
package client
