package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/sluice-streams/sluice/cluster"
)

// bucketName names the one bucket; the suffix is the format version.
var bucketName = []byte("sluice.cluster.v1")

// versionLen is the size of the version in front of each value.
const versionLen = 8

// lockTimeout bounds the wait for the file lock that another process
// holds, so a second process on the same file fails instead of hanging.
const lockTimeout = 2 * time.Second

// Store is a cluster.Store in a bbolt file. It is safe for concurrent use.
type Store struct {
	db     *bolt.DB
	closed atomic.Bool

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
// It fails if another process has the file open.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	s := &Store{db: db}
	s.notify.watchers = make(map[string]map[*watcher]struct{})
	return s, nil
}

// Path returns the file's path.
func (s *Store) Path() string { return s.db.Path() }

func encode(v uint64, data []byte) []byte {
	buf := make([]byte, versionLen+len(data))
	binary.BigEndian.PutUint64(buf, v)
	copy(buf[versionLen:], data)
	return buf
}

// decode copies a stored value out of bbolt's memory map.
func decode(key string, raw []byte) (cluster.KV, error) {
	if len(raw) < versionLen {
		return cluster.KV{}, fmt.Errorf("boltstore: key %q: stored value of %d bytes is shorter than its version", key, len(raw))
	}
	return cluster.KV{
		Key:     key,
		Value:   bytes.Clone(raw[versionLen:]),
		Version: cluster.Version(binary.BigEndian.Uint64(raw)),
	}, nil
}

func versionOf(raw []byte) cluster.Version {
	if len(raw) < versionLen {
		return 0
	}
	return cluster.Version(binary.BigEndian.Uint64(raw))
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
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketName).Get([]byte(key))
		if raw == nil {
			return cluster.ErrNotFound
		}
		var err error
		kv, err = decode(key, raw)
		return err
	})
	return kv, s.mapErr(err)
}

// Create implements cluster.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return s.write(ctx, key, value, func(cur []byte) error {
		if cur != nil {
			return cluster.ErrExists
		}
		return nil
	})
}

// Put implements cluster.Store.
func (s *Store) Put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return s.write(ctx, key, value, func([]byte) error { return nil })
}

// CompareAndSet implements cluster.Store.
func (s *Store) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	return s.write(ctx, key, value, func(cur []byte) error {
		if cur == nil {
			return cluster.ErrNotFound
		}
		if versionOf(cur) != expected {
			return cluster.ErrVersionMismatch
		}
		return nil
	})
}

// write stores value under key if allow, given the key's current raw
// value (nil if none), returns nil; it creates missing parents.
func (s *Store) write(ctx context.Context, key string, value []byte, allow func(cur []byte) error) (cluster.Version, error) {
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
		cur := b.Get(k)
		if err := allow(cur); err != nil {
			return nil, err
		}
		if cur == nil {
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
				if err := b.Put([]byte(p), encode(seq, nil)); err != nil {
					return nil, err
				}
				events = append(events, cluster.Event{Key: p, Value: []byte{}, Version: cluster.Version(seq)})
			}
		}
		seq, err := b.NextSequence()
		if err != nil {
			return nil, err
		}
		if err := b.Put(k, encode(seq, value)); err != nil {
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
		cur := b.Get(k)
		if cur == nil {
			return nil, cluster.ErrNotFound
		}
		if expected != cluster.AnyVersion && versionOf(cur) != expected {
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
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		events, err = fn(tx.Bucket(bucketName))
		if err != nil {
			return err
		}
		s.notify.Lock()
		locked = true
		return nil
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

// List implements cluster.Store.
func (s *Store) List(ctx context.Context, key string) ([]cluster.KV, error) {
	if err := s.checkList(ctx, key); err != nil {
		return nil, err
	}
	var kvs []cluster.KV
	err := s.db.View(func(tx *bolt.Tx) error {
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
				return err
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
