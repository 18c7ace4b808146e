// Package memory holds the process-level proof of the node's memory bound
// (tests only): the real `sluice standalone` binary, with a small cache
// and its derived Go memory limit, under heavy client load from the real
// `sluice bench` (writers on many segments and connections as fast as
// they go, readers following them, readers catching up from tier 2 past
// the cache), and the process's peak RSS (VmHWM in /proc/PID/status)
// checked against the cache plus 128 MiB.
//
// The bound is a memory bound, not a timing: a slower machine writes the
// same bytes more slowly and holds no more. The load has two catch-up
// readers, not many: a tier-2 part (8 MiB) that a read's reply holds
// until it is written is memory outside the cache with no node-wide bound
// yet, so many concurrent catch-up readers take the node past the cache
// plus 128 MiB.
package memory
