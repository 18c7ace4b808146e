// Package view presents tier 2 as a read-only tree: what every head (the
// HDFS head in hdfsgateway, later NFS and S3) serves. It lists, stats and
// opens; it has no call that writes, so a head built on it cannot change
// tier 2 whatever its clients send. List describes every entry (a
// scope's streams with one tier-2 Stat each, for their modification
// time); Names gives the names alone, a scope's from the catalog with no
// tier-2 call, for a head that only walks the tree (the S3 head's
// listings).
//
// # The tree
//
//	/                                    the root (a directory)
//	/<scope>                             a scope the controller knows
//	/<scope>/<stream>                    a stream the controller knows
//	/<scope>/<stream>/segment=<N>        a segment with chunks in tier 2
//	/<scope>/<stream>/segment=<N>/<first offset, 20 digits>.seq
//	                                     a complete chunk (a Hadoop SequenceFile)
//
// Paths are slash-separated; "" and "/" are the root, and a leading or
// trailing slash is ignored. Scope and stream names come from the
// controller (Catalog), so a deleted stream disappears at once even while
// its chunks wait to be removed, and nothing else in the tier-2 root (the
// containers' hand-over files, a chunk still being written under its
// "_tmp." name) is ever visible. A stream with no chunk yet is an empty
// directory.
//
// # Identities
//
// Every entry has an ID derived from its path alone (FNV-1a, 64 bits, top
// bit cleared, never below FirstID): the same path has the same ID across
// restarts and across heads, as HDFS clients expect of inode ids. The root
// is RootID, HDFS's own root inode id.
//
// # Ownership and modes
//
// Files are mode 0444 and directories 0555, owned by Owner and Group: the
// tree is read-only for everyone, which the heads also enforce by
// refusing every mutating call.
package view
