// Package tier2 owns Sluice's long-term storage of segment data: the
// chunk storage interface (Storage) that every backend implements, the
// layout of chunks under a storage root, and the names of the backends
// (tier2/fs for a local or NFS-mounted directory, tier2/hdfs for HDFS).
// The chunks' byte format is Hadoop's SequenceFile (package
// tier2/seqfile); package tier2/hive makes Hive read a stream's chunks in
// place.
//
// # Layout
//
// Paths given to a Storage are relative to its root, slash-separated,
// with no ".", ".." or empty elements. A segment's chunks live in
//
//	<scope>/<stream>/segment=<segment number>/<first offset, 20 digits>.seq
//
// with no '#' or ':' anywhere (Hadoop parses paths as URIs), and
// "segment=N" so that Hive treats segments as partitions. A chunk holds
// the whole events from its first offset up to the next chunk's first
// offset. While it is written it is named "_tmp.<first offset>.seq"
// (Hadoop skips names starting with '_' or '.'); it is synced, closed and
// renamed into place, so a chunk is visible whole or not at all.
//
// Sluice's own files live under "_sluice/" (Hadoop and Hive skip it):
//
//	_sluice/handover/container-<id>/<epoch, 20 digits>.bin
//	_sluice/recovery/container-<id>/<epoch, 20 digits>-<seq, 20 digits>.bin
//	_sluice/trash/<removed file or directory>
//
// a container's state left by its owner for the next (HandoverPath) and
// its recovery records, from which a node that lost its disk rebuilds it
// (RecoveryPath); both written whole under a "_tmp." name, then renamed.
// The trash is a local tier 2's only (tier2/fs with a node's reclaimer):
// what the node removed, renamed there at once and freed a MiB at a time
// in the background.
//
// Chunks are immutable once renamed into place; backends create files
// readable by everyone (0444) and directories writable only by the
// service (0755).
package tier2
