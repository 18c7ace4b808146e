package zkstore

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/sluice-streams/sluice/cluster"
)

// Register creates key as an ephemeral znode holding value: it lives as
// long as the store's session, and ZooKeeper deletes it when the session
// ends (Close, or expiry: see Expired). Its parents are created as
// persistent znodes. It fails with cluster.ErrExists if key exists, which
// includes the registration of an earlier session that has not expired
// yet. An ephemeral znode cannot have children. Update it with Put or
// CompareAndSet; remove it early with Delete.
func (s *Store) Register(ctx context.Context, key string, value []byte) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.register(ctx, key, value) })
	return err
}

func (s *Store) register(ctx context.Context, key string, value []byte) error {
	if err := s.check(ctx, key); err != nil {
		return err
	}
	_, err := s.create(ctx, key, value, zk.FlagEphemeral)
	return s.mapErr("register", key, err)
}

// candidatePrefix names candidate znodes: the client library prepends a
// "_c_<guid>-" to find its znode again if the create's reply is lost, and
// ZooKeeper appends a 10-digit sequence number.
const candidatePrefix = "n_"

// seqLen is the length of ZooKeeper's sequence suffix.
const seqLen = 10

// candidates returns the candidate znode names under election znode p,
// by sequence number; names that are not candidates' are left out.
func (s *Store) candidates(p string) ([]string, error) {
	names, _, err := s.conn.Children(p)
	if err != nil {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool {
		if len(n) < seqLen || !strings.Contains(n, candidatePrefix) {
			return true
		}
		for _, c := range n[len(n)-seqLen:] {
			if c < '0' || c > '9' {
				return true
			}
		}
		return false
	})
	slices.SortFunc(names, func(a, b string) int {
		return strings.Compare(a[len(a)-seqLen:], b[len(b)-seqLen:])
	})
	return names, nil
}

// Leader returns the id of the current leader of the election at key, or
// cluster.ErrNotFound if it has no candidate.
func (s *Store) Leader(ctx context.Context, key string) (string, error) {
	return call(ctx, func() (string, error) { return s.leader(ctx, key) })
}

func (s *Store) leader(ctx context.Context, key string) (string, error) {
	if err := s.check(ctx, key); err != nil {
		return "", err
	}
	p := s.path(key)
	for {
		names, err := s.candidates(p)
		if err != nil {
			return "", s.mapErr("leader", key, err)
		}
		if len(names) == 0 {
			return "", cluster.ErrNotFound
		}
		data, _, err := s.conn.Get(p + "/" + names[0])
		if errors.Is(err, zk.ErrNoNode) {
			// The leader left between the two reads.
			if err := ctx.Err(); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", s.mapErr("leader", key, err)
		}
		return string(data), nil
	}
}

var _ cluster.Leadership = (*Leadership)(nil)

// Leadership is one candidacy in an election (Elect). It ends with Resign,
// with the end of the store's session (Expired) or with the store's
// Close; then IsLeader is false and Changed is closed.
type Leadership struct {
	s    *Store
	key  string
	dir  string // the election znode
	node string // this candidate's znode, absolute

	leader  atomic.Bool
	changed chan struct{} // buffer of 1; closed when the candidacy ends

	resign     chan struct{}
	resignOnce sync.Once
	done       chan struct{} // closed when run has returned
	resignErr  error         // set by run before done
}

