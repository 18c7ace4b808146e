// Package s3bench measures the S3 head's sequential read throughput with
// a real S3 client, against the disk in the same run. It holds only a
// benchmark (BenchmarkS3Read, `make bench-s3`); nothing here is imported.
//
// One run writes chunks (SequenceFiles, tier2/seqfile) into a tier2/fs
// directory and serves them with s3gateway's handler (signed requests
// only) on 127.0.0.1. One Python process of the S3 clients' environment
// (scripts/s3-deps.sh) then reads every file whole, round after round,
// in turns: through boto3's get_object (1 MiB reads of the streaming
// body) and straight from the disk (1 MiB reads), after one untimed
// warm-up round. Go reads the files through the head with net/http
// (signed GETs) and from the disk too, the same number of rounds. The
// page cache is warm: every file was just written or read.
//
// Reported: each source's median MB/s (10^6 bytes/s) and the ratios of
// the head to the disk read by the same language; the log has min,
// median and max of every source and the machine's load. Nothing is
// asserted about time; every source's bytes are checked (SHA-256 of each
// file, every round).
package s3bench
