// Package protocol is the wire protocol shared by the Sluice node (server)
// and client: the frame format, the commands and their replies, the wire
// error codes, the framing of events inside segments, and segment names.
// The data model follows Pravega's.
//
// # Frames
//
// A connection carries a sequence of frames in each direction. All
// integers are big-endian. This layout is part of the wire format.
//
//	0      2      4              8            12
//	+------+------+--------------+------------+---------------------+-------------------+
//	| type | flags|  length      |  hdrLen    | msgpack header      | raw payload       |
//	| u16  | u16=0|  u32 (body)  |  u32       | (hdrLen bytes)      | (length-4-hdrLen) |
//	+------+------+--------------+------------+---------------------+-------------------+
//
// The fields:
//
//   - type: the message type (table below).
//   - flags: reserved, must be 0.
//   - length: the number of bytes after the first 8 (hdrLen, header and
//     payload), so length >= 4; at most MaxFrameSize (16 MiB).
//   - hdrLen: the size of the msgpack header, hdrLen <= length-4.
//   - msgpack header: the message's fields as a msgpack map keyed by the
//     short names of the msgpack struct tags in messages.go. Every message
//     stores its request id under "id". Keys a receiver does not know are
//     ignored, so fields can be added; a header must be exactly one msgpack
//     value.
//   - raw payload: bytes that never go through msgpack. Only AppendBlock
//     (its event block) and SegmentRead (the segment bytes read) have one;
//     for any other type it must be empty.
//
// The Encoder writes header and payload with one net.Buffers write (writev
// on a TCP connection) so payloads are never copied on the way out.
//
// # Memory of the Decoder
//
// The Decoder allocates a frame's payload (and a msgpack header above its
// 64 KiB scratch buffer) only as the bytes arrive: up to 1 MiB at once,
// then doubling. A receiver that reads from many peers gives each Decoder
// a shared Budget: the Decoder then acquires a frame's whole allocation
// from it before reading the frame's body, and the payload's bytes pass
// to the caller with the message (PayloadSize), who releases them.
//
// # Decode errors
//
// Fatal errors: the stream can no longer be trusted; the receiver closes
// the connection (after sending an ErrorReply with request id -1 if it
// can):
//
//   - ErrMalformedFrame: flags != 0, length < 4, hdrLen > length-4, or the
//     stream ends inside a frame (then it also wraps io.ErrUnexpectedEOF).
//   - ErrFrameTooLarge: length > MaxFrameSize. Nothing of the body is read
//     or allocated.
//
// Non-fatal errors: the whole frame was consumed and the next frame can be
// read; the receiver answers with an ErrorReply carrying the request id
// when it could be recovered from the header (DecodeError.RequestID, -1
// otherwise):
//
//   - ErrUnknownType (= ErrUnknownCommand): a type this side does not know.
//   - ErrMalformedMessage: the msgpack header does not decode into the
//     type's fields, has trailing bytes, or a payload came with a type that
//     has none.
//
// A clean end of stream between frames is io.EOF. Field validation
// (names, limits) is not the decoder's job: the server calls
// Request.Validate and answers errors wrapping ErrInvalidArgument.
//
// # Message types
//
//	 1 Hello              both directions; versions [LowVersion, HighVersion], WireVersion = 1
//	 2 ErrorReply         answer to any failed request
//	10 CreateSegment      -> 11 SegmentCreated
//	12 GetSegmentInfo     -> 13 SegmentInfo
//	14 SetupAppend        -> 15 AppendSetup
//	16 AppendBlock        -> 17 DataAppended      (payload: event block)
//	18 ReadSegment        -> 19 SegmentRead       (payload: segment bytes)
//	20 SealSegment        -> 21 SegmentSealed
//	22 TruncateSegment    -> 23 SegmentTruncated
//	24 DeleteSegment      -> 25 SegmentDeleted
//	26 MergeSegments      -> 27 SegmentsMerged
//	28 GetAttributes      -> 29 Attributes
//	30 UpdateAttributes   -> 31 AttributesUpdated
//	32 GetTierStats       -> 33 TierStats
//	34 CheckBoundary      -> 35 BoundaryChecked
//	36 GetSegmentRates    -> 37 SegmentRates
//	38 GetWriterState     -> 39 WriterState
//
// A reply carries the request id of its request. Type and ErrorCode
// numbers are never reused or renumbered.
//
// # Segment rates (auto-scaling)
//
// GetSegmentRates (36) asks a node for the append rates of 1 to
// MaxRateSegments (1024) segments; more, none or an invalid name is
// refused with InvalidArgument. Its header:
//
//	{"id": i64, "s": [segment name, ...]}
//
// SegmentRates (37) answers with the node's averaging windows, shortest
// first, and one entry per segment asked, in the same order:
//
//	{"id": i64, "w": [window ms (i64), ...],
//	 "r": [{"s": segment name,
//	        "m": true if this node does not serve the segment now (absent: false),
//	        "age": ms measured (i64, absent: 0),
//	        "e": [events/s per window (float64), ...],
//	        "b": [bytes/s per window (float64), ...]}, ...]}
//
// Neither has a payload. The bytes counted are the appended blocks', event
// framing included. A reply to 1024 segments is about 100 KB.
//
// # Events inside segments
//
// Segment bytes (and the payload of AppendBlock) are a sequence of framed
// events; a reader parses them with NextEvent:
//
//	+--------------+---------------------+--------------+-----
//	| length u32BE | event bytes         | length u32BE | ...
//	|              | (length bytes)      |              |
//	+--------------+---------------------+--------------+-----
//
// length <= MaxEventSize (8 MiB); empty events are allowed. An AppendBlock
// holds a whole number of events (CheckBlock), so events never straddle
// blocks in a segment.
//
// An event boundary is an offset where an event starts, or the segment's
// length. Only a boundary can be a truncation point (TruncateSegment above
// the segment's start) or the start of a read with ReadSegment.AtEvent;
// the node refuses any other offset with NotEventBoundary (code 20),
// naming the boundaries on either side, and changes nothing. The node
// finds boundaries from what it stores: every append block, tier-2 chunk
// and chunk part starts at one, and the length prefixes lead from there.
// CheckBoundary asks without changing anything. Offsets the system hands
// out (a segment's length, a reader's position, a stream cut from the
// controller) are boundaries.
//
// # Event numbers
//
// A writer numbers its events; AppendBlock.LastEventNumber is the number
// of the block's last event and must lie in 0..MaxEventNumber (2^63-2),
// else the block is refused with InvalidEventNumber (nothing is stored).
// The node keeps each writer's last stored number per segment: a block
// numbered above it is stored, one numbered at or below it is a resend
// of a stored block and is acknowledged without being stored again. That
// holds because the writer numbers each block once, rising (the Go client
// numbers events consecutively from 0, or from AppendSetup's number + 1),
// resends blocks unchanged and in order after a SetupAppend, and because a
// connection:
//
//   - refuses (InvalidEventNumber) a writer's block numbered at or below
//     its previous block on the connection since its SetupAppend; and
//   - after refusing a writer's block with a retriable error (WrongHost,
//     ContainerUnavailable) refuses its next blocks with WriterNotSetUp
//     until it sets up again, so no later block is stored ahead of the one
//     the writer will resend.
//
// # Writer state
//
// GetWriterState (38) asks what a segment holds of one writer id; its
// msgpack header is a map {"id": request id, "s": segment, "w": writer
// id}, no payload. WriterState (39) answers {"id", "s", "w", "le": the
// last event number stored for the writer, NoEventNumber (-2^63) if none,
// "sd": true if the segment is sealed (omitted when false)}, no payload.
// Like SetupAppend it answers for sealed segments and only once
// everything logged before it is durable; unlike it, it binds nothing to
// the connection and changes nothing. A segment that does not exist (never
// created, or deleted by a truncation) is NoSuchSegment. The client's
// sequenced writers ask it of every segment of a stream's history when
// they resume (package client, "Writers across restarts").
//
// # Names
//
// Scope and stream names are 1-255 characters of [A-Za-z0-9_.-], not "."
// or ".."; names beginning with '_' are reserved for internal streams.
// A segment's qualified name is
//
//	scope/stream/N.#epoch.E
//
// with N the segment number and E the epoch that created it, both
// canonical non-negative decimals. A transaction's shadow segment is its
// parent's name followed by "#transaction." and the transaction id in
// canonical UUID text (36 characters, lower-case hex, e.g.
// 0f8fad5b-d9cb-469f-a165-70867728950e). Segment names are at most 1024
// bytes. UUID-valued attribute keys use the same canonical text form.
//
// # Containers
//
// A segment belongs to container
//
//	FNV-1a-64(bytes of ParentSegment(name)) mod containers
//
// (FNV-1a, 64-bit: offset basis 14695981039346656037, prime 1099511628211;
// the modulo taken on unsigned 64-bit values). A transaction segment
// therefore lives in its parent's container. The mapping is persistent
// state of a cluster: it must never change.
package protocol
