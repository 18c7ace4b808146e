// Package boltstore is the embedded cluster.Store: one bbolt file, for
// `sluice standalone` and for a controller that runs alone.
//
// # Layout
//
// The file holds one bucket, named "sluice.cluster.v2" (the suffix is the
// format version). Each key of the store is one bbolt key, the key's path
// as UTF-8 bytes ("scopes/s1/streams/st"); its value is a record envelope
// (package cluster, "Records": magic, version, CRC-32C over the key and
// the payload) whose payload is
//
//	+------------------------+----------------------------+
//	| version, 8 bytes, big- | data, the rest (may be     |
//	| endian uint64          | empty)                     |
//	+------------------------+----------------------------+
//
// so the checksum covers the key, its version and its data. Format v1
// (bucket "sluice.cluster.v1") stored the payload alone, without an
// envelope; Open moves a v1 file to v2 in one transaction (same keys,
// versions and sequence) and from then on a value without an envelope is
// damage. A v1 record has no checksum, so damage it took before that
// move cannot be detected.
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
// # Verified open
//
// bbolt trusts its file: a damaged page header panics it (the free list),
// makes its own check loop for billions of steps (an overflow count) or
// read past the mapped file (an element offset). So Open first opens an
// existing file read-only and checks, in this order: the bounds of every
// page header and element (pages.go: counts, overflow, element offsets
// packed as bbolt writes them, child and bucket page ids below the
// high-water mark); bbolt's tx.Check; that the file holds the one bucket
// and only records; every record's checksum. Any failure, and any panic
// on the way, is an error that wraps cluster.ErrCorrupt and names the
// file (and the key, for a record). A damaged newest meta page is bbolt's
// own business: it falls back to the other one, which loses the last
// committed transaction, as a torn write would. The cost is one read of
// the file at each start; metadata files are small.
//
// After Open, Get, List and the writes that depend on a record
// (Create, CompareAndSet, a conditional Delete) refuse a record that fails
// its check with cluster.ErrCorrupt; Put replaces it. A panic in bbolt
// during a call (a page damaged while the file is open) is recovered into
// the same error.
//
// # One process
//
// bbolt takes an exclusive flock on the file; a second Open waits
// lockTimeout (2 s) for it and then fails saying another process holds
// the file. The roles of the sluice binary also lock the directory the
// file is in (package internal/dirlock), which names the holder's pid.
//
// # Watches
//
// Watchers live in the process: bbolt has no change feed, and the file
// has one writer process. After a write transaction commits, its events
// go to the watchers of the keys it wrote, in commit order. Each watcher
// has a channel with a buffer of one that holds the latest event: a new
// event replaces one the watcher has not read yet, so a slow watcher never
// blocks a writer and always ends on the current state.
package boltstore
