// Package session keeps a cluster role on a coordination session across
// expiries: one loop, shared by the controller's leader election
// (controller/leader) and a node's membership (node/membership), that
// owns the current cluster.Session.
//
// Why a package of its own: the session interface (cluster.Session) sits
// beside cluster.Store in package cluster, so that a backend (zkstore)
// implements it without importing this loop, its backoff and its
// logging; the roles import both.
//
// # The loop
//
// Start joins the role on the first session (Config.Join: register,
// enter an election, read what to follow), then runs Config.Follow until
// the session is lost, over and over:
//
//	Start: Join(first) ──► Follow(ctx, s) ──► s expired, or Follow returned
//	                          ▲                         │
//	                          │                         ▼
//	                   Join(next) ◄── Open a new session, close s
//	                                   (exponential backoff with jitter
//	                                    between failed Opens and Joins)
//
// In detail:
//
//   - A Join that fails with cluster.ErrExists (the registration of an
//     earlier session of the same role is still there: it goes when that
//     session expires) is retried on the same session, with backoff.
//   - Follow's ctx ends when the session expires (context.Cause is
//     ErrExpired) or at Close (ErrClosed); Follow stops acting on the
//     session before it returns: a node fences its containers, a leader
//     stops its loops. Follow may also return by itself (a candidacy
//     ended): the session is then treated as lost.
//   - A failed Open, or a failed Join on a new session, is retried with
//     a new session; the previous one is closed once its successor is
//     open. Without Config.Open the role joins again on the same session
//     (a ZooKeeper store reconnects with a new session by itself) but
//     notices no later expiry.
//   - Close ends Follow (or a pending Open or Join), waits for it and
//     closes the current session, which deletes the registration.
//
// The loop runs in one goroutine: Join and Follow are never called
// concurrently, so a role may keep what Join set up in plain fields for
// Follow.
package session
