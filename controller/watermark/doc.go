// Package watermark is the deterministic core of event-time watermarks:
// the writers' reports of event time and position, the stream's epochs
// and the previous watermark in; the next watermark (or none) and the
// writers that timed out, out. It does no I/O and reads no clock (the
// caller passes now); the controller's driver stores its inputs and
// outputs (package controller, "Watermarks").
//
// # Semantics (as in Pravega)
//
// A writer notes an event time T at a position P (per segment, the offset
// just after its last acknowledged event there): every event it writes
// after the note has a time of at least T, by the application's promise.
// A watermark (Lower, Upper, Cut) says: when each active writer noted its
// last time, the least of those times was Lower, the greatest Upper, and
// every writer's position was at or before Cut. So a reader whose position
// is at or after Cut has read every event any active writer wrote before
// noting a time of at least Lower; a reader at or before Cut has read
// nothing written after a note later than Upper.
//
// Compute emits a watermark only when every active writer has reported a
// time past the previous watermark's Lower (otherwise a writer that is
// behind would move time back); Lower and Upper never decrease and Cut
// never moves back. A writer whose last report is older than the timeout
// is timed out: it is left out of the computation and reported in
// TimedOut so that the driver forgets it, so a writer that went silent
// cannot hold time back for ever.
//
// # The cut across epochs
//
// Writers' positions may lie in segments of different epochs (a scale
// happened between their reports). The cut is taken in one epoch E: the
// newest epoch that created any reported segment (or the previous cut's
// epoch, if newer). Every reported segment is then either active in E (the
// cut keeps the greatest reported offset of it) or sealed before E (every
// segment of E overlapping it comes after all of it, so offset 0 of those
// is past the position). Segments of E nobody reported start at the
// previous cut's offset, or 0. A cut made of one epoch's segments is a
// consistent stream cut, and taking the maximum with the previous cut
// keeps it from moving back.
package watermark
