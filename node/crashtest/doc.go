// Package crashtest holds the node's crash test: the real `sluice node`
// binary serves its containers under concurrent pipelined appends from
// several writers and is killed with SIGKILL at random moments, cycle after
// cycle. After every restart the test reads every segment back and checks
// the guarantees of DESIGN.md §4.1: every acknowledged append is present, in
// order per writer, with no duplicate, although writers resend their
// unacknowledged appends with the same event numbers.
//
// The node runs with small log files (256 KiB, preallocated) and a
// checkpoint every 64 KiB of log, so kills land in the middle of rolls,
// spare preparation and checkpoints as well as appends.
//
// `make test` runs 20 cycles; `make soak` (SLUICE_SOAK=1) runs 300.
// The package has no non-test code.
package crashtest
