// Package datanode is the DataNode side of the HDFS head: HDFS's data
// transfer protocol on its own TCP port, serving the blocks of a
// tier2/view read-only, so that Hadoop's own client (DFSInputStream for
// -cat, -get, open, seek and positional reads; DFSClient's file checksum
// for -checksum and distcp) reads chunk bytes exactly.
//
// It keeps no state about blocks: the block token a client passes back
// (made by the NameNode side with blocks.EncodeToken) names the file and
// the block index, and the block's extent follows from the file's size
// and Config.BlockSize, which must be the NameNode's.
//
// # Requests
//
// A connection carries one op after another (HDFS clients cache and
// reuse DataNode connections). Each op is:
//
//	+-------------------+--------+------------------+-------------------+
//	| version (2 bytes, | op     | message length   | message (protobuf)|
//	| big-endian) = 28  | 1 byte | (uvarint)        | <= MaxRequestSize |
//	+-------------------+--------+------------------+-------------------+
//
// READ_BLOCK (81) carries an OpReadBlockProto, BLOCK_CHECKSUM (85) an
// OpBlockChecksumProto. WRITE_BLOCK (80), REPLACE_BLOCK (83), COPY_BLOCK
// (84) and TRANSFER_BLOCK (86) are refused with ERROR_ACCESS_TOKEN and a
// message starting ReadOnlyMessage ("Permission denied: ..."); the
// short-circuit, block-group-checksum and custom ops with
// ERROR_UNSUPPORTED. Another version, an unknown op or an oversized
// message gets an ERROR response; then, as after every refusal, the
// connection is closed (after a moment's drain, so the client reads the
// answer rather than a reset). A request that does not decode closes the
// connection. Every wait has a deadline (Config's timeouts) and at most
// Config.MaxConns connections are open. The accept loop, the connections'
// goroutines and Close are internal/connserve's.
//
// # Read responses
//
// A BlockOpResponseProto (uvarint-delimited): status SUCCESS and
// readOpChecksumInfo {CRC32C (NULL if the client asked for no
// checksums), 512 bytes per checksum, chunkOffset}. The data starts at
// chunkOffset, the requested offset rounded down to a multiple of 512,
// and ends at the requested end rounded up to one (or the block's end).
// Then packets, each at most Config.PacketSize data bytes (256 KiB):
//
//	+--------------+-------------+-------------------+--------------+------+
//	| PLEN         | HLEN        | PacketHeaderProto | CRCs         | data |
//	| 4 bytes, BE  | 2 bytes, BE | HLEN bytes        | 4 bytes, BE, |      |
//	| =4+CRCs+data |             |                   | per 512 data |      |
//	+--------------+-------------+-------------------+--------------+------+
//
// The header holds offsetInBlock (of the packet's first data byte),
// seqno (0, 1, ...), lastPacketInBlock, dataLen and syncBlock (false).
// The last packet is empty, with lastPacketInBlock set. The client then
// sends a uvarint-delimited ClientReadStatusProto (CHECKSUM_OK or
// SUCCESS), after which the connection waits for another op
// (Config.IdleTimeout). A client that leaves early closes only its own
// connection.
//
// # Block checksums
//
// BLOCK_CHECKSUM answers OpBlockChecksumResponseProto {bytesPerCrc 512,
// crcPerBlock, blockChecksum, crcType CRC32C}. For MD5CRC (the default)
// blockChecksum is the MD5 of the block's big-endian CRC32Cs
// (blocks.BlockMD5), which DFSClient combines into an
// MD5-of-MD5-of-CRC32C file checksum. For COMPOSITE_CRC it is the
// big-endian CRC32C of each stripe of the block (the whole block if the
// stripe length is 0), as a DataNode composes its chunk CRCs; the file's
// COMPOSITE-CRC32C is then the CRC32C of its bytes, equal to a real HDFS
// copy's whatever the block sizes (dfs.checksum.combine.mode).
//
// # Errors
//
// A token the blocks package did not make, a block id that is not the
// token's, a file the view does not have (or cannot reach now) or a
// range outside the block is answered with status ERROR and a message
// saying which; Hadoop's client then tries another location or asks the
// NameNode again.
package datanode
