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
// while the previous write+fsync ran, writes them with one write call per
// file and covers them with one fsync. Write and fsync errors are sticky:
// after one, every Append returns ErrFailed and the container stops; the log
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
// Record (17-byte header, then the payload; integers little-endian):
//
//	0        4        8      9                17
//	+--------+--------+------+----------------+--------------------+
//	| CRC32C | length | type | LSN            | payload            |
//	| u32    | u32    | u8   | u64            | (length bytes)     |
//	+--------+--------+------+----------------+--------------------+
//	         |<------------ covered by the CRC (Castagnoli) ------>|
//
// length is at most MaxPayloadSize. Type 0 is never written, so zeroed
// bytes never decode as a record. The LSN makes every record's place in the
// log checkable: a record whose LSN is not the one expected is damage.
//
// # Recovery
//
// Open reads the files in order and replays records from a given LSN (the
// one after the container's last checkpoint). At the first record that
// does not decode (short, bad length, bad checksum, unexpected LSN):
//
//   - in the last file, if no valid record follows the damage, it is a torn
//     tail left by a crash in the middle of a write: the file is copied to
//     "<name>.broken" and truncated where the damage starts. Nothing acked
//     is lost, because an append is acknowledged only after its fsync, and
//     a torn write is by definition not yet fsynced.
//   - anywhere else, or if valid records follow the damage, Open refuses
//     with ErrCorrupt, naming the file and offset: that is lost data, not an
//     interrupted write, and only an operator may decide what to do.
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
