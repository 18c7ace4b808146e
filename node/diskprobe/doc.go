// Package diskprobe measures the limits of the disk under a directory, so that
// a benchmark can compare what Sluice achieves with what the same disk allowed
// in the same run (shared machines are noisy; a limit measured last week says
// little about today).
//
// Two limits matter for the node's append path (docs/BENCHMARKS.md):
//
//   - SequentialSync: bandwidth of large sequential writes, each followed by an
//     fsync (1 MiB blocks). This bounds the throughput of a group-committing
//     WAL.
//   - SyncLatency: the latency of one small append (4 KiB) followed by an
//     fsync, repeated. This bounds the latency of one acknowledged append.
//
// A latency benchmark at a steady load is compared with a third:
//
//   - GroupCommit: an ideal write-ahead log at the benchmark's load. Events
//     fall due on a fixed schedule; one loop writes all that are due as one
//     write into a preallocated file and fdatasyncs it. Every event's
//     latency counts, so a stalled sync shows as all the events it delays
//     (SyncLatency, one sync at a time, shows it once). It is what the disk
//     leaves a log that writes one file this way; what a benchmark measures
//     above it is the log's own cost (its threads, copies, network).
//
// A Canary (StartCanary) times one 4 KiB write+fdatasync every interval
// while a benchmark runs, so that each second of the run can be set
// against what the disk did in that same second. StallGrid tells whether
// its stalls ended on one phase of a fixed period of the wall clock: the
// mark of a virtual disk throttled by its host, which holds every request
// while its budget is spent and releases them at the next refill.
//
// Tier 2's catch-up reads are compared with a fourth limit:
//
//   - SequentialRead: bandwidth of large sequential reads (1 MiB) of a file
//     whose page cache was dropped first (DropCache: posix_fadvise
//     DONTNEED on that file alone), the disk's cold read speed.
//
// SequentialSync and SyncLatency append to a fresh file that grows as it is
// written, as a log's first file does, so every fsync also commits the
// file's new size. Files are created in the given directory under a name
// starting with ".diskprobe-" and removed before the function returns,
// whether it succeeds or fails.
//
// The package does no timing assertions; it reports what it measured. The
// benchmarks in this package (BenchmarkDiskSequentialSync,
// BenchmarkDiskSyncLatency, BenchmarkDiskGroupCommit10MBps) print the limits as benchmark metrics; set
// SLUICE_BENCH_DIR to measure a disk other than the one holding TMPDIR (see
// package diskprobetest).
package diskprobe
