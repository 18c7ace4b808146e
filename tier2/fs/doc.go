// Package fs is the tier-2 backend for a directory on a local or
// NFS-mounted filesystem, the default tier 2. A Storage maps a storage
// path (see package tier2) onto a file under its root directory:
//
//	<root>/<scope>/<stream>/segment=<segment number>/<first offset>.seq
//
// # Durability
//
// Create makes missing parent directories (mode 0755, each one's parent
// directory fsynced so the new entry survives a crash) and creates the
// file exclusively (O_EXCL) with mode 0444: the creating descriptor may
// still write it, nobody else may. A Storage remembers the directories it
// made or found (dirs.go), so later files in them cost no mkdir and no
// directory fsync; Remove, RemoveAll and Rename forget what they may
// remove, and a Create that finds a remembered directory gone (removed
// behind the Storage's back) forgets it and makes it again. Writer.Close
// fsyncs the file before closing it.
//
// # Write-back (writeback.go)
//
// A Writer starts the write-back of every WritebackBytes (1 MiB) it
// writes (sync_file_range(2), SYNC_FILE_RANGE_WRITE), waits for the range
// before, and pauses as long as that wait took (at most 50 ms): at most
// about 2 MiB of the file is dirty or queued at any time, and Close's
// fsync finds little to write, so the small syncs of a log on the same
// disk do not queue behind a whole chunk. Unpaced (tier2.Paced) drops the
// pauses for a file whose writer is behind its deadline. It is an optimisation, not
// durability (that is Close's fsync): a filesystem without
// sync_file_range (EINVAL, ENOSYS, EOPNOTSUPP) is written without it, and
// an I/O error of write-back fails the write, stickily, as a failed write
// does. Rename is rename(2), which replaces the destination
// atomically, followed by an fsync of the destination's directory (and the
// source's, when it differs), so a chunk renamed into place stays there
// after a crash.
//
// # Errors
//
// Errors name the storage path (never the root) and wrap the cause, so
// errors.Is works with tier2.ErrNotExist, tier2.ErrExist and the
// underlying errno. Conditions that may pass — a full disk or quota, an
// I/O error, a read-only or stale NFS mount, a timeout — also match
// tier2.ErrUnavailable. Writing to or closing a Writer that is already
// closed fails with io/fs.ErrClosed.
//
// Paths are checked with tier2.CheckPath before anything is joined to the
// root, so no path reaches outside it (symlinks placed inside the root by
// someone else are followed, as the filesystem does).
package fs
