package zkstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/internal/logs"
	"github.com/sluice-streams/sluice/internal/retry"
)

// Logger receives the ZooKeeper client's log lines; *logrus.Logger and
// *logrus.Entry satisfy it.
type Logger interface {
	Printf(format string, args ...any)
}

// Errors of this package beyond cluster's sentinels.
var (
	// ErrSessionExpired: the ZooKeeper session ended, and with it the
	// ephemeral znodes and candidacies created through it.
	ErrSessionExpired = errors.New("zkstore: session expired")
)

var acl = zk.WorldACL(zk.PermAll)

// Store is a cluster.Store in ZooKeeper, plus the session-bound features
// of cluster mode (Register, Elect, Expired): a cluster.Session. It is safe for concurrent use.
type Store struct {
	conn           *zk.Conn
	root           string // absolute znode path, no trailing "/"
	sessionTimeout time.Duration

	closed atomic.Bool
	done   chan struct{} // closed by Close: stops the goroutines below
	wg     sync.WaitGroup

	expired     chan struct{} // closed when the first session ends
	expiredOnce sync.Once
}

var _ cluster.Session = (*Store)(nil)

// Open connects to the ZooKeeper ensemble at servers ("host:port") with
// one session of sessionTimeout (the server may adjust it within its
// bounds), creates root (an absolute znode path other than "/", e.g.
// "/sluice") if it is missing, and returns once the session is
// established, or fails after max(sessionTimeout, 10s). logger may be nil.
func Open(servers []string, root string, sessionTimeout time.Duration, logger Logger) (*Store, error) {
	if err := checkRoot(root); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = logs.Discard()
	}
	conn, events, err := zk.Connect(servers, sessionTimeout, zk.WithLogger(logger), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("zkstore: connect %v: %w", servers, err)
	}
	s := &Store{
		conn:           conn,
		root:           root,
		sessionTimeout: sessionTimeout,
		done:           make(chan struct{}),
		expired:        make(chan struct{}),
	}
	connected := make(chan struct{})
	s.wg.Add(1)
	go s.watchSession(events, connected)

	wait := max(sessionTimeout, 10*time.Second)
	select {
	case <-connected:
	case <-time.After(wait):
		s.Close()
		return nil, fmt.Errorf("zkstore: no session with %v after %v", servers, wait)
	}
	// Create root, element by element.
	for i := 1; i <= len(root); i++ {
		if i == len(root) || root[i] == '/' {
			_, err := conn.Create(root[:i], nil, 0, acl)
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				s.Close()
				return nil, fmt.Errorf("zkstore: create root %s: %w", root[:i], err)
			}
		}
	}
	return s, nil
}

func checkRoot(root string) error {
	if root == "/" || !strings.HasPrefix(root, "/") || strings.HasSuffix(root, "/") {
		return fmt.Errorf("zkstore: root %q is not an absolute znode path below /", root)
	}
	if err := cluster.CheckKey(root[1:]); err != nil {
		return fmt.Errorf("zkstore: root %q: %w", root, err)
	}
	return nil
}

// watchSession follows the session's state: it closes connected on the
// first session, and s.expired when the session expires or has been
// disconnected for longer than its timeout (then the server has expired
// it, or will, even if this client cannot hear it yet).
func (s *Store) watchSession(events <-chan zk.Event, connected chan struct{}) {
	defer s.wg.Done()
	var (
		once      sync.Once
		lost      *time.Timer
		lostC     <-chan time.Time
		hadSesion bool
	)
	for {
		select {
		case <-s.done:
			if lost != nil {
				lost.Stop()
			}
			return
		case <-lostC:
			s.expire()
			lostC = nil
		case ev := <-events:
			if ev.Type != zk.EventSession {
				continue
			}
			switch ev.State {
			case zk.StateHasSession:
				hadSesion = true
				once.Do(func() { close(connected) })
				if lost != nil {
					lost.Stop()
					lostC = nil
				}
			case zk.StateDisconnected:
				if hadSesion && lostC == nil {
					lost = time.NewTimer(s.sessionTimeout)
					lostC = lost.C
				}
			case zk.StateExpired:
				s.expire()
			}
		}
	}
}

