// Package zkstore is the ZooKeeper cluster.Store, and the session-bound
// coordination of cluster mode: ephemeral registration (Register), session
// loss (Expired) and leader election (Elect); together, a cluster.Session.
//
// # Znode layout
//
// A store lives under a root znode given to Open (say "/sluice"), created
// if missing. Each key is the znode at root + "/" + key, holding the
// key's value in a record envelope (package cluster, "Records": the bytes
// 0xC1 0x01, a CRC-32C over the key and the value, then the value as it
// is, so zkCli.sh shows it after six bytes). Get, List and watches check
// it: a mismatch is cluster.ErrCorrupt naming the key and the znode (a
// watch skips that state). Data without the envelope (written by an
// older version, or set by hand) is legacy: read as it is, unchecked, and
// given an envelope on its next write. Implicit parents are ordinary
// persistent znodes with empty data (an empty legacy value). Election
// candidates hold their id as plain data: they are not Store records.
//
//	/sluice                          root
//	/sluice/scopes                   key "scopes" (implicit parent, empty)
//	/sluice/scopes/s1                key "scopes/s1", data = value
//	/sluice/nodes/n1                 EPHEMERAL, Register("nodes/n1", ...)
//	/sluice/election/controller      the election Elect(ctx, "election/controller", id)
//	    _c_<guid>-n_0000000007       EPHEMERAL_SEQUENTIAL candidate, data = id
//	    _c_<guid>-n_0000000008       the next candidate, watching ...07
//
// # Versions
//
// A key's cluster.Version is its znode's Mzxid, the id of the transaction
// that last wrote it: unique across the ensemble and growing, so a
// re-created znode never gets an old version back. (The znode's own
// Stat.Version counts from 0 again on re-creation, so it cannot be the
// version.) Conditional writes read the Stat, compare the Mzxid and write
// with ZooKeeper's own check on Stat.Version; see CompareAndSet for the
// one narrow gap. Create writes a new znode's data in the same multi
// transaction that creates it, to learn its Mzxid.
//
// # Watches
//
// Watch sets a one-shot data (or exists) watch on the key's znode and a
// goroutine re-arms it each time it fires, reading the current state;
// events are coalesced into a one-event buffer, the latest state wins.
//
// # Sessions, registration and election
//
// The store has one ZooKeeper session. Register creates an ephemeral
// znode, which ZooKeeper deletes when the session ends (Close, or expiry
// when the process dies or is cut off). Elect adds an ephemeral
// sequential candidate under the election key; the candidate with the
// lowest sequence number leads, and each other candidate watches only
// its predecessor, so a departure wakes one candidate, not all. A leader
// cut off from ZooKeeper learns it has lost the session only when the
// session timeout has passed (Expired), while the ensemble may already
// have a new leader: whatever a leader decides must be fenced (the
// container epoch, docs/ARCHITECTURE.md).
package zkstore
