// Package tier2test holds what tests of tier 2 and of its users share:
//
//   - RunStorageTests, the conformance suite every tier2.Storage backend
//     passes (tier2/fs on a temporary directory, tier2/hdfs on a real
//     HDFS, the in-memory backend here);
//   - NewMem, an in-memory tier2.Storage, deterministic, for tests of the
//     tiering and the read-only heads;
//   - Faulty, a wrapper around any tier2.Storage that fails or holds the
//     operations a test chooses, and counts them;
//   - Put, a file of tier 2 written whole; WriteChunks, SequenceFile
//     chunks of given events laid out as the node's storage writer does;
//     WriteLetterChunk, one chunk of filler events at a given path.
//
// It is imported by tests only.
package tier2test
