// Package cluster is Sluice's coordination layer: the metadata store that
// the controller keeps scopes, streams, epochs, transactions and workflows
// in, and (in ZooKeeper mode) the registration, heartbeats and leader
// election of controllers and nodes.
//
// Store is one narrow interface with two backends, bbolt (embedded, the
// default of `sluice standalone`) and ZooKeeper (clusters); both pass the
// same conformance suite (package clustertest).
//
// Session is what the cluster roles use of a coordination session: the
// Store plus ephemeral registration, leader election and expiry. The
// ZooKeeper store implements it; package cluster/sessiontest has one in
// memory for tests, and package cluster/session keeps a role on a
// session across expiries.
//
// # Records
//
// Both backends store every value in one envelope, written by
// EncodeRecord and checked by DecodeRecord (this package is the one place
// the format lives):
//
//	+-------+---------+-------------------------+------------------------+
//	| magic | version | CRC-32C, 4 bytes,       | payload (may be empty) |
//	| 0xC1  | 0x01    | big-endian              |                        |
//	+-------+---------+-------------------------+------------------------+
//	  byte 0  byte 1    bytes 2-5                 bytes 6-
//
// The CRC-32C (Castagnoli) covers the key, a zero byte, the version byte
// and the payload, so a record read under another key than it was written
// for (a damaged key) fails like a damaged byte does. The payload is the
// value (ZooKeeper) or the version and the value (bbolt; see its doc). A
// record that fails its check is an error that wraps ErrCorrupt and names
// the key; nothing repairs it silently.
//
// Legacy records. Values written before records had an envelope are read
// as they are, by the backend that allows them (ZooKeeper: an older
// version's data or a value set with zkCli.sh), and get an envelope on
// their next write. They are told apart by the first byte: 0xC1 never
// begins UTF-8 text, JSON or a MessagePack value, so no legacy value
// begins with it. A legacy record has no checksum, so damage to it cannot
// be detected; the one damage that could turn a checked record into a
// "legacy" one, a changed magic byte, is caught (the rest still carries
// version 1 and a matching checksum). The bbolt backend converts a whole
// legacy file at open and accepts no legacy record after that.
package cluster
