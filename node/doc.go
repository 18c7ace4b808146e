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
//   - membership: cluster mode, the node's ZooKeeper driver: it registers
//     the node and hosts exactly the containers the published assignment
//     gives it, under their epochs
//   - rates: each segment's append rates for auto-scaling, averaged over
//     four windows (Config.Rates; 2/5/10/20 min by default)
//
// Rates: a container counts each appended block's events and bytes in the
// segment's rates.Meter under the lock the append already holds (no
// allocation, no other lock; folded into the averages at most once per
// tick), and GetSegmentRates (node/server) reads them. A Meter is 64
// bytes per segment, kept only in memory: a restart or a container move
// starts it again, and the controller, which decides when to scale
// (package controller, "Auto-scaling"), waits for a full longest window
// before it calls a segment cold.
//
// Memory: the node's memory is its cache (Config.CacheSize, counted by
// the memory each block keeps alive) and a margin: the catch-up part pool
// keeps idle at most an eighth of the cache, or two buffers (memory.go),
// and the program running the node sets the Go memory limit to the cache
// plus that margin (embed/noderole, docs/ARCHITECTURE.md "Node memory").
//
// Open locks the node's data directory (file LOCK, package
// internal/dirlock) for its process until Close: a second node on the
// same directory is refused with an error naming the holder's pid.
//
// A segment belongs to container protocol.ContainerOf(name, containers);
// Node routes each request to it and answers protocol.ErrWrongHost for a
// container it does not host (or hosts fenced, or is closing: it has
// given it up, so the client asks the controller for the new owner), and
// protocol.ErrContainerUnavailable while one is opening (it is served
// here once open).
//
// Standalone, a node hosts every container under epoch 0. In cluster mode
// it hosts what the assignment map gives it (Host, Unhost); each container
// directory holds the epoch it was last opened under (file "epoch"), a
// higher one on disk is refused, and a container the map moves away (or
// every container, when the ZooKeeper session is lost) is fenced at once:
// its changes fail with ErrWrongHost, so two nodes never write one
// container.
//
// Losing a disk (restore.go): with tier 2, a container whose directory
// holds no state of its own (container.HasLocalState: the node's disk
// was lost) is rebuilt, before it is served, from the newest of its
// recovery records and hand-overs in tier 2 (tier2.RecoveryPath,
// tier2.HandoverPath; by epoch, then sequence, a hand-over last in its
// epoch): container.ImportRecovery or ImportHandover. A directory with
// state is never replaced; a record of a later epoch is refused
// (container.ErrStaleEpoch); a damaged newest record is an error naming
// it; a failure to list tier 2 keeps the container closed rather than
// open empty; nothing in tier 2 opens it empty.
package node
