// Package e2e holds the multi-process test of cluster mode (tests only):
// the real sluice binary, built once by TestMain, run as two controllers
// and two nodes on 127.0.0.1 around a real ZooKeeper
// (cluster/clustertest.StartZooKeeper). Every child listens on port 0 and
// says where in its "listening on" line; every child dies with the test
// (Pdeathsig SIGKILL, and a kill at cleanup); their output is printed when
// the test fails.
//
// TestClusterFailover is the controller issue's proof: a stream created
// through one controller's REST API, events written to the nodes the
// /v1/segments/{segment}/uri route names, the leader controller killed
// with SIGKILL in the middle of a scale (held before its sealSegments step
// by SLUICE_TEST_HALT_AT, so "the middle" is the same every run), the other
// controller taking over within the session timeout and finishing the
// scale, then a node killed with SIGKILL and restarted on its data
// directory: its containers are reported unavailable while it is away,
// served again after, and every acknowledged event is read back exactly
// once.
//
// TestClusterDiskLoss (restore_test.go) kills a node with SIGKILL once
// every event is in tier 2, deletes its data directory, and starts it
// again on the empty directory: it rebuilds its containers from their
// recovery records in tier 2, every event is read back exactly once, and
// every stream takes new events.
package e2e
