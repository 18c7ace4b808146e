package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/sluice-streams/sluice/cluster"
)

// bucketName names the one bucket; the suffix is the format version: in
// v2 every value is a record envelope (cluster.EncodeRecord). legacyBucket
// is v1, the same without the envelope; Open moves it to v2.
var (
	bucketName   = []byte("sluice.cluster.v2")
	legacyBucket = []byte("sluice.cluster.v1")
)

// versionLen is the size of the version in front of each value.
const versionLen = 8

// lockTimeout bounds the wait for the file lock that another process
// holds, so a second process on the same file fails instead of hanging.
const lockTimeout = 2 * time.Second

// Store is a cluster.Store in a bbolt file. It is safe for concurrent use.
type Store struct {
	db     *bolt.DB
	closed atomic.Bool
	// damaged holds the first panic recovered from bbolt after Open (a
	// page the open checks could not see, or a fault): from then on every
	// call returns it, so nothing is read or written through a database
	// whose in-memory state a panic interrupted. Sticky, like a log's
	// write error.
	damaged atomic.Pointer[error]

	// notify orders the delivery of events with commits: a write
	// transaction takes it at the end of its function (holding bbolt's
	// writer lock, so in commit order) and releases it after its events
	// are delivered. Watch registration and removal take it too, so a
	// watcher sees either all of a commit's events or none. Lock order:
	// bbolt's writer lock, then notify.
	notify struct {
		sync.Mutex
		watchers map[string]map[*watcher]struct{}
	}
}

var _ cluster.Store = (*Store)(nil)

type watcher struct {
	key string
	ch  chan cluster.Event // buffer of 1: the latest undelivered event
}

