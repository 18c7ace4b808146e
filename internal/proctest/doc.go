// Package proctest runs the real sluice binary as child processes in
// tests: it builds the binary once per test package, starts children that
// die with the test process (Pdeathsig) and are killed at cleanup, keeps
// their output (printed when the test failed), and waits for the lines
// they print ("node listening on ADDR") with bounded polling.
//
// It is used by the process-level tests under tests/: the node's crash
// tests (tests/crash), the client's kill test (tests/kill) and the
// multi-process tests of the binary (tests/e2e).
package proctest
