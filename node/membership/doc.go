// Package membership is a node's ZooKeeper driver in cluster mode: it
// registers the node, follows the container assignment the leader
// controller publishes, and makes the node host exactly the containers the
// assignment gives it, under their epochs.
//
// # Znodes
//
// Keys are relative to the store's root (zkstore.Open, e.g. "/sluice"):
//
//	cluster/nodes/<id>     EPHEMERAL, this node's registration: JSON
//	                       {"id": ..., "addr": "host:port", "started": RFC 3339}
//	cluster/assignment     the layout.Map JSON (package cluster/layout,
//	                       which documents every key), written by the leader
//	                       controller; nodes only read it
//
// # Following the assignment
//
// Start registers the node (retrying while a registration of an earlier
// session of the same id still exists: it goes when that session expires),
// watches cluster/assignment, reads it and reconciles; then it reconciles
// again on every change. Reconcile is the deterministic core: from the
// containers the node hosts (with their epochs and fenced flags) and the map
// it returns the actions, in this order:
//
//   - Fence every hosted container the map gives to another node or under
//     another epoch: its changes fail with protocol.ErrWrongHost at once,
//     before anything slow happens.
//   - Unhost those, and those already fenced (closing them; requests for
//     them keep getting ErrWrongHost while they close, so clients ask the
//     controller for the new owner rather than wait for this node).
//   - Host every container the map gives this node that it does not serve
//     under the map's epoch (the container refuses to open if its directory
//     records a higher epoch; see package node/container).
//
// A missing map, or one that cannot be read (a node started with another
// --containers than the cluster), gives the node nothing: it serves no
// container rather than a wrong one. Failed actions are retried with
// backoff until the map changes or they succeed.
//
// # Sessions
//
// The Member uses its session through cluster.Session (a zkstore.Store in
// production, an in-memory session of package cluster/sessiontest in
// tests), kept by the loop of package cluster/session. When the session
// expires (cluster.Session.Expired), the registration is gone and the
// leader may consider the node dead: the node fences every container at
// once, so it acknowledges no more changes. Then it opens a new session
// (Config.Reopen, with exponential backoff and jitter between failed
// attempts), registers again and reconciles:
// since the assignment keeps a dead node's containers with it, it reopens
// the same containers under the same epochs (replaying their logs) and
// serves them again. A node process restarted on its data directory does
// the same from Start.
//
// Close stops following, fences every container (a node without a session
// must not take writes) and closes the session, which deletes the
// registration. It does not close the node.
package membership
