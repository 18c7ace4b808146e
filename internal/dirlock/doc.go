// Package dirlock keeps a second process off a data directory that a
// running process owns: a node's container logs, a controller's metadata
// store, a standalone server's data.
//
// Acquire takes an exclusive advisory lock, flock(2) with LOCK_EX|LOCK_NB,
// on the file LOCK in the directory, creating it if needed, and writes the
// holder's process id into it as decimal text and a newline:
//
//	DIR/LOCK    "12345\n"     the holder's pid, written after the lock is taken
//
// A second Acquire of the same directory, from another process or from
// this one through another open file, fails at once with an error that
// matches ErrLocked and names the pid read from the file ("an unknown
// process" if the file is empty or being written). The lock belongs to the
// open file, not to the pid written in it: the kernel drops it when the
// holder exits, however it exits (kill -9 included), so a stale LOCK file
// never keeps the next process out, and the pid in it is only a hint for
// the error message. Release truncates the file and drops the lock; the
// file stays (removing it would let two processes lock two different
// files of one name).
//
// flock locks are advisory: they keep out processes that take the lock
// (every role of the sluice binary does), not a process that ignores it.
// On Linux, flock on NFS is emulated with byte-range locks on the server,
// so it holds across NFS clients too.
package dirlock
