package sessiontest

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/cluster/boltstore"
)

// Server is an in-memory coordination service: the sessions opened on it
// share its keys, registrations and elections.
type Server struct {
	store *boltstore.Store

	mu struct {
		sync.Mutex
		owners    map[string]*Session      // registered key -> its session
		elections map[string][]*leadership // election key -> candidates, in order
	}
}

// NewServer returns a Server whose keys live in t's temp directory; it is
// closed when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := &Server{store: st}
	srv.mu.owners = map[string]*Session{}
	srv.mu.elections = map[string][]*leadership{}
	return srv
}

// Open returns a new session on the server.
func (srv *Server) Open() *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{srv: srv, ctx: ctx, cancel: cancel, expired: make(chan struct{})}
}

// Session is one session of a Server: a cluster.Session.
type Session struct {
	srv    *Server
	ctx    context.Context // ends at Close: ends the session's watches
	cancel context.CancelFunc

	closed      atomic.Bool
	expired     chan struct{}
	expireOnce  sync.Once
	registers   atomic.Int64
	registerErr atomic.Int64
}

var _ cluster.Session = (*Session)(nil)

func (s *Session) check() error {
	if s.closed.Load() {
		return cluster.ErrClosed
	}
	return nil
}

// Get implements cluster.Store.
func (s *Session) Get(ctx context.Context, key string) (cluster.KV, error) {
	if err := s.check(); err != nil {
		return cluster.KV{}, err
	}
	return s.srv.store.Get(ctx, key)
}

// Create implements cluster.Store.
func (s *Session) Create(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.srv.store.Create(ctx, key, value)
}

// Put implements cluster.Store; a registration stays one.
func (s *Session) Put(ctx context.Context, key string, value []byte) (cluster.Version, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.srv.store.Put(ctx, key, value)
}

// CompareAndSet implements cluster.Store.
func (s *Session) CompareAndSet(ctx context.Context, key string, value []byte, expected cluster.Version) (cluster.Version, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.srv.store.CompareAndSet(ctx, key, value, expected)
}

// Delete implements cluster.Store; deleting a registration ends it.
func (s *Session) Delete(ctx context.Context, key string, expected cluster.Version) error {
	if err := s.check(); err != nil {
		return err
	}
	srv := s.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if err := srv.store.Delete(ctx, key, expected); err != nil {
		return err
	}
	delete(srv.mu.owners, key)
	return nil
}

// List implements cluster.Store.
func (s *Session) List(ctx context.Context, key string) ([]cluster.KV, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.srv.store.List(ctx, key)
}

// Watch implements cluster.Store: the channel is closed when ctx ends or
// the session is closed.
func (s *Session) Watch(ctx context.Context, key string) (<-chan cluster.Event, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	context.AfterFunc(wctx, func() { stop() })
	ch, err := s.srv.store.Watch(wctx, key)
	if err != nil {
		cancel()
		return nil, err
	}
	return ch, nil
}

// Register implements cluster.Session.
func (s *Session) Register(ctx context.Context, key string, value []byte) error {
	s.registers.Add(1)
	if err := s.check(); err != nil {
		return err
	}
	srv := s.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if _, err := srv.store.Create(ctx, key, value); err != nil {
		if errors.Is(err, cluster.ErrExists) {
			s.registerErr.Add(1)
		}
		return err
	}
	srv.mu.owners[key] = s
	return nil
}

// Registers returns how many times Register was called, and how many of
// those failed with cluster.ErrExists.
func (s *Session) Registers() (calls, exists int64) {
	return s.registers.Load(), s.registerErr.Load()
}

// Expired implements cluster.Session.
func (s *Session) Expired() <-chan struct{} { return s.expired }

// Expire ends the session as ZooKeeper's expiry does, in its order: its
// registrations are deleted (by the server), Expired is closed (once:
// the client hears of it), and then its candidacies end. The Session
// stays usable, as a new session. It returns once all of that is done.
func (s *Session) Expire() {
	s.unregister()
	s.expireOnce.Do(func() { close(s.expired) })
	s.end()
}

// Close implements cluster.Store: its watches and candidacies end and
// its registrations are deleted. A second Close returns nil.
func (s *Session) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.end()
	return nil
}

// unregister deletes the session's registrations.
func (s *Session) unregister() {
	srv := s.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for key, owner := range srv.mu.owners {
		if owner == s {
			srv.store.Delete(context.Background(), key, cluster.AnyVersion)
			delete(srv.mu.owners, key)
		}
	}
}

// end deletes the session's registrations and ends its candidacies.
func (s *Session) end() {
	s.unregister()
	srv := s.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var mine []*leadership
	for _, cands := range srv.mu.elections {
		for _, l := range cands {
			if l.s == s {
				mine = append(mine, l)
			}
		}
	}
	for _, l := range mine {
		srv.leaveLocked(l)
	}
}

// Elect implements cluster.Session. The election key is created (empty)
// if missing.
func (s *Session) Elect(ctx context.Context, key, id string) (cluster.Leadership, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	srv := s.srv
	if _, err := srv.store.Create(ctx, key, nil); err != nil && !errors.Is(err, cluster.ErrExists) {
		return nil, err
	}
	l := &leadership{srv: srv, s: s, key: key, id: id, changed: make(chan struct{}, 1)}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.mu.elections[key] = append(srv.mu.elections[key], l)
	srv.updateLocked(key)
	return l, nil
}

// Leader returns the id of the leader of the election at key, or
// cluster.ErrNotFound if it has no candidate.
func (s *Session) Leader(ctx context.Context, key string) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	srv := s.srv
	srv.mu.Lock()
	defer srv.mu.Unlock()
	cands := srv.mu.elections[key]
	if len(cands) == 0 {
		return "", cluster.ErrNotFound
	}
	return cands[0].id, nil
}

// Candidates returns the ids of the candidates of the election at key, in
// order (the leader first): tests wait on it to know a role stands.
func (srv *Server) Candidates(key string) []string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var ids []string
	for _, l := range srv.mu.elections[key] {
		ids = append(ids, l.id)
	}
	return ids
}

// updateLocked tells the candidates of election key whether they lead.
func (srv *Server) updateLocked(key string) {
	for i, l := range srv.mu.elections[key] {
		l.setLeader(i == 0)
	}
}

// leaveLocked ends candidacy l.
func (srv *Server) leaveLocked(l *leadership) {
	if l.ended {
		return
	}
	l.ended = true
	srv.mu.elections[l.key] = slices.DeleteFunc(srv.mu.elections[l.key], func(c *leadership) bool { return c == l })
	l.setLeader(false)
	close(l.changed)
	srv.updateLocked(l.key)
}

// leadership is one candidacy; ended is guarded by the server's mu.
type leadership struct {
	srv     *Server
	s       *Session
	key, id string
	leader  atomic.Bool
	changed chan struct{} // buffer of 1; closed when the candidacy ends
	ended   bool
}

func (l *leadership) IsLeader() bool           { return l.leader.Load() }
func (l *leadership) Changed() <-chan struct{} { return l.changed }

func (l *leadership) Resign() error {
	l.srv.mu.Lock()
	defer l.srv.mu.Unlock()
	l.srv.leaveLocked(l)
	return nil
}

func (l *leadership) setLeader(v bool) {
	if l.ended && v {
		return
	}
	if l.leader.Swap(v) != v && !l.ended {
		select {
		case l.changed <- struct{}{}:
		default:
		}
	}
}
