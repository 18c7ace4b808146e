// Package node is Sluice's segment store, the data plane: a node hosts
// segment containers, each a shard of segments with its own write-ahead
// log, and serves them over the wire protocol.
//
// Sub-packages:
//
//   - wal: a container's write-ahead log (framing, group commit, recovery)
//   - container: segments, appends with writer idempotence, reads, seals,
//     merges, attributes, checkpoints
//   - cache: the node-wide bounded block cache
//   - server: the TCP listener speaking package protocol
//   - vfs: the filesystem under the log, and vfstest to inject faults
//   - diskprobe: this disk's own limits, for benchmarks
//
// A segment belongs to container protocol.ContainerOf(name, containers);
// Node routes each request to it and answers protocol.ErrWrongHost for a
// container it does not host.
package node
