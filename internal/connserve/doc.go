// Package connserve owns the skeleton of the module's TCP servers: the
// accept loop, the bound on open connections, one goroutine per
// connection, and Close, which closes everything and waits. A server
// built on it (the HDFS head's NameNode and DataNode sides) supplies
// only a Handler that speaks its protocol on one connection.
//
// What a Server does, and in which order:
//
//   - Serve(l, h) accepts on l until Close or a permanent accept error.
//     Transient accept errors (timeouts; EMFILE, ENFILE, ENOBUFS, ENOMEM:
//     out of descriptors or buffers) are logged and waited out with
//     retry.NewBackoff(5ms, 1s) and retry.Sleep, reset by the next
//     success, so a listener out of descriptors neither spins nor stops.
//     Several Serve loops (listeners) may share one Server.
//   - Each accepted connection runs h in a goroutine of its own. When h
//     returns, the connection is closed and forgotten, and then
//     Config.ConnDone, if set, hears h's error. A connection beyond
//     Config.MaxConns is closed at once, unserved (the first of a burst
//     of refusals is logged at warn).
//   - Close cancels the context every handler got, closes every listener
//     and connection, and waits for every Serve loop and handler
//     goroutine. A handler must return once its context is done or its
//     connection is closed; goroutines it starts are its own to stop.
//     After Close, Serve closes its listener and returns ErrClosed.
//
// Lock order: Server.mu alone (listeners, connections, closed); it is
// never held across I/O, a log entry or a call out of the package.
//
// node/server keeps its own accept loop: it waits for a free slot before
// accepting (back-pressure at the bound rather than a refusal) and counts
// connections per peer, neither of which this package does.
package connserve