// Open opens, or creates, the store in the bbolt file at path (mode 0600).
// It fails if another process has the file open (after lockTimeout).
//
// An existing file is verified before it is used, read-only: the bounds
// of every page (checkPages), bbolt's consistency check, and the checksum
// of every record (which covers its key). A damaged file or record fails
// Open with an error that wraps cluster.ErrCorrupt and names the file
// (and the key); bbolt panics on some damaged pages, and Open turns those
// panics into that error too. A file of format v1 (records without
// checksums) is then moved to v2 (see prepare).
func Open(path string) (*Store, error) {
	if err := verify(path); err != nil {
		return nil, err
	}
	db, err := openDB(path, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db}
	s.notify.watchers = make(map[string]map[*watcher]struct{})
	if err := s.prepare(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openDB is bolt.Open with its refusals classified: a damaged file (or a
// panic while bbolt reads it) is cluster.ErrCorrupt, a lock held by
// another process says so.
func openDB(path string, opts *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The file and its lock stay open in this process: bbolt
			// gives nothing back to close after a panic. The process is
			// meant to exit on this error.
			db, err = nil, fmt.Errorf("boltstore: open %s: %w: the file is damaged: %v", path, cluster.ErrCorrupt, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, opts)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("boltstore: open %s: the file is locked by another process (waited %v): %w", path, lockTimeout, err)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrVersionMismatch):
		return nil, fmt.Errorf("boltstore: open %s: %w: %w", path, cluster.ErrCorrupt, err)
	}
	var (
		pathErr *os.PathError
		errno   syscall.Errno
	)
	if _, serr := os.Stat(path); serr == nil && !errors.As(err, &pathErr) && !errors.As(err, &errno) {
		// bbolt's other refusals of an existing file ("file size too
		// small", a bad page size) are about its contents; system
		// errors (permissions, a directory, memory) are not.
		return nil, fmt.Errorf("boltstore: open %s: %w: %w", path, cluster.ErrCorrupt, err)
	}
	return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
}

// verify checks an existing file read-only, before any write can spread
// damage: page bounds, bbolt's page check (which loads the free list,
// where a damaged page panics, under its own recover), the one bucket,
// every record. A missing or empty file has nothing to check.
func verify(path string) (err error) {
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil
	}
	db, err := openDB(path, &bolt.Options{Timeout: lockTimeout, ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			pageSize := db.Info().PageSize
			if err := checkPages(path, pageSize, uint64(tx.Size())/uint64(pageSize)); err != nil {
				return err
			}
			var errs []error
			for err := range tx.Check() {
				if len(errs) < maxCheckErrors {
					errs = append(errs, err)
				}
			}
			if len(errs) > 0 {
				return fmt.Errorf("boltstore: %s: %w: bbolt's page check: %w", path, cluster.ErrCorrupt, errors.Join(errs...))
			}
			// The file holds the one bucket (v1 or v2): another name at
			// the top is a damaged name, which would hide every record.
			err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				if !bytes.Equal(name, bucketName) && !bytes.Equal(name, legacyBucket) {
					return fmt.Errorf("boltstore: %s: %w: unknown top-level bucket %q (expected %q)", path, cluster.ErrCorrupt, name, bucketName)
				}
				return nil
			})
			if err != nil {
				return err
			}
			// A bucket holds records only: a nested bucket is a damaged
			// element flag, which would hide a record. In v2 every
			// record's checksum covers its key, so a damaged key (which
			// bbolt's check cannot tell from a real one, and which would
			// hide the record from a Get of its real key) fails here. A
			// v1 record has no checksum: only its length is checked.
			for _, name := range [][]byte{bucketName, legacyBucket} {
				b := tx.Bucket(name)
				if b == nil {
					continue
				}
				legacy := bytes.Equal(name, legacyBucket)
				err := b.ForEach(func(k, v []byte) error {
					if v == nil {
						return fmt.Errorf("boltstore: %s: %w: key %q is a nested bucket, not a record", path, cluster.ErrCorrupt, k)
					}
					if legacy {
						if len(v) < versionLen {
							return fmt.Errorf("boltstore: %s: %w: v1 key %q: value of %d bytes is shorter than its version", path, cluster.ErrCorrupt, k, len(v))
						}
						return nil
					}
					if _, err := decode(string(k), v); err != nil {
						return fmt.Errorf("boltstore: %s: %w", path, err)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// errPanicked marks an error guard made of a panic.
var errPanicked = errors.New("bbolt panicked")

// maxCheckErrors bounds the page-check errors one error reports.
const maxCheckErrors = 8

// guard runs fn and turns a panic in it (bbolt's on a damaged page) into
// an error that wraps cluster.ErrCorrupt and names the file.
func guard(path string, fn func() error) (err error) {
	// A read past the mapped file faults; make it a panic to recover.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("boltstore: %s: %w: the file is damaged: %w: %v", path, cluster.ErrCorrupt, errPanicked, r)
		}
	}()
	return fn()
}

// prepare creates the bucket of a new file, and moves the records of a
// v1 file (no envelope, from before records had checksums) into a v2
// bucket, each in its envelope, under the same versions and with the same
// sequence, in one transaction. It writes nothing if there is nothing to
// do.
func (s *Store) prepare() error {
	var ready bool
	err := s.db.View(func(tx *bolt.Tx) error {
		ready = tx.Bucket(bucketName) != nil && tx.Bucket(legacyBucket) == nil
		return nil
	})
	if err == nil && !ready {
		err = s.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketName)
			if err != nil {
				return err
			}
			old := tx.Bucket(legacyBucket)
			if old == nil {
				return nil
			}
			err = old.ForEach(func(k, v []byte) error {
				return b.Put(bytes.Clone(k), cluster.EncodeRecord(string(k), v))
			})
			if err != nil {
				return err
			}
			if err := b.SetSequence(max(b.Sequence(), old.Sequence())); err != nil {
				return err
			}
			return tx.DeleteBucket(legacyBucket)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: open %s: %w", s.db.Path(), err)
	}
	return nil
}

// Path returns the file's path.
func (s *Store) Path() string { return s.db.Path() }

// encode is a stored value: the record envelope (cluster.EncodeRecord)
// around the version and the data.
func encode(key string, v uint64, data []byte) []byte {
	buf := make([]byte, versionLen+len(data))
	binary.BigEndian.PutUint64(buf, v)
	copy(buf[versionLen:], data)
	return cluster.EncodeRecord(key, buf)
}

// decode checks a stored value and copies it out of bbolt's memory map.
// Its error wraps cluster.ErrCorrupt and names the key. A v2 bucket holds
// envelopes only: a value without one is damaged, not legacy.
func decode(key string, raw []byte) (cluster.KV, error) {
	payload, legacy, err := cluster.DecodeRecord(key, raw)
	if err != nil {
		return cluster.KV{}, err
	}
	if legacy {
		return cluster.KV{}, fmt.Errorf("%w: key %q: record of %d bytes has no envelope (first byte 0x%02x)", cluster.ErrCorrupt, key, len(raw), firstByte(raw))
	}
	if len(payload) < versionLen {
		return cluster.KV{}, fmt.Errorf("%w: key %q: stored value of %d bytes is shorter than its version", cluster.ErrCorrupt, key, len(payload))
	}
	return cluster.KV{
		Key:     key,
		Value:   bytes.Clone(payload[versionLen:]),
		Version: cluster.Version(binary.BigEndian.Uint64(payload)),
	}, nil
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// current decodes key's stored value in b: ok is false if there is none.
func (s *Store) current(b *bolt.Bucket, key string) (kv cluster.KV, ok bool, err error) {
	raw := b.Get([]byte(key))
	if raw == nil {
		return cluster.KV{}, false, nil
	}
	kv, err = decode(key, raw)
	if err != nil {
		return cluster.KV{}, false, s.corrupt(err)
	}
	return kv, true, nil
}

// corrupt names the file in a record's decoding error.
func (s *Store) corrupt(err error) error {
	return fmt.Errorf("boltstore: %s: %w", s.db.Path(), err)
}

// check returns the error a call on key should fail with before it starts;
// checkList is check for List, which also accepts the root "".
func (s *Store) check(ctx context.Context, key string) error {
	return cluster.CheckCall(ctx, s.closed.Load(), key, false)
}

func (s *Store) checkList(ctx context.Context, key string) error {
	return cluster.CheckCall(ctx, s.closed.Load(), key, true)
}

// mapErr turns bbolt's error for a closed database into ErrClosed.
func (s *Store) mapErr(err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) || errors.Is(err, bolterrors.ErrTxClosed) {
		return cluster.ErrClosed
	}
	return err
}

// Get implements cluster.Store.
func (s *Store) Get(ctx context.Context, key string) (cluster.KV, error) {
	if err := s.check(ctx, key); err != nil {
		return cluster.KV{}, err
	}
	var kv cluster.KV
	err := s.view(func(tx *bolt.Tx) error {
		cur, ok, err := s.current(tx.Bucket(bucketName), key)
		if err != nil {
			return err
		}
		if !ok {
			return cluster.ErrNotFound
		}
		kv = cur
		return nil
	})
	return kv, s.mapErr(err)
}

// Create implements cluster.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return s.write(ctx, key, value, false, func(_ cluster.KV, exists bool) error {
		if exists {
			return cluster.ErrExists
		}
		return nil
	})
}

