// Package proctest runs the real sluice binary as child processes in
// tests: it builds the binary once per test package, starts children that
// die with the test process (Pdeathsig) and are killed at cleanup, keeps
// their output (printed when the test failed), and waits for the lines
// they print ("node listening on ADDR") with bounded polling.
//
// It is used by every test that runs the real binary: the process-level
// tests under tests/ (crash, kill, e2e, docs) and some tests of
// cmd/sluice, the executor and the scheduler.
package proctest
