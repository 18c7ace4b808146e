// Package vfs is the narrow filesystem interface under the node's durable
// files (the write-ahead log and the container checkpoints).
//
// Production code uses Default, a thin layer over package os. Tests wrap an
// FS with vfstest.ErrorFS to inject write, fsync, rename and read failures at
// chosen moments, so the failure paths of the log are exercised without a
// faulty disk.
//
// Only what the log needs is here: whole-file creation, append-only writes,
// positional reads, fsync of files and directories, rename, remove, truncate
// and directory listing.
package vfs