func (s *Store) expire() { s.expiredOnce.Do(func() { close(s.expired) }) }

// Expired is closed when the store's first ZooKeeper session ends: the
// server expired it, or the client was cut off for longer than the
// session timeout. Its ephemeral znodes (Register) are then gone and its
// Leaderships have ended. The store reconnects with a new session and
// goes on serving Store calls, but a role that registered or was elected
// should Close it and start again. Expired is not closed by Close.
func (s *Store) Expired() <-chan struct{} { return s.expired }

// path maps a key to its znode; "" is the root.
func (s *Store) path(key string) string {
	if key == "" {
		return s.root
	}
	return s.root + "/" + key
}

// check returns the error a call on key should fail with before it starts;
// checkList is check for List, which also accepts the root "".
func (s *Store) check(ctx context.Context, key string) error {
	return cluster.CheckCall(ctx, s.closed.Load(), key, false)
}

func (s *Store) checkList(ctx context.Context, key string) error {
	return cluster.CheckCall(ctx, s.closed.Load(), key, true)
}

// mapErr turns ZooKeeper's errors into cluster's sentinels; others are
// wrapped with the operation and key.
func (s *Store) mapErr(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return cluster.ErrNotFound
	case errors.Is(err, zk.ErrNodeExists):
		return cluster.ErrExists
	case errors.Is(err, zk.ErrBadVersion):
		return cluster.ErrVersionMismatch
	case errors.Is(err, zk.ErrNotEmpty):
		return cluster.ErrHasChildren
	case errors.Is(err, zk.ErrBadArguments), errors.Is(err, zk.ErrInvalidPath):
		return fmt.Errorf("%w: %q (refused by ZooKeeper: %v)", cluster.ErrInvalidKey, key, err)
	case s.closed.Load() && (errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrConnectionClosed)):
		return cluster.ErrClosed
	case errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("zkstore: %s %q: %w", op, key, ErrSessionExpired)
	}
	return fmt.Errorf("zkstore: %s %q: %w", op, key, err)
}

// Get implements cluster.Store. The version is the znode's Mzxid. Like
// List, it is tried again while the connection is down (readAgain).
func (s *Store) Get(ctx context.Context, key string) (cluster.KV, error) {
	return call(ctx, func() (cluster.KV, error) {
		return readAgain(ctx, s, func() (cluster.KV, error) { return s.get(ctx, key) })
	})
}

// connectionLost reports whether err says the connection to ZooKeeper
// failed under a call, rather than ZooKeeper answering it: no server
// reachable, the client's connection closed, or the socket's own error
// (a reset or a broken pipe when the server went away mid-request).
func connectionLost(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, zk.ErrNoServer) || errors.Is(err, zk.ErrConnectionClosed) || errors.As(err, &netErr)
}

// readAgain runs read, an idempotent read, again while it fails because
// the connection to ZooKeeper is down for a moment (a busy server, a lost
// TCP connection: the client reconnects within the session), until it
// succeeds, fails otherwise, ctx ends, or the session is lost or closed.
// A write is never tried again: a create or compare-and-set whose answer
// was lost may have been applied.
func readAgain[T any](ctx context.Context, s *Store, read func() (T, error)) (T, error) {
	waits := retry.NewBackoff(10*time.Millisecond, time.Second)
	for {
		v, err := read()
		if !connectionLost(err) || s.closed.Load() {
			return v, err
		}
		select {
		case <-s.expired:
			return v, err
		default:
		}
		if retry.Sleep(ctx, waits.NextBackOff()) != nil {
			return v, err
		}
	}
}

func (s *Store) get(ctx context.Context, key string) (cluster.KV, error) {
	if err := s.check(ctx, key); err != nil {
		return cluster.KV{}, err
	}
	data, stat, err := s.conn.Get(s.path(key))
	if err != nil {
		return cluster.KV{}, s.mapErr("get", key, err)
	}
	value, err := s.decode(key, data)
	if err != nil {
		return cluster.KV{}, err
	}
	return cluster.KV{Key: key, Value: value, Version: cluster.Version(stat.Mzxid)}, nil
}

