// Package blocks maps the HDFS head's files (chunks of tier 2, see
// tier2/view) to HDFS blocks, and computes the checksums HDFS clients
// verify: CRC32C per 512 bytes on reads, and MD5-of-MD5-of-CRC32C for a
// file (`hdfs dfs -checksum`, distcp, WebHDFS GETFILECHECKSUM).
//
// # Blocks
//
// A file of n bytes is split into blocks of Size bytes (the last one
// shorter; an empty file has none). Block i covers [i·Size, min((i+1)·Size, n)).
// Its id is derived from the file's path and i alone (Block.ID), so it is
// the same on every head and after restarts, and its generation stamp is
// GenerationStamp.
//
// # Tokens
//
// A block handed to a client carries a block token whose identifier names
// the file and the block (EncodeToken): the data-transfer server finds the
// bytes from the token alone, with no state shared with the RPC server,
// and checks that the block id the client sends is the one the token's
// path and index give. Without security, HDFS clients pass block tokens
// back unread; the security issue will sign them.
//
// Token identifier (bytes):
//
//	+---------+------------------+--------------+-----------------+
//	| "SLB1"  | index (uvarint)  | len (uvarint)| path (len bytes)|
//	+---------+------------------+--------------+-----------------+
//
// # File checksums
//
// A file's checksum is the MD5 of its blocks' MD5s (each the MD5 of the
// block's big-endian CRC32Cs) followed by zeros up to 32 bytes, or the
// next power of two times 32: HDFS's client hashes the whole buffer it
// gathered the block MD5s in, and a checksum that must equal HDFS's
// (distcp compares them) has to do the same.
package blocks
