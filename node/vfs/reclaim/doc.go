// Package reclaim gives the space of removed files back to the filesystem
// a little at a time, so that removing gigabytes does not take the disk
// from a log's small syncs beside it.
//
// Unlinking a large file frees all its blocks in the filesystem's next
// journal commit; on a filesystem mounted with online discard (ext4 and
// XFS "-o discard", common on virtual and flash disks) that commit also
// sends the device a discard for every freed extent. Gigabytes removed at
// once (the chunks of a deleted stream, the log files a burst filled)
// queue a second and more of discards on the device, and the log's
// fdatasyncs wait behind them: 10-17 ms each while the 2 GiB of a deleted
// burst were discarded, against 0.2-1 ms otherwise (docs/BENCHMARKS.md,
// "Background I/O beside the log", "Freeing the space a bit at a time").
//
// A Reclaimer takes over a file or directory the caller removes: Remove
// renames it into a trash directory on the same filesystem (one rename:
// the path is gone at once, as after an unlink) and a goroutine then cuts
// each file down from its end in steps of Config.Step bytes, each step an
// ftruncate followed by an fdatasync (which commits the freed extents, and
// their discards, in that small piece), pausing so that no more than
// Config.Rate bytes a second are freed, and unlinks it when it is empty.
// While more than Config.MaxBacklog bytes wait, or the filesystem has less
// than Config.MinFree free, it frees without pauses: the disk's space
// comes before the smoothness of the syncs.
//
// RemoveAfter holds a file's freeing off for a grace period: a reader
// that opened it before the removal reads it whole meanwhile, as it would
// after an unlink (tier 2's chunks, read by heads and catch-up readers, get
// a minute; the log's files, which only the log reads, none). A file with
// other hard links is unlinked, never cut down (its blocks are not this
// name's alone); a path the trash cannot take (no room for the trash
// directory, another filesystem under a symbolic link) is unlinked at
// once. Resume skips what is queued already.
//
// A crash leaves the trash directory with what was not reclaimed yet;
// Resume, called by the trash's owner when it opens, takes it up again. A
// nil *Reclaimer removes at once (Remove unlinks, Resume empties the
// trash), which keeps the callers' code one path.
//
// Errors while reclaiming (a file that cannot be opened for writing or
// truncated) fall back to unlinking the file; an unlink that fails leaves
// the file in the trash for the next Resume. None of them reaches the
// caller: the data was already removed from its point of view.
package reclaim
