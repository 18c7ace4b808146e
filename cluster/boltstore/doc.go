// Package boltstore is the embedded cluster.Store: one bbolt file, for
// `sluice standalone` and for a controller that runs alone.
//
// # Layout
//
// The file holds one bucket, named "sluice.cluster.v1" (the suffix is the
// format version). Each key of the store is one bbolt key, the key's path
// as UTF-8 bytes ("scopes/s1/streams/st"); its value is
//
//	+------------------------+----------------------------+
//	| version, 8 bytes, big- | data, the rest (may be     |
//	| endian uint64          | empty)                     |
//	+------------------------+----------------------------+
//
// Versions come from the bucket's sequence, a counter that bbolt keeps in
// the file and that only grows: every write (Create, Put, CompareAndSet,
// the implicit creation of a parent, and Delete, which consumes one
// number without storing it) takes the next number. So a key deleted and
// created again never gets a version it had before, and a version is
// never 0.
//
// The tree is implicit: "a/b" is a child of "a" because of its name. Every
// ancestor of a stored key is stored (writes create missing parents with
// empty data, Delete refuses a key with children), so the children of "a"
// are the bbolt keys that start with "a/" and have no further "/". List
// scans that prefix in bbolt's byte order (which is the order of child
// names, as they share the prefix) and seeks past each child's subtree,
// so it reads the children, not the descendants.
//
// # Watches
//
// Watchers live in the process: bbolt has no change feed, and the file
// has one writer process (bbolt takes an exclusive lock on it). After a
// write transaction commits, its events go to the watchers of the keys it
// wrote, in commit order. Each watcher has a channel with a buffer of one
// that holds the latest event: a new event replaces one the watcher has
// not read yet, so a slow watcher never blocks a writer and always ends
// on the current state.
package boltstore
