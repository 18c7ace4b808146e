// Package sessiontest is an in-memory cluster.Session for tests of the
// cluster roles' decision logic without a ZooKeeper server, and the
// session conformance checks that it and the ZooKeeper store both pass
// (RunSessionTests).
//
// A Server is one coordination service: a bbolt store in the test's temp
// directory (package cluster/boltstore) holds the keys, and the Server
// holds what ZooKeeper keeps per session: which session owns each
// registration, and the candidates of each election. Open gives a
// Session on it. It starts no process and no goroutine of its own beyond
// the store's watches.
//
// What follows ZooKeeper (zkstore), for what the roles use:
//
//   - Register creates a key owned by the session; Expire and Close
//     delete the session's registrations (Close first ends its watches
//     and candidacies; Expire leaves its watches open).
//   - Elect: candidates lead in the order they entered; a candidacy ends
//     with Resign, Expire or Close of its session.
//   - Expire closes Expired once. Like a ZooKeeper store, which
//     reconnects with a new session, the Session stays usable after
//     Expire: later registrations and candidacies belong to it again,
//     and a second Expire ends them but closes nothing more.
//
// What it leaves out: candidates are not keys (List of the election key
// shows none), and no call blocks on a missing server.
package sessiontest