// Elect enters the election at key (created if missing) as a candidate
// with id (Leader returns it; ids need not be unique, but should be): an
// ephemeral sequential znode under key. Candidates lead in the order they
// entered; each waits on the candidate just before it. When Elect returns,
// IsLeader already tells whether this candidate leads; later changes are
// signalled on Changed. ctx is checked before the call but does not
// interrupt it (an abandoned create could leave a candidate that nobody
// follows); the candidacy lasts until Resign, session expiry or Close.
//
// It returns a cluster.Leadership (a *Leadership), so that Store is a
// cluster.Session.
func (s *Store) Elect(ctx context.Context, key, id string) (cluster.Leadership, error) {
	if err := s.check(ctx, key); err != nil {
		return nil, err
	}
	dir := s.path(key)
	if _, err := s.create(ctx, key, nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return nil, s.mapErr("elect", key, err)
	}
	node, err := s.conn.CreateProtectedEphemeralSequential(dir+"/"+candidatePrefix, []byte(id), acl)
	if err != nil {
		return nil, s.mapErr("elect", key, err)
	}
	l := &Leadership{
		s:       s,
		key:     key,
		dir:     dir,
		node:    node,
		changed: make(chan struct{}, 1),
		resign:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	// Find the position once before returning, so IsLeader is current.
	wait, err := l.step()
	s.wg.Add(1)
	go l.run(wait, err)
	return l, nil
}

// IsLeader reports whether this candidate leads the election now, as far
// as this process knows (see the package comment on fencing).
func (l *Leadership) IsLeader() bool { return l.leader.Load() }

// Changed receives a value when IsLeader changes (changes are coalesced:
// read IsLeader after each), and is closed when the candidacy has ended.
func (l *Leadership) Changed() <-chan struct{} { return l.changed }

// Resign ends the candidacy: it deletes the candidate's znode, so the
// next candidate leads, and returns once IsLeader is false and Changed
// closed. A second Resign, or one after the candidacy ended otherwise,
// does nothing more.
func (l *Leadership) Resign() error {
	l.resignOnce.Do(func() { close(l.resign) })
	<-l.done
	return l.resignErr
}

func (l *Leadership) setLeader(v bool) {
	if l.leader.Swap(v) != v {
		select {
		case l.changed <- struct{}{}:
		default:
		}
	}
}

// errCandidateGone: this candidate's znode is gone (its session ended).
var errCandidateGone = errors.New("zkstore: candidate znode gone")

// step reads the candidates, sets IsLeader and returns the watch to wait
// on: on this candidate's own znode if it leads (it disappears only with
// the session), otherwise on its predecessor's.
func (l *Leadership) step() (<-chan zk.Event, error) {
	conn := l.s.conn
	me := path.Base(l.node)
	for {
		names, err := l.s.candidates(l.dir)
		if err != nil {
			return nil, err
		}
		i := slices.Index(names, me)
		if i < 0 {
			return nil, errCandidateGone
		}
		watch := l.node
		if i > 0 {
			watch = l.dir + "/" + names[i-1]
		}
		ok, _, ch, err := conn.ExistsW(watch)
		if err != nil {
			return nil, err
		}
		if !ok {
			// The predecessor left meanwhile (or this znode is gone):
			// read again. The exists watch stays set until created.
			continue
		}
		l.setLeader(i == 0)
		return ch, nil
	}
}

// run follows the election until the candidacy ends. wait and err are
// the first step's.
func (l *Leadership) run(wait <-chan zk.Event, err error) {
	s := l.s
	defer s.wg.Done()
	defer close(l.done)
	defer close(l.changed)
	defer l.setLeader(false)
	backoff := newBackoff()
	for {
		switch {
		case errors.Is(err, errCandidateGone):
			return
		case err != nil:
			// Connection trouble: retry until the session is known to
			// be over. The timer spaces the retries.
			t := time.NewTimer(backoff.NextBackOff())
			select {
			case <-t.C:
			case <-s.expired:
				t.Stop()
				l.leave()
				return
			case <-s.done:
				t.Stop()
				return
			case <-l.resign:
				t.Stop()
				l.leave()
				return
			}
		default:
			backoff.Reset()
			select {
			case <-wait:
			case <-s.expired:
				l.leave()
				return
			case <-s.done:
				return
			case <-l.resign:
				l.leave()
				return
			}
		}
		wait, err = l.step()
	}
}

// leave deletes the candidate's znode: on Resign, and on session expiry in
// case the session was only given up for lost here and lives on in the
// ensemble (a ghost candidate would lead with nobody acting on it).
func (l *Leadership) leave() {
	l.setLeader(false)
	if err := l.s.conn.Delete(l.node, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		l.resignErr = l.s.mapErr("resign", l.key, err)
	}
}

// Opener returns a function that opens a new session with Open's
// arguments, as the roles' session loops (package cluster/session) want
// it: a typed nil never stands for a failed open.
func Opener(servers []string, root string, sessionTimeout time.Duration, logger Logger) func(context.Context) (cluster.Session, error) {
	return func(context.Context) (cluster.Session, error) {
		st, err := Open(servers, root, sessionTimeout, logger)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
}
