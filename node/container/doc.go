// Package container implements a segment container: a shard of segments
// whose every change is one record in the container's own write-ahead log
// (package wal), applied to the in-memory metadata and logged in one order
// under the container's lock, and acknowledged only once durable.
//
// # Operations
//
// Create, Append (with writer idempotence and conditional appends), Read
// (tail reads wait; catch-up reads of blocks no longer cached come from the
// log), ReadAtEvent (Read from an offset that must be an event boundary),
// CheckBoundary, Info, Seal, Truncate (at event boundaries only), Delete,
// Merge (a sealed transaction segment onto its parent, as one record) and
// attributes (64-bit values under string keys, UUID keys in canonical
// text form, with compare-and-set). WriterState reads a writer's last
// stored event number, like SetupAppend, for any segment, sealed too,
// once durable, changing nothing (a resuming client asks it).
//
// Event boundaries (boundary.go): every block and every tier-2 chunk part
// starts at an event, so whether an offset is a boundary is found by
// walking the length prefixes of the block or part that holds it. A
// truncation above the start at any other offset is refused with
// protocol.ErrNotEventBoundary before anything is logged. The start itself
// need not be a boundary (an older version logged truncations unchecked),
// and the block holding it is kept whole, so a truncation at the next
// boundary repairs such a segment.
//
// Writer idempotence: each append carries its writer id and the event
// number of its last event (0..protocol.MaxEventNumber, else refused), and
// the append record sets the writer's last event number to it in the same
// record (the rule: classifyBlock in append.go). Writers' numbers are kept apart
// from the attributes clients set, so no attribute update can change what
// counts as a resend. A block whose event number
// is not above the stored one is a resend: it is acknowledged without being
// applied, but only once everything logged before it arrived is durable,
// because the original may still be waiting for its fsync.
//
// Visibility: a change is applied to the metadata when it is logged (so the
// next append sees the new length), but readers see only durable bytes:
// each segment keeps a durable length, raised when the fsync covering an
// append returns, and a sealed-and-durable flag.
//
// # Records
//
// Record types (wal.RecordType): 1 create, 2 append, 3 seal, 4 truncate,
// 5 delete, 6 merge, 7 attributes, 8 tiered, 9 forget. All but append are msgpack maps (see
// records.go). An append record is binary, so that its data is never
// re-encoded, little-endian:
//
//	0            8            16           24     26          26+w
//	+------------+------------+------------+------+-----------+-------------+
//	| segment id | offset     | event no.  | w    | writer id | data        |
//	| u64        | i64        | i64        | u16  | (w bytes) | (the block) |
//	+------------+------------+------------+------+-----------+-------------+
//
// offset is the segment's length before the block; replay checks it.
// Attribute records hold results, not conditions, so replay decides
// nothing.
//
// # Checkpoints
//
// A checkpoint is the whole metadata (segments, lengths, seal flags,
// attributes, and each segment's extents: where in the log each append
// block lies) as of an LSN, written beside the log as
// "checkpoint-<LSN, 20 digits>.ckpt" whole or not at all (temporary file,
// fsync, rename, directory fsync), and only after every record up to that
// LSN is durable. The newest two are kept. Layout, little-endian:
//
//	0          8         12        16               24
//	+----------+---------+---------+----------------+------------------+
//	| SLUICECK | version | CRC32C  | body length    | msgpack body     |
//	|          | u32 = 2 | of body | u64            |                  |
//	+----------+---------+---------+----------------+------------------+
//
// Extents are packed in the body as uvarints (length, log file, offset in
// the file, data offset in the record), contiguous from a base offset;
// tier-2 chunks likewise (their lengths), each with its marks if it has
// any. Version 1 (no chunks) is still read.
//
// # Tier 2
//
// A segment's bytes are tier-2 chunks, then extents. A storage writer
// (package tiering) takes UntieredExtents (each Block's bytes read when it
// is written: from the cache, or back from the log), writes them to tier 2 and
// records them with CommitChunk (a tiered record) with the chunk's marks
// (ChunkMark: where its file can be read from), after which checkpoints
// let the log drop those blocks. Reads of chunk bytes load parts
// (ChunkPart) through the configured ChunkSource into pooled buffers
// (partpool.go; Config.Parts, shared by a node's containers) that the
// cache and each ReadResult hold until released,
// and read the next part ahead once a read's own loads are done: the
// chunk's next part (readahead.go), or the next chunk's first part when a
// read reaches a chunk's end (read.go). Container hand-over (handover.go) exports the
// metadata with its chunks to a new owner.
//
// Recovery records (recovery.go): ExportRecovery returns the metadata as
// of what tier 2 holds (segments cut back to their chunks' end, no
// extents, writers' event numbers as of the cut: each extent keeps its
// writer and that writer's number before the block, checkpointed as
// ExtentWriters), framed like a checkpoint with magic "SLUICERR",
// version 1, and the container id, epoch and sequence number in the
// body. The storage writer keeps it in tier 2 so that a node that lost
// its disk rebuilds the container (ImportRecovery, which imports as
// ImportHandover does, refusing a damaged record with ErrBadRecovery and
// one of a later epoch with ErrStaleEpoch). Recorded tells the container
// a record is in tier 2; TierState.Recorded is then what counts as
// tiered. MetaChanges counts the changes a record may need.
//
// Open loads the newest valid checkpoint (falling back to the older one,
// with a warning, if the newest is damaged), replays the log after it, and
// refuses to start if the log is damaged other than by a torn tail.
// Checkpoints are taken after every CheckpointBytes of log and on Close.
//
// # Locks
//
// Container.mu guards the metadata. It is taken before the log's lock
// (Append logs under it) and before the cache's lock; it is never held
// while waiting for an fsync or reading the disk.
//
// Every change follows one sequence, lock-log-wait (change.go): under
// Container.mu decide (or refuse), log the record and apply it; release
// the lock; wait until the record is durable; for what readers see only
// once durable, mark it under the lock again. Container.change runs it
// around each operation's decision, releasing the lock on every path.
package container
