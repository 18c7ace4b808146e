// Package segclient is the low-level segment client: one TCP connection to
// one node, speaking package protocol, with one method per command. It is
// what tests, the crash harness and the client library build on; it knows
// nothing of streams, routing or retries.
//
// # Connection
//
// Dial opens the connection and exchanges Hello. Requests are written
// through one protocol.Encoder, one at a time (a mutex that honours the
// caller's context); a reader goroutine delivers each reply to the call
// waiting for its request id (ids come from an atomic counter). Calls may
// run concurrently and are answered in whatever order the node finishes
// them, except that a connection's appends are acknowledged in order.
// AppendAsyncNotify lets a caller act on an acknowledgement in the reader
// goroutine itself, in that order, without waking a goroutine of its own.
//
// # Errors
//
// An ErrorReply becomes a *protocol.Error, so errors.Is(err,
// protocol.ErrNoSuchSegment) and the like classify it. When the connection
// breaks (the node closed it, a write or read failed, Close was called, or
// the node sent an ErrorReply with request id -1, which concerns the whole
// connection) every pending call and every later one fails with an error
// wrapping ErrConnectionClosed, and, when the node said why, the
// protocol error too.
//
// # Cancellation
//
// Every method blocks until its reply arrives, ctx is done, or the
// connection breaks. Cancelling ctx abandons the wait, not the request:
// once written, the node may still apply it (a create, an append, a seal),
// and the caller finds out by asking again. If ctx is done while the
// request is still being written, the frame may be cut short; the stream
// can then not be trusted and the connection is closed.
package segclient