// Put implements cluster.Store.
func (s *Store) Put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return s.write(ctx, key, value, true, func(cluster.KV, bool) error { return nil })
}

// CompareAndSet implements cluster.Store.
func (s *Store) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	return s.write(ctx, key, value, false, func(cur cluster.KV, exists bool) error {
		if !exists {
			return cluster.ErrNotFound
		}
		if cur.Version != expected {
			return cluster.ErrVersionMismatch
		}
		return nil
	})
}

// write stores value under key if allow, given the key's current record
// (exists false if none), returns nil; it creates missing parents. A
// damaged current record is refused (cluster.ErrCorrupt) unless
// overwrite: Put replaces it, as it does not depend on it.
func (s *Store) write(ctx context.Context, key string, value []byte, overwrite bool, allow func(cur cluster.KV, exists bool) error) (cluster.Version, error) {
	if err := s.check(ctx, key); err != nil {
		return 0, err
	}
	var (
		events []cluster.Event
		ver    cluster.Version
	)
	err := s.update(func(b *bolt.Bucket) ([]cluster.Event, error) {
		events = events[:0]
		k := []byte(key)
		cur, exists, err := s.current(b, key)
		switch {
		case err != nil && !overwrite:
			return nil, err
		case err != nil:
			exists = true // damaged, but there
		}
		if err := allow(cur, exists); err != nil {
			return nil, err
		}
		if !exists {
			// Every ancestor of a stored key is stored: create the
			// missing ones, outermost first.
			for _, p := range cluster.Parents(key) {
				if b.Get([]byte(p)) != nil {
					continue
				}
				seq, err := b.NextSequence()
				if err != nil {
					return nil, err
				}
				if err := b.Put([]byte(p), encode(p, seq, nil)); err != nil {
					return nil, err
				}
				events = append(events, cluster.Event{Key: p, Value: []byte{}, Version: cluster.Version(seq)})
			}
		}
		seq, err := b.NextSequence()
		if err != nil {
			return nil, err
		}
		if err := b.Put(k, encode(key, seq, value)); err != nil {
			return nil, err
		}
		ver = cluster.Version(seq)
		events = append(events, cluster.Event{Key: key, Value: bytes.Clone(value), Version: ver})
		return events, nil
	})
	if err != nil {
		return 0, err
	}
	return ver, nil
}

