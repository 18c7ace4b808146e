// Package cluster is Sluice's coordination layer: the metadata store that
// the controller keeps scopes, streams, epochs, transactions and workflows
// in, and (in ZooKeeper mode) the registration, heartbeats and leader
// election of controllers and nodes.
//
// Store is one narrow interface with two backends, bbolt (embedded, the
// default of `sluice standalone`) and ZooKeeper (clusters); both pass the
// same conformance suite (package clustertest).
package cluster
