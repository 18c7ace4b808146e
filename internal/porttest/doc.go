// Package porttest hands tests TCP ports on loopback that stay theirs
// until the test ends, for servers that must be told their port before
// they start (a ZooKeeper server, a task launched on a Mesos offer's
// ports, a node restarted on the address it had).
//
// Listening on port 0 and closing the listener is not enough: the port
// comes from the kernel's ephemeral range (ip_local_port_range, usually
// 32768-60999), from which every outgoing connection on the machine also
// takes its local port, so in the moment between the test choosing the
// port and the server binding it a client somewhere can take it, and the
// server fails with "address already in use". Two test processes that
// run at once (go test runs packages in parallel) can also choose the
// same port.
//
// Ports therefore picks ports outside the ephemeral range (the larger of
// the spans below and above it, read from
// /proc/sys/net/ipv4/ip_local_port_range), starting at a random place,
// and reserves each across processes with an advisory flock(2) on a file
// named after the port in $TMPDIR/sluice-test-ports-UID, held until the
// test's cleanup. A port is only handed out if it can be bound on 0.0.0.0
// at that moment (which also covers 127.0.0.1). A process killed mid-test
// drops its locks with it, so nothing stale keeps a port out.
package porttest
