// Package seqfile writes and reads Hadoop SequenceFiles (format version 6),
// the byte format of Sluice's tier-2 chunks, so that Hadoop MapReduce, Hive
// and "hadoop fs -text" read chunks in place with no Sluice code.
//
// A Sluice chunk has key class org.apache.hadoop.io.LongWritable (the
// event's offset in its segment) and value class
// org.apache.hadoop.io.BytesWritable (the event's bytes, unchanged);
// Writer.AppendEvent and Reader.NextEvent handle that pair. Writer.Append
// and Reader.Next move raw serialized Writable bytes of any classes.
//
// The package writes version 6 only and reads version 6 only: every Hadoop
// release since 0.18 writes version 6, and older versions differ in header
// fields Sluice never produces. Anything else is refused with ErrCorrupt.
//
// # Encodings
//
// int32 is 4 bytes big-endian (Java DataOutput.writeInt). VInt is Hadoop's
// variable-length integer (WritableUtils.writeVLong): a value in
// [-112, 127] is one byte; otherwise a first byte b tells the length and
// sign (-113..-120: positive with 1..8 following bytes; -121..-128:
// negative, one's complement stored, 1..8 bytes), followed by the
// magnitude big-endian. Text is a VInt byte length followed by UTF-8.
// bool is one byte, 0 or 1.
//
// # Header
//
//	+-----+---+-----------+-------------+------+------+-----------+----------+----------+
//	| SEQ | 6 | key class | value class | comp | blk  | codec     | metadata | sync     |
//	| 3 B |1 B| Text      | Text        | bool | bool | Text, only| see below| 16 bytes |
//	|     |   |           |             |      |      | if comp=1 |          |          |
//	+-----+---+-----------+-------------+------+------+-----------+----------+----------+
//
//	metadata: int32 count, then count pairs of (Text name, Text value),
//	          sorted by name (bytewise); Writer sorts WriterOptions.Metadata.
//
// comp=0, blk=0 is an uncompressed file; comp=1, blk=0 record-compressed;
// comp=1, blk=1 block-compressed; comp=0, blk=1 is corrupt. The only codec
// read or written is org.apache.hadoop.io.compress.DefaultCodec, a zlib
// stream (RFC 1950, header 0x78 0x9c) per compressed field.
//
// # Records (uncompressed and record-compressed files)
//
//	+---------------+------------+-----------+---------------------------+
//	| record length | key length | key       | value                     |
//	| int32         | int32      | key bytes | record length - key length|
//	+---------------+------------+-----------+---------------------------+
//
// In a record-compressed file the value field holds the value compressed
// as one zlib stream, and record length counts the compressed bytes.
//
// A sync escape may stand before any record:
//
//	+------------------+---------------------------+
//	| -1 (ff ff ff ff) | the header's 16 sync bytes |
//	+------------------+---------------------------+
//
// As Hadoop does, the writer puts one before a record whenever the file
// position is at least SyncInterval (102400) bytes past the end of the last
// sync escape (position 0 counting as the first), so tools can split a
// file at sync points.
//
// # Blocks (block-compressed files)
//
//	+-------------+-------+-----------------+-----------------+-----------------+-----------------+
//	| sync escape | count | key lengths     | keys            | value lengths   | values          |
//	| -1 + 16 B   | VInt  | VInt n + n bytes| VInt n + n bytes| VInt n + n bytes| VInt n + n bytes|
//	+-------------+-------+-----------------+-----------------+-----------------+-----------------+
//
// Every block starts with a sync escape. Each of the four fields is a zlib
// stream of, respectively: count VInt key lengths; the keys' bytes back to
// back; count VInt value lengths; the values' bytes back to back. The writer
// closes a block when its keys plus values reach WriterOptions.BlockSize
// uncompressed bytes (Hadoop's default 1,000,000), and at Close.
//
// # Sluice events
//
//	key   (LongWritable):  8 bytes, the offset, int64 big-endian
//	value (BytesWritable): int32 length n, then the n event bytes
//
// # Damage
//
// A chunk is always written whole, so the reader treats any malformed
// input as damage: bad magic or version, negative or oversized lengths
// (records above MaxRecordSize), a sync escape that does not match the
// header, bad zlib data, or a file that ends inside a record. All of these
// return an error wrapping ErrCorrupt with the byte offset where the
// problem was found. The reader never panics; it grows buffers only as
// bytes actually arrive, and bounds every decompressed field (MaxRecordSize
// per record, twice that per block section). A file that ends
// exactly between records (or blocks) is not detectable as damage: the
// format has no trailer, and callers compare the events read with the
// chunk's expected range.
package seqfile
