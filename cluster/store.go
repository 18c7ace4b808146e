package cluster

import (
	"context"
	"errors"
)

// Errors of a Store. Match them with errors.Is.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("cluster: key not found")
	// ErrExists: Create found the key already there.
	ErrExists = errors.New("cluster: key exists")
	// ErrVersionMismatch: a compare-and-set or conditional delete found
	// another version than expected.
	ErrVersionMismatch = errors.New("cluster: version mismatch")
	// ErrHasChildren: Delete of a key that has children.
	ErrHasChildren = errors.New("cluster: key has children")
	// ErrInvalidKey: a key that is empty, starts or ends with "/", or has
	// an empty, "." or ".." element.
	ErrInvalidKey = errors.New("cluster: invalid key")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("cluster: store closed")
	// ErrCorrupt: a stored record, or the store's file, is damaged: a
	// record's checksum does not match (DecodeRecord), or a backend found
	// its own structures inconsistent. The error names the key or file.
	// Nothing is repaired silently: see docs/OPERATIONS.md.
	ErrCorrupt = errors.New("cluster: corrupt metadata")
)

// Version is a key's version: it changes on every write of the key. A key
// that does not exist has no version; a key deleted and created again
// never gets a version it had before, so a CompareAndSet or Delete with a
// version from before the deletion fails with ErrVersionMismatch. Versions
// are positive; compare them for equality only (backends differ in how
// they grow).
type Version int64

// AnyVersion makes Delete unconditional. CompareAndSet never matches it.
const AnyVersion Version = -1

// KV is a key with its value and version.
type KV struct {
	Key     string
	Value   []byte
	Version Version
}

// Event tells a watcher that a key changed: its new value and version, or
// Deleted (then Value is nil and Version 0). Value may be shared by the
// watchers of the key: read it, do not modify it.
type Event struct {
	Key     string
	Value   []byte
	Version Version
	Deleted bool
}

// Store is the metadata store the controller and the cluster roles share:
// a tree of keys ("scopes/s1/streams/st"), each with a value and a
// version. Writing a key creates its missing parents (with empty values).
// Every method is safe for concurrent use; ctx bounds the call. Keys are
// checked by CheckKey (ErrInvalidKey). Values passed in are copied;
// values returned are the caller's.
//
// Every value is stored in a record envelope with a checksum (see the
// package doc and EncodeRecord). Get and List of a record that fails its
// check return an error that wraps ErrCorrupt and names the key, and a
// watch reports nothing for it; Put and an unconditional Delete do not
// depend on the current value and replace or remove a damaged record. A
// backend that reads the current record for CompareAndSet or a
// conditional Delete (bbolt does, ZooKeeper compares versions only) fails
// them with ErrCorrupt too. A backend may also refuse to open a store with
// a damaged record (bbolt does, as it cannot tell a damaged key from a
// real one).
//
// Implementations: bbolt (embedded, one process) and ZooKeeper. Both pass
// the conformance suite in package clustertest.
type Store interface {
	// Get returns a key's value and version, or ErrNotFound.
	Get(ctx context.Context, key string) (KV, error)
	// Create writes a key that must not exist (ErrExists otherwise, also
	// for a parent that was created implicitly) and returns its version.
	Create(ctx context.Context, key string, value []byte) (Version, error)
	// Put writes a key whether it exists or not and returns its version.
	Put(ctx context.Context, key string, value []byte) (Version, error)
	// CompareAndSet writes a key only if its version is expected
	// (ErrVersionMismatch otherwise, ErrNotFound if it does not exist).
	CompareAndSet(ctx context.Context, key string, value []byte, expected Version) (Version, error)
	// Delete removes a key that has no children (ErrHasChildren), only if
	// its version is expected unless expected is AnyVersion.
	Delete(ctx context.Context, key string, expected Version) error
	// List returns the direct children of key ("" for the root), sorted by
	// name, with their values; ErrNotFound if key does not exist.
	List(ctx context.Context, key string) ([]KV, error)
	// Watch sends an Event each time key is written or deleted, from the
	// moment Watch returns, until ctx is done or the store is closed; then
	// it closes the channel. The key need not exist. Events may be
	// coalesced (a watcher sees the latest state, not every step) but the
	// last event always reflects the current state. Writes of other keys,
	// children included, send nothing. A watcher that does not read holds
	// up no writer.
	Watch(ctx context.Context, key string) (<-chan Event, error)
	// Close closes every watch channel and releases the store. Calls
	// after Close return ErrClosed; a second Close returns nil.
	Close() error
}
