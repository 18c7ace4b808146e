// Package headbench measures the HDFS head's sequential read throughput
// with Hadoop's own client, against limits measured in the same run. It
// holds only a benchmark (BenchmarkHeadRead, `make bench-head`); nothing
// here is imported.
//
// One run writes chunks (SequenceFiles, tier2/seqfile) into a tier2/fs
// directory, serves them with the head's three servers (namenode,
// datanode, webhdfs over tier2/view) on 127.0.0.1, copies the same files
// into a MiniDFSCluster (tier2/hadooptest), and then one JVM of the
// harness (SeqRead) reads every file whole through FileSystem.open, round
// after round, over hdfs:// from the head, webhdfs:// from the head,
// file:// (the disk through the same client) and hdfs:// from the
// MiniDFSCluster, in turns, after one untimed warm-up round. Go reads the
// same files from the disk before and after the JVM. The page cache is
// warm: every file was just written or read.
//
// Reported: each source's median MB/s (10^6 bytes/s) and the ratios of
// the head to the disk and to the MiniDFSCluster; the log has min, median
// and max of every source and the machine's load. Nothing is asserted
// about time; the bytes each source read are checked.
package headbench
