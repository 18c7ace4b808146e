// Package resume proves that a sequenced writer (client.WithSequenced)
// resumes exactly once across the death of its process: it runs `sluice
// standalone` (the real binary) and, as the writer, a child process (this
// test binary run again with SLUICE_RESUME_WRITER set) that reads an input
// log of numbered events from a file and writes them with WriteSeq under
// one writer id, confirming its progress in a state file after each Flush.
// The test kills the writer with SIGKILL at random points, splits and
// merges the stream while it writes, and starts it again each time,
// resending from its last confirmed point or from the start of its log.
// Afterwards the stream holds every input event exactly once, in per-key
// order.
//
// The kill points come from a seeded random source; the seed is logged
// (SLUICE_RESUME_SEED replays one). SLUICE_RESUME_KILLS sets the number of
// kills (default 4; 40 with SLUICE_SOAK=1, as `make soak` runs it).
//
// The package has tests only.
package resume
