// Package latency records operation durations and reports their percentiles.
//
// It is shared by benchmarks (node append path, client bench, disk probe) so
// every benchmark computes percentiles the same way:
//
//   - A Recorder collects durations from any number of goroutines.
//   - Snapshot returns a Sorted copy; Sorted answers Percentile, Min, Max and Mean.
//
// Percentile uses the nearest-rank method: Percentile(p) is the smallest
// recorded duration d such that at least p percent of the recorded durations
// are <= d. p is a percentage in [0, 100] (50, 99, 99.9), not a fraction.
// With no samples every statistic is 0.
//
// RunPaced drives a latency benchmark's load on a schedule, waiting on a
// Pacer: a fine timer where time.Sleep would turn a sub-millisecond
// schedule into bursts. The recording itself does no timing and holds no
// goroutines.
package latency
