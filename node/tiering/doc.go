// Package tiering moves a container's durable data from its log (tier 1)
// to tier 2 and reads it back: the storage writer (docs/ARCHITECTURE.md, "Tier 2").
//
// # Policy (policy.go, a pure function)
//
// Decide looks at every segment's TierState and says which to tier now,
// and why:
//
//   - sealed: the segment is sealed (its last bytes go at once, so the log
//     can let go of a finished segment);
//   - size: its untiered bytes reached Policy.SegmentBytes;
//   - age: its oldest untiered block is half of Policy.MaxLag old. Half,
//     so that writing the chunk fits in the bound: an event lands in tier
//     2 within MaxLag of being logged while tier 2 keeps up;
//   - pressure: the container's untiered bytes exceed
//     Policy.PressureBytes (the cache would start dropping blocks only
//     the log holds); the largest segments go first.
//
// A stream overrides SegmentBytes and MaxLag through its segments'
// attributes "_tier.segmentBytes" and "_tier.maxLagMillis".
// Transaction segments are never tiered: a commit merges them into their
// parent, whose chunk then holds their events.
//
// # Writing a chunk (writer.go)
//
// For one segment: take whole blocks from the first untiered offset
// (container.UntieredExtents), one at a time, each read back from the log
// only as it is written (Block.Data: the writer holds one block, not a
// chunk's worth), while the SequenceFile stays within Policy.ChunkBytes,
// the records' keys and lengths counted (fit.go; one block larger than
// the bound is a chunk of its own); write them as one
// SequenceFile (key: the event's offset, value: its bytes) under the
// temporary name; close it (durable); rename it into place; then log the
// chunk in the container (CommitChunk). Only a checkpoint that holds that
// record lets the log drop the blocks (container.trimLog). A crash at any
// step leaves either no record of the chunk (the file, temporary or
// renamed, is an orphan: Reconcile removes it, and the bytes are tiered
// again from the same offset) or the record (the file is in place), so
// every event is in tier 2 exactly once. A segment deleted while its chunk
// is written (the writer looks it up after every 1 MiB it takes) has the
// chunk abandoned without its fsync (tier2.Abort) and removed.
//
// The backend may pace a chunk's writes to leave the disk to the log
// (tier2/fs pauses after each 1 MiB it waited to write back); a segment
// whose oldest untiered block is three quarters of its lag bound old,
// and every chunk of Flush, is written unpaced (tier2.Paced), so the bound
// still holds while the log is busy.
//
// # Deleting (removal.go)
//
// A deleted segment's chunks are removed one file at a time, each unlink
// followed by a pause as long as it took, for at most half a tick per
// pass (Flush: all, without pauses); the next pass goes on, and the
// segment is forgotten (container.Forget) only once its directory is
// gone. Until then a segment made again under its name is neither
// tiered nor trimmed. Unlinking a burst's gigabytes at once held the
// filesystem's journal, which the log's syncs commit.
//
// # Recovery records (recovery.go)
//
// A pass writes the container's recovery record
// (container.ExportRecovery) to tier2.RecoveryPath(id, epoch, seq)
// (temporary name, close, rename: WriteWhole) when the container changed
// by anything but untiered appends since the writer's last record: at
// the pass's start, before any file is removed (so no record names a
// chunk a truncation or deletion removed, but for an older one beside a
// newer), and after tiering. seq continues the highest of the epoch in
// tier 2. The newest RecoveryKeep records are kept; a writer removes
// only records below its own, never a later epoch's. Then it tells the
// container (Recorded), which from then counts those bytes as tiered.
// Config.NoRecoveryRecords turns them off, for benchmarks only.
//
// Faults: a tier-2 error stops tiering for that container, never writing;
// the writer retries with backoff (up to 10 s) and reports the stall
// (Stats). Appends continue into the log until container.Config's
// MaxUntieredBytes, then are refused as retriable.
//
// # Reading (reader.go)
//
// An uncompressed chunk is recorded with marks (container.ChunkMark): the
// first record, a record boundary after about every Config.PartBytes of
// events, and the file's end, as the SequenceFile writer reports them
// (seqfile.Writer.Boundary). A reader then loads a part of a chunk, not
// the whole file.
//
// # Reading (reader.go)
//
// Reader implements container.ChunkSource: for a part, it reads the
// chunk's header (its sync marker) and the part's bytes into the buffer
// the container lends, and compacts the events in place
// (seqfile.EventsInPlaceAt); a whole chunk (compressed, or recorded
// without marks) is decoded record by record. Either way it checks that
// keys are consecutive event offsets from the first one and that the
// bytes add up to what the container recorded (else ErrBadChunk), and
// returns the events framed as the segment holds them.
package tiering
