// Package wal is a segment container's write-ahead log: the node's tier 1.
//
// The log is a directory of numbered files. Every change to a container
// (an append block, a seal, a merge, an attribute update...) is one record;
// a record is acknowledged only after an fsync that covers it returns.
//
// # Group commit
//
// Append assigns a record its LSN (log sequence number, consecutive from 1)
// and its address at once, under the log's lock, so the log's order is the
// order of Append calls. One flusher goroutine takes every record queued
// so far as one batch, writes it (one write call per 1 MiB slab) and starts
// the batch's sync (fdatasync, or fsync when the file grew). Syncs are
// pipelined: the flusher may write and start the next batch's sync while
// the previous sync still runs (at most two in flight) once that batch
// holds at least 32 KiB (a sync beside another is slower than one alone,
// so at light load a small batch waits for the running sync instead);
// while the slots are busy, new records gather in one pending batch that
// one later sync covers. A batch completes, in order, only when its own sync and every
// earlier batch's have returned; only then are its records acknowledged.
// Write and sync errors are sticky: after one, that batch and every later
// one fail, every Append returns ErrFailed and the container stops; the log
// never carries on as if a failed write had worked.
//
// # Files
//
// Files are named by a 16-digit hex sequence number, "0000000000000001.wal",
// and roll when the next record would take the file past Options.FileSize.
// A new file appears whole: its header is written to a temporary name,
// fsynced, renamed into place and the directory fsynced; the previous file
// is fsynced before the first record goes to the new one.
//
// File header (36 bytes, integers little-endian):
//
//	0        8        12       16               24               32       36
//	+--------+--------+--------+----------------+----------------+--------+
//	| magic  |version | zero   | file sequence  | first LSN      | CRC32C |
//	|SLUICEWL| u32 =1 | u32    | u64            | u64            | of 0:32|
//	+--------+--------+--------+----------------+----------------+--------+
//
// "first LSN" is the LSN of the file's first record, or of the next record
// to be written when the file is empty.
//
// Record (25-byte header, then the payload; integers little-endian):
//
//	0        4        8      9          17         25
//	+--------+--------+------+----------+----------+----------------+
//	| CRC32C | length | type | LSN      | synced   | payload        |
//	| u32    | u32    | u8   | u64      | u64      | (length bytes) |
//	+--------+--------+------+----------+----------+----------------+
//	         |<------------- covered by the CRC (Castagnoli) ------>|
//
// length is at most MaxPayloadSize. Type 0 is never written, so zeroed
// bytes never decode as a record. The LSN makes every record's place in the
// log checkable: a record whose LSN is not the one expected is damage.
// synced is the highest LSN that was durable before the record's batch
// was written (the batch's first LSN minus one): a record with synced >= X
// proves that record X had been fsynced, that is, acknowledged.
//
// # Preallocation
//
// With Options.Preallocate, a background goroutine keeps the next file
// ready as ".spare", zero-filled to FileSize and fsynced; a roll writes the
// header into it, fdatasyncs and renames it into place. Appends that stay
// within a file's size on disk are made durable with fdatasync, which
// need not commit the filesystem's journal (the size does not change);
// appends that grow a file use fsync. The zeros after the last record are
// the log's clean end.
//
// # Recovery
//
// Open reads the files in order and replays records from a given LSN (the
// one after the container's last checkpoint). At the first record that
// does not decode (short, bad length, bad checksum, unexpected LSN):
//
//   - if only zeros follow, it is the end of the log (the unwritten rest of
//     a preallocated file), in any file;
//   - in the last file, if no valid record after the damage proves (by its
//     synced field) that the damaged record had been durable, it is a torn
//     tail left by a crash in the middle of a write: the pages of the last,
//     unsynced batch may have reached the disk in any order. The file is
//     copied to "<name>.broken" and zeroed from where the damage starts.
//     Nothing acked is lost: an append is acknowledged only after the fsync
//     that covers it, and a torn batch had not been fsynced;
//   - anywhere else, or if a later record proves the damaged one durable,
//     Open refuses with ErrCorrupt, naming the file and offset: that is
//     lost acknowledged data, not an interrupted write, and only an
//     operator may decide what to do.
//
// Missing files in the middle of the sequence, headers that do not match
// their names and LSN gaps between files are also ErrCorrupt.
//
// # Reads
//
// ReadAt reads one durable record back by address and verifies its
// checksum; containers use it to serve catch-up reads of data no longer
// cached.
package wal
