// Package assignment decides which node serves which segment container: the
// deterministic core of the leader controller's container assignment. It
// takes the current map (layout.Map, package cluster/layout, which also
// documents its format and key) and the live nodes and returns the next
// map; the leader's driver reads nodes from ZooKeeper, calls Plan, and
// publishes the result with a compare-and-set.
//
// # Rules
//
//   - The set of containers is fixed (every node agrees on its size).
//   - An unassigned container goes to the live node that has the fewest
//     containers (ties: the smallest node id), so a new cluster spreads them
//     evenly.
//   - An assigned container stays with its node, alive or not: its
//     write-ahead log lives on that node's disk, so moving it would drop
//     acknowledged data. A dead node's containers are reported unavailable
//     (Unavailable) until the node returns with its data directory.
//   - Moving a container between live nodes (to balance, or away from a
//     node whose disk is lost) needs a hand-over through tier 2: the old
//     owner tiers everything and checkpoints, the new one starts from that
//     checkpoint. Until hand-over exists, Balance only reports the moves a
//     balanced cluster would make; Plan applies none.
//   - Every change of a container's owner increments its epoch. A node
//     serves a container only under the epoch the map gives it, writes that
//     epoch into the container's directory before replaying its log, and
//     refuses to open a container whose directory holds a higher epoch:
//     two nodes never write one container.
package assignment
