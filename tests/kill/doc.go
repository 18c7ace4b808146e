// Package kill proves the client library's exactly-once writes through
// the real server: it builds cmd/sluice, runs `sluice standalone` as a child
// process, and while a client.Writer writes numbered events under several
// routing keys it kills the standalone with SIGKILL and starts it again on
// the same data directory, three times. Afterwards every event the writer
// wrote must be in the stream exactly once, in order per key.
//
// The node keeps its address across restarts (a port picked once and
// reused), as a real deployment's node does; the controller's port is
// picked anew at each start, and the Client follows it through a Controller
// (client.WithController) that forwards to whichever controller runs now.
//
// The package has tests only.
package kill
