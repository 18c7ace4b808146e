// Package leader is a controller's ZooKeeper driver in cluster mode: it
// registers the controller, takes part in the controllers' leader election
// and, while this controller leads, runs the leader's loops: the container
// assignment and the resumption of unfinished workflows.
//
// # Znodes
//
// Keys are relative to the store's root (zkstore.Open, e.g. "/sluice"):
//
//	cluster/controllers/<id>   EPHEMERAL, this controller's registration:
//	                           JSON {"id": ..., "addr": "host:port"} (the REST API)
//	cluster/election           the election (cluster.Session.Elect); each
//	                           candidate's data is its controller id
//	cluster/nodes/<id>         EPHEMERAL, a live node (package node/membership);
//	                           read here
//	cluster/assignment         the layout.Map JSON (package cluster/layout,
//	                           which documents every key); written only by the
//	                           leader, with a compare-and-set (Create when absent)
//
// # Leading
//
// Every controller serves the REST API (the Service's compare-and-sets make
// concurrent controllers safe); only the leader runs these loops, each
// under a context that ends the moment leadership is lost or the session
// expires:
//
//   - Assignment (level-based, not edge-based): list the live nodes, read
//     the published map (layout.New(n) if there is none), compute the
//     next one with Decide (assignment.Plan: unassigned containers to the
//     least loaded live node; assigned containers stay, also with a dead
//     node) and publish it if it changed. It runs when leadership starts,
//     every Config.ReconcileInterval, and when the published map changes.
//     The store's watches report no child changes, so a new node is picked
//     up by the next tick (1 s by default); a node that dies changes
//     nothing (its containers stay with it and are unavailable until it
//     returns).
//   - Resume: Service.Resume at once (a new leader completes the workflows
//     the previous one left half done), then every Config.ResumeInterval.
//   - Retention: if Config.Service implements Retainer (controller.Service
//     does), its RetentionStep every RetentionInterval (one minute by
//     default): streams' retention policies recorded and enforced by
//     truncation (see package controller).
//   - Auto-scaling: if Config.Service implements AutoScaler
//     (controller.Service does), its AutoScaleStep every
//     AutoScaleInterval: streams with a BY_RATE_* policy split and merged
//     by their segments' measured rates (see package controller).
//
// The Service's transaction sweeper (lease expiry) runs in every
// controller, leader or not: its aborts are compare-and-sets of the
// transaction record, so two sweepers cannot both act on one transaction.
//
// A published map whose size differs from Config.Containers is never
// overwritten: it belongs to a cluster configured with another container
// count, and replacing it would hand containers (and their logs) to other
// nodes. The leader logs the mismatch at every attempt instead. Every
// controller and every node of a cluster must use the same --containers.
//
// # Sessions
//
// The Member uses its session through cluster.Session (a zkstore.Store in
// production, an in-memory session of package cluster/sessiontest in
// tests), kept by the loop of package cluster/session. When the session
// expires (cluster.Session.Expired) the registration and the candidacy are
// gone: the loops stop at once, a new session is opened (Config.Reopen,
// with exponential backoff and jitter between failed attempts), and the
// controller registers (waiting out a registration of an earlier session)
// and stands for election again. Close stops the loops, resigns and closes
// the session.
package leader
