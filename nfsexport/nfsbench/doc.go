// Package nfsbench measures sequential reads through the NFS head
// (nfsexport) with Debian's libnfs client, nfs-cat, against reading the
// same files from the disk with cat, in the same run: BenchmarkNFSRead,
// run by `make bench-nfs` (docs/BENCHMARKS.md, "NFS head"). It holds no
// production code.
package nfsbench
