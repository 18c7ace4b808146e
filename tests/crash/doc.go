// Package crash holds the node's crash tests: the real `sluice node`
// binary serves its containers under concurrent pipelined appends from
// several writers and is killed with SIGKILL at random moments, cycle after
// cycle. After every restart the tests read every segment back and check
// the write guarantees: every acknowledged append is present, in
// order per writer, with no duplicate, although writers resend their
// unacknowledged appends with the same event numbers.
//
// The node runs with small log files (256 KiB, preallocated) and a
// checkpoint every 64 KiB of log, so kills land in the middle of rolls,
// spare preparation and checkpoints as well as appends.
//
// TestCrashKill9UnderLoad runs the node without tier 2, so its log keeps
// everything. TestCrashKill9WhileTiering adds tier 2 (a directory) with
// tiering as eager as it goes (a segment is tiered once 8 KiB wait or its
// oldest byte is 100 ms old, chunks of at most 16 KiB), so kills also land
// in chunk writes, renames, chunk records and log trimming, and reads come
// back from tier 2 once the log has let go. After every restart it waits,
// polling the node's GetSegmentInfo and GetTierStats, until every byte is
// tiered (which takes a pass, and so the reconcile of tier 2 with the
// container's records), then checks tier 2 against the segments as the
// node serves them:
//
//   - no temporary ("_tmp.") chunk survives, and no other stray file;
//   - every chunk decodes as a SequenceFile whose keys are the events'
//     offsets, consecutive (each next key is the previous key plus 4 plus
//     the previous event's length), starting at the offset in its name;
//   - every event equals the segment's bytes at its offset;
//   - the chunks cover [start offset, tiered offset) once, with no gap and
//     no overlap, and the tiered offset is the segment's length;
//   - no container reports a tier-2 error.
//
// At the end it requires that some chunk was checked and that some
// container's first log file was gone at a check: tiering really let the
// log be trimmed.
//
// `make test` runs 20 cycles of the first and 10 of the second; `make
// soak` (SLUICE_SOAK=1) runs 300 of each.
// The package has no non-test code.
package crash
