//go:build !linux

package wal

import "github.com/sluice-streams/sluice/node/vfs"

// writeback makes the file's data durable (fdatasync): sync_file_range,
// which writes pages back without the metadata, is Linux's.
func writeback(f vfs.File, off, n int64) error { return f.SyncData() }
