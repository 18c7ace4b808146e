// Package vfstest holds filesystem test helpers for the node's durable
// files: ErrorFS, which wraps a vfs.FS and lets a test fail, tear or hold
// any write, fsync, rename, read or open at the moment it chooses.
package vfstest
