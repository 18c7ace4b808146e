// Package bench is the engine of `sluice bench`: it loads a stream
// through the client library and measures throughput and latency
// percentiles. Run takes a Config (its fields follow the command's flags)
// and returns a Report, whose JSON form is the command's `-o json` output;
// the command only turns flags into a Config and prints the Report.
//
// A run (Mode):
//
//   - Write: Config.Writers client.Writers, each on its own client.Client,
//     write EventSize-byte events for Duration or Count events, at Rate
//     events/s over all writers (each writer paced at Writers/Rate apart
//     on a runtime timer, or with FinePacing on a latency.Pacer) or as
//     fast as their windows allow. Latency runs from the Write call
//     to the Writer settling the durable acknowledgement
//     (client.Ack.Settled); a goroutine per writer waits for them in
//     write order, and how late it saw each one is Report.AckWake.
//
//   - Read: the same writers fill the stream (untimed), then Readers
//     readers of a new reader group read exactly those events from where
//     the stream ended; the group balances first. Latency is each
//     ReadNext.
//
//   - E2E: readers of a new reader group (balanced first, at the tail)
//     read while the writers write. Each event starts with a StampSize
//     timestamp, big-endian nanoseconds since the run's start on the
//     monotonic clock, taken just before Write; latency runs from it to
//     ReadNext returning the event. The acknowledgement latency is
//     reported too.
//
//   - Scale: the auto-scaler's reaction (scale.go). A new
//     BY_RATE_IN_EVENTS_PER_SEC stream of one segment with Config.Target
//     is written at a quarter of the target for Warmup (past the
//     controller's cooldown), then at Rate; the node's measured rate of
//     the segment is polled (GetSegmentRates, every 10 ms) until it
//     crosses the target, and the writers' segment states
//     (client.WithStateFunc) and acknowledgements show the seal and the
//     first acknowledgement from a new segment; the stream's history
//     gives the new epoch's creation time. The ReactionReport splits the
//     time from the crossing to that acknowledgement into decide (to the
//     seal), publish (to the epoch) and serve.
//
// Read with Cold catches up from tier 2 with cold caches (cold.go): after
// the fill it waits until the controller reports the stream all in tier 2,
// writes a reference file as large beside the tier-2 directory (TierDir,
// or the controller's tier 2 if it is a local directory), drops the page
// cache of every file under that directory (posix_fadvise DONTNEED,
// diskprobe.DropCache) after a first cold read of the stream's own tier-2
// files (so that a virtual machine's first-read cost, where they carry
// one, is not left to the stream's read: ColdReport.StreamFilesFirstReadMBPerS),
// reads the reference file cold,
// then the stream,
// then the reference file again, then the stream's own tier-2 files one
// after another; Report.Cold sets the read's event MB/s against both
// reference reads together (Ratio) and against the files' read
// (FilesRatio). The node's own block cache is
// not dropped: start the server with a cache much smaller than the fill.
//
// Write with ScaleAt splits every segment of the stream in two during
// the run (a manual scale); with Scale runs, the ScaleReport sets the
// acknowledgement latency of the writes during the scale (from the first
// seal a writer sees to ScaleSettle after the first acknowledgement from
// a new segment) against the same run's other writes. Streams makes
// several streams (writer i on stream i mod Streams) and Clients lets
// the writers share clients, for many segments on one node; ServerPID
// and ServerPprof read the server's RSS (/proc) and Go heap
// (net/http/pprof, `sluice standalone --pprof-addr`) after the run.
//
// The stream is Config.Stream, or a new one in scope "bench" that is
// sealed and deleted at the end unless Keep; reader groups are always
// deleted. With DiskDir the disk's fsync'd bandwidth and write+fsync
// latency are probed there (node/diskprobe) before and after the run, and
// the report sets the run's numbers against them.
//
// Write and E2E keep every timed event's start and latency (timeline.go)
// for the Report's per-second rows (by the second of the Write call) and
// its windows (the first WindowSplit, 2 s, against the rest). AfterBurst
// first writes that many bytes through BurstWriters unpaced writers to a
// stream of its own, seals and deletes it, and starts the timed run at
// once (burst.go), so the node tiers and deletes while the run is timed;
// TierPoll polls the controller's GET /v1/nodes/tier meanwhile
// (Report.TierLag against TierMaxLag). With a Rate, Report.PacingLate is
// how late the writers' Write calls were against their schedule: the
// benchmark's own share; Report.HostCPU (hostcpu.go) is how the machine's
// CPUs spent the timed run, with the share a virtual machine's host took
// (steal), also per second. SlowLog (slowlog.go) gets a line for each
// timed event over SlowOver, with its send time on the run's clock and
// the wall clock, to find a stall in a server's or the disk's trace of
// the same moment. Summarize (summary.go) reads the output of
// scripts/bench-tail.sh and gives each measure's min, median and max over
// the rounds against its target.
//
// Percentiles in the Report are exact (nearest rank, internal/latency);
// the progress line, about once a second on Config.Progress, shows a
// "p99 so far" from a histogram of 16 logarithmic buckets per power of
// two (within 1/16, upper bounds).
//
// New measures come in as a Config field, checked in Validate, and the
// Report fields they fill.
package bench
