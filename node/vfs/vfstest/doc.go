// Package vfstest holds filesystem test helpers for the node's durable
// files: ErrorFS, which wraps a vfs.FS and lets a test fail, tear or hold
// any write, fsync, rename, read or open at the moment it chooses, and
// can model a disk of limited size (SetFreeSpace): a write that does not
// fit writes what fits and fails with ENOSPC, as a full disk does.
package vfstest