// decode returns the value in a znode's data (its record envelope, see
// cluster.DecodeRecord), or an error that wraps cluster.ErrCorrupt and
// names the key and the znode. Data without an envelope is legacy,
// written before records had checksums, and returned as it is; it gets
// an envelope on its next write.
func (s *Store) decode(key string, data []byte) ([]byte, error) {
	value, _, err := cluster.DecodeRecord(key, data)
	if err != nil {
		return nil, fmt.Errorf("zkstore: znode %s: %w", s.path(key), err)
	}
	return value, nil
}

// createParents creates the missing ancestors of key with empty data.
func (s *Store) createParents(key string) error {
	for _, p := range cluster.Parents(key) {
		_, err := s.conn.Create(s.path(p), nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// create creates key's znode with flags, its parents first, and returns
// its Mzxid. ZooKeeper's create does not return a Stat (this client has no
// create2), so the create of an empty znode and the write of its data go
// in one multi: one transaction, so the Stat of the write is the new
// znode's, and nobody sees the znode empty.
func (s *Store) create(ctx context.Context, key string, value []byte, flags int32) (cluster.Version, error) {
	for {
		if err := s.createParents(key); err != nil {
			return 0, err
		}
		p := s.path(key)
		res, err := s.conn.Multi(
			&zk.CreateRequest{Path: p, Data: nil, Acl: acl, Flags: flags},
			&zk.SetDataRequest{Path: p, Data: cluster.EncodeRecord(key, value), Version: 0},
		)
		err = multiErr(res, err)
		if errors.Is(err, zk.ErrNoNode) {
			// A parent was deleted between its creation and ours.
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		return cluster.Version(res[1].Stat.Mzxid), nil
	}
}

// multiErr returns the error of the operation that failed a multi, rather
// than the runtime-inconsistency errors of the others.
func multiErr(res []zk.MultiResponse, err error) error {
	if err == nil {
		return nil
	}
	for _, r := range res {
		for _, e := range []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty, zk.ErrBadArguments, zk.ErrNoChildrenForEphemerals} {
			if errors.Is(r.Error, e) {
				return r.Error
			}
		}
	}
	return err
}

// Create implements cluster.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return call(ctx, func() (cluster.Version, error) { return s.createKey(ctx, key, value) })
}

func (s *Store) createKey(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	if err := s.check(ctx, key); err != nil {
		return 0, err
	}
	v, err := s.create(ctx, key, value, 0)
	return v, s.mapErr("create", key, err)
}

// Put implements cluster.Store.
func (s *Store) Put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	return call(ctx, func() (cluster.Version, error) { return s.put(ctx, key, value) })
}

func (s *Store) put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	if err := s.check(ctx, key); err != nil {
		return 0, err
	}
	for {
		stat, err := s.conn.Set(s.path(key), cluster.EncodeRecord(key, value), -1)
		if err == nil {
			return cluster.Version(stat.Mzxid), nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return 0, s.mapErr("put", key, err)
		}
		v, err := s.create(ctx, key, value, 0)
		if errors.Is(err, zk.ErrNodeExists) {
			// Created by someone else meanwhile: overwrite it.
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			continue
		}
		return v, s.mapErr("put", key, err)
	}
}

// CompareAndSet implements cluster.Store. Versions are Mzxids, but
// ZooKeeper compares its own per-znode counter (Stat.Version, which starts
// again at 0 when a znode is re-created): read the Stat, compare Mzxid,
// then set with the Stat's Version. A write in between moves the counter,
// so the set fails. The one gap: if, between the read and the set, the
// znode is deleted, re-created and written back to the same counter value,
// the set succeeds; that takes several writes within one round trip.
func (s *Store) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	return call(ctx, func() (cluster.Version, error) { return s.compareAndSet(ctx, key, value, expected) })
}