// hasChildren reports whether key has a child in b.
func hasChildren(b *bolt.Bucket, key string) bool {
	prefix := []byte(key + "/")
	k, _ := b.Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// Delete implements cluster.Store.
func (s *Store) Delete(ctx context.Context, key string, expected cluster.Version) error {
	if err := s.check(ctx, key); err != nil {
		return err
	}
	return s.update(func(b *bolt.Bucket) ([]cluster.Event, error) {
		k := []byte(key)
		cur, exists, err := s.current(b, key)
		if err != nil && expected != cluster.AnyVersion {
			return nil, err
		}
		if err == nil && !exists {
			return nil, cluster.ErrNotFound
		}
		// An unconditional Delete removes a damaged record too: it is
		// how an operator clears one (docs/OPERATIONS.md).
		if expected != cluster.AnyVersion && cur.Version != expected {
			return nil, cluster.ErrVersionMismatch
		}
		if hasChildren(b, key) {
			return nil, cluster.ErrHasChildren
		}
		if err := b.Delete(k); err != nil {
			return nil, err
		}
		// A delete is a write: it takes a number, so the sequence tells
		// every change apart even though nothing stores this one.
		if _, err := b.NextSequence(); err != nil {
			return nil, err
		}
		return []cluster.Event{{Key: key, Deleted: true}}, nil
	})
}

// update runs fn in a write transaction and, if it commits, delivers the
// events fn returned, in commit order (see Store.notify).
func (s *Store) update(fn func(b *bolt.Bucket) ([]cluster.Event, error)) error {
	var (
		events []cluster.Event
		locked bool
	)
	err := s.guarded(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			var err error
			events, err = fn(tx.Bucket(bucketName))
			if err != nil {
				return err
			}
			s.notify.Lock()
			locked = true
			return nil
		})
	})
	if locked {
		if err == nil {
			s.deliverLocked(events)
		}
		s.notify.Unlock()
	}
	return s.mapErr(err)
}

// deliverLocked gives each event to the watchers of its key, replacing an
// event they have not read yet. s.notify must be held.
func (s *Store) deliverLocked(events []cluster.Event) {
	for _, ev := range events {
		for w := range s.notify.watchers[ev.Key] {
			select {
			case <-w.ch:
			default:
			}
			// Only holders of s.notify send, and the buffer was just
			// emptied: this never blocks.
			w.ch <- ev
		}
	}
}

// view is db.View under guard.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	return s.guarded(func() error { return s.db.View(fn) })
}

// guarded runs fn under guard, unless an earlier call panicked: then, and
// from a call that panics on, it returns that first failure.
func (s *Store) guarded(fn func() error) error {
	if p := s.damaged.Load(); p != nil {
		return *p
	}
	err := guard(s.db.Path(), fn)
	if errors.Is(err, errPanicked) {
		s.damaged.CompareAndSwap(nil, &err)
		return *s.damaged.Load()
	}
	return err
}

// List implements cluster.Store.
func (s *Store) List(ctx context.Context, key string) ([]cluster.KV, error) {
	if err := s.checkList(ctx, key); err != nil {
		return nil, err
	}
	var kvs []cluster.KV
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketName)
		var prefix []byte
		if key != "" {
			if b.Get([]byte(key)) == nil {
				return cluster.ErrNotFound
			}
			prefix = []byte(key + "/")
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			name := k[len(prefix):]
			if i := bytes.IndexByte(name, '/'); i >= 0 {
				// A descendant whose parent was already listed (the
				// parent sorts first): skip the parent's subtree.
				// '0' is the byte after '/'.
				next := append(bytes.Clone(k[:len(prefix)+i]), '0')
				k, v = c.Seek(next)
				continue
			}
			kv, err := decode(string(k), v)
			if err != nil {
				return s.corrupt(err)
			}
			kvs = append(kvs, kv)
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return nil, s.mapErr(err)
	}
	return kvs, nil
}

// Watch implements cluster.Store. Watchers are notified in this process
// only, which is the one process that can have the file open.
func (s *Store) Watch(ctx context.Context, key string) (<-chan cluster.Event, error) {
	if err := s.check(ctx, key); err != nil {
		return nil, err
	}
	w := &watcher{key: key, ch: make(chan cluster.Event, 1)}
	s.notify.Lock()
	if s.closed.Load() {
		s.notify.Unlock()
		return nil, cluster.ErrClosed
	}
	set := s.notify.watchers[key]
	if set == nil {
		set = make(map[*watcher]struct{})
		s.notify.watchers[key] = set
	}
	set[w] = struct{}{}
	s.notify.Unlock()

	context.AfterFunc(ctx, func() {
		s.notify.Lock()
		defer s.notify.Unlock()
		if set, ok := s.notify.watchers[key]; ok {
			if _, ok := set[w]; ok {
				delete(set, w)
				if len(set) == 0 {
					delete(s.notify.watchers, key)
				}
				close(w.ch)
			}
		}
	})
	return w.ch, nil
}

// Close closes every watch channel and the file. Calls after Close return
// cluster.ErrClosed; a second Close returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.notify.Lock()
	for _, set := range s.notify.watchers {
		for w := range set {
			close(w.ch)
		}
	}
	s.notify.watchers = nil
	s.notify.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("boltstore: close: %w", err)
	}
	return nil
}
