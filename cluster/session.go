package cluster

import "context"

// Session is what the cluster roles (the controller's leader election, a
// node's membership, the Mesos scheduler) use of a coordination session:
// the Store, ephemeral registration, leader election and the news that
// the session is over. Package cluster/session keeps a role on a session
// across expiries; package cluster/sessiontest has one in memory for
// tests.
//
// Implementation: ZooKeeper (zkstore.Store). The bbolt store has no
// sessions.
type Session interface {
	Store
	// Register creates key holding value for as long as the session
	// lives: the backend deletes it when the session ends (Close or
	// expiry). It fails with ErrExists if key exists, which includes the
	// registration of an earlier session that has not expired yet.
	// Update it with Put or CompareAndSet; remove it early with Delete.
	Register(ctx context.Context, key string, value []byte) error
	// Elect enters the election at key as a candidate with id. When it
	// returns, IsLeader already tells whether this candidate leads.
	// Candidates lead in the order they entered. The candidacy lasts
	// until Resign, session expiry or Close.
	Elect(ctx context.Context, key, id string) (Leadership, error)
	// Expired is closed when the session expires (not by Close). A
	// backend may carry on with a new session after that (ZooKeeper
	// does), but Expired reports only the first expiry: a role should
	// stop acting on what the session stood for (registration,
	// leadership) at once, and open a new Session.
	Expired() <-chan struct{}
}

// Leadership is one candidacy in an election (Session.Elect). When it
// ends (Resign, session expiry, Close), IsLeader is false and Changed is
// closed.
type Leadership interface {
	// IsLeader reports whether this candidate leads now, as far as this
	// process knows: a leader cut off from the backend learns it has
	// lost only when the session expires, so whatever it decides must be
	// fenced.
	IsLeader() bool
	// Changed receives a value when IsLeader changes (coalesced: read
	// IsLeader after each), and is closed when the candidacy has ended.
	Changed() <-chan struct{}
	// Resign ends the candidacy, so the next candidate leads, and returns
	// once IsLeader is false and Changed closed. A second Resign does
	// nothing more.
	Resign() error
}
