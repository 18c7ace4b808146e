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
// and roll when the next record would take the file past Options.FileSize,
// or early, out of a file that grows, once a preallocated one is ready
// (see Preallocation).
// A new file appears whole: its header is written to a temporary name,
// fsynced, renamed into place and the directory fsynced; the previous file
// is fsynced before the first record goes to the new one.
// RemoveBefore removes files oldest first; with Options.Reclaim it moves
// them into the directory "trash" beside them, where a reclaim.Reclaimer
// frees their space a few MiB at a time (Open hands it whatever a crash
// left there, or empties it without one).
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
// synced is the log's durable LSN when the record's batch was formed: a
// record with synced >= X proves that record X had been fsynced before
// this one was written. (It is not the batch's first LSN minus one: with
// pipelined syncs the previous batch may still be syncing when the next
// is written, and a crash may keep the later batch and tear the earlier.)
//
// # Preallocation
//
// With Options.Preallocate, a background goroutine keeps the next file
// ready as ".spare", zero-filled to FileSize and fsynced; a roll writes the
// header into it, fdatasyncs and renames it into place. Appends that stay
// within a file's size on disk are made durable with fdatasync, which
// need not commit the filesystem's journal (the size does not change);
// appends that grow a file use fsync (in process: p50 ~330 us, p99 ~1.8 ms
// against ~100 / 280 us). The zeros after the last record are the log's
// clean end.
//
// So the log spends as little time as it can in a growing file:
//
//   - A spare is asked for when the log opens with a growing last file (a
//     new log's first file), at a roll unless the file just finished
//     filled in less than twice the disk time the last spare took (the log
//     writes faster than spares can be made: they would take disk time
//     from the appends and rarely be ready), and by the flusher as soon as
//     the write rate over the last 250 ms would let a file last that long
//     (a burst is over), without waiting for the next roll.
//   - While the file being written grows and a spare is ready, the next
//     append rolls early into the spare. The short file left behind was
//     fsynced whole before the next one started, like any file that ended
//     because the next record did not fit: recovery reads it as such
//     (rule 1 at its end, rule 2 against damage in it).
//   - The spare is zero-filled in 128 KiB pieces, each written back to the
//     disk (sync_file_range: no journal commit, unlike fdatasync of the
//     growing spare) before the next, and fsynced once at the end. While
//     any log of the process writes, it rests three times as long as each
//     piece took (or longer, to spread over half a file's fill time), as
//     long as each piece took while its own log is urgent (it writes into
//     a growing file, and wrote within the last 250 ms); while no log
//     writes, it goes on at once.
//   - One log of the process fills a spare at a time (spareTurns): an
//     urgent log takes the next turn before those that asked earlier, and
//     a log that is not urgent steps aside between its pieces while an
//     urgent one waits. After a burst over every container, or when a
//     node starts, all its logs ask at once; the one the load goes to must
//     not wait for the others' spares while it fsyncs every batch.
//
// # Recovery
//
// Open replays records from a given LSN, from: the one after the
// container's last checkpoint. The caller vouches that every record before
// from had been made durable (a checkpoint is written only once the LSN it
// covers is), and that is one of the two proofs recovery uses; the other
// is the synced field of later records.
//
// Open works in two steps. First it scans: it reads every file it replays,
// in order, replaying the valid records (which changes no file) up to the
// first record that does not decode (short, bad length, bad type, bad
// checksum, unexpected LSN), and decides what the bytes from there to the
// file's last non-zero byte are. Only when the whole log is judged does it
// change anything. The rules, in order:
//
//  1. Nothing, or only zeros, after the records: the end of that file (the
//     unwritten rest of a preallocated file is zeros), in any file. The
//     next file must start at the LSN that follows.
//  2. Damage in a file that is not the last: refused. A file is fsynced
//     whole before the next one is started, so no interrupted write can
//     leave damage in it, and nothing the log writes lands after a file's
//     last record either.
//  3. Damage where the record with an LSN below from was expected:
//     refused. That record was durable; this is lost acknowledged data. A
//     container's clean stop checkpoints every record, so after a clean
//     stop any damage to a record is refused by this rule.
//  4. Damage in the last file followed, anywhere before the last non-zero
//     byte, by a valid record whose synced field is at least the damaged
//     record's LSN: refused. That record was written after the damaged one
//     had been fsynced.
//  5. Otherwise, a torn tail: what a crash in the middle of a write leaves
//     (the pages of the batches being written and synced may reach the
//     disk in any order, some not at all). None of it had been
//     acknowledged, since an append is acknowledged only after the fsync
//     that covers it, and no record written after an acknowledgement is
//     there to say otherwise. The tail is zeroed in place, from the damage
//     to the file's last non-zero byte, and the file fsynced; Repaired
//     reports it. No copy is made and no block is added, so recovery needs
//     no free space: a node whose disk filled up starts again once there
//     is room for its next appends. Bytes after the last record of the
//     last file, where the next write would have gone, hold nothing
//     acknowledged: they are a torn tail too, after a clean stop as well.
//  6. The log ends (cleanly, rule 1) before the LSN from-1 the caller
//     has: refused, naming the end.
//
// Before it takes appends, Open fsyncs the last file: the records it
// replayed may have been written by a process that stopped before their
// fsync (read back from the page cache), and from now on they count as
// durable, which the next records' synced field records.
//
// A refusal is a *CorruptError, which matches ErrCorrupt with errors.Is.
// It names the file and the byte offset where the damage starts, says
// what is there (the record header's fields, its first bytes and where
// the file's non-zero bytes end) and which rule refused it; every file is
// left byte for byte as it was, so an operator can examine it. Missing
// files in the middle of the sequence, bad headers, headers that do not
// match their names and LSN gaps between files are refused the same way.
// Of the files before the one that holds from, only the headers are read
// and judged.
//
// What no rule can tell: damage to the newest acknowledged records after a
// crash, before a later record or checkpoint covers them, looks exactly
// like a torn tail and is repaired as one. Guarding those needs a second
// copy of the log (replication), not a better rule.
//
// # Reads
//
// ReadAt reads one durable record back by address and verifies its
// checksum; containers use it to serve catch-up reads of data no longer
// cached.
package wal