func (s *Store) compareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	if err := s.check(ctx, key); err != nil {
		return 0, err
	}
	p := s.path(key)
	ok, stat, err := s.conn.Exists(p)
	if err != nil {
		return 0, s.mapErr("compare-and-set", key, err)
	}
	if !ok {
		return 0, cluster.ErrNotFound
	}
	if cluster.Version(stat.Mzxid) != expected {
		return 0, cluster.ErrVersionMismatch
	}
	nstat, err := s.conn.Set(p, cluster.EncodeRecord(key, value), stat.Version)
	if err != nil {
		// ErrBadVersion: written since the read, so its Mzxid moved too.
		// ErrNoNode: deleted since the read.
		return 0, s.mapErr("compare-and-set", key, err)
	}
	return cluster.Version(nstat.Mzxid), nil
}

// Delete implements cluster.Store, with the same read-then-conditional
// write as CompareAndSet when expected is not AnyVersion.
func (s *Store) Delete(ctx context.Context, key string, expected cluster.Version) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.delete(ctx, key, expected) })
	return err
}

func (s *Store) delete(ctx context.Context, key string, expected cluster.Version) error {
	if err := s.check(ctx, key); err != nil {
		return err
	}
	p := s.path(key)
	zver := int32(-1)
	if expected != cluster.AnyVersion {
		ok, stat, err := s.conn.Exists(p)
		if err != nil {
			return s.mapErr("delete", key, err)
		}
		if !ok {
			return cluster.ErrNotFound
		}
		if cluster.Version(stat.Mzxid) != expected {
			return cluster.ErrVersionMismatch
		}
		zver = stat.Version
	}
	return s.mapErr("delete", key, s.conn.Delete(p, zver))
}

// listParallel bounds the reads of children in flight in one List; the
// client pipelines them on its one connection.
const listParallel = 16

// List implements cluster.Store: the znode's children, each read with its
// own request (children deleted meanwhile are left out).
func (s *Store) List(ctx context.Context, key string) ([]cluster.KV, error) {
	return call(ctx, func() ([]cluster.KV, error) {
		return readAgain(ctx, s, func() ([]cluster.KV, error) { return s.list(ctx, key) })
	})
}

func (s *Store) list(ctx context.Context, key string) ([]cluster.KV, error) {
	if err := s.checkList(ctx, key); err != nil {
		return nil, err
	}
	names, _, err := s.conn.Children(s.path(key))
	if err != nil {
		return nil, s.mapErr("list", key, err)
	}
	slices.Sort(names)
	kvs := make([]cluster.KV, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, name := range names {
		child := name
		if key != "" {
			child = key + "/" + name
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			data, stat, err := s.conn.Get(s.path(child))
			if err != nil {
				errs[i] = err
				return
			}
			value, err := s.decode(child, data)
			if err != nil {
				errs[i] = err
				return
			}
			kvs[i] = cluster.KV{Key: child, Value: value, Version: cluster.Version(stat.Mzxid)}
		})
	}
	wg.Wait()
	out := kvs[:0]
	for i, kv := range kvs {
		switch {
		case errs[i] == nil:
			out = append(out, kv)
		case errors.Is(errs[i], zk.ErrNoNode):
		case errors.Is(errs[i], cluster.ErrCorrupt):
			return nil, errs[i]
		default:
			return nil, s.mapErr("list", kv.Key, errs[i])
		}
	}
	return out, nil
}

// Close ends the session (deleting its ephemeral znodes, ending its
// Leaderships), closes every watch channel and waits for the store's
// goroutines. Calls after Close return cluster.ErrClosed; a second Close
// returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.done)
	s.conn.Close()
	s.wg.Wait()
	return nil
}

// call runs f, a sequence of ZooKeeper requests, and returns its result,
// or ctx's error as soon as ctx is done. The client library takes no
// context and queues requests while it reconnects, so this is what makes
// ctx bound a call. A write abandoned this way may still be applied, as
// with any request sent over a network; f's goroutine ends when its
// requests are answered or the connection is closed.
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
