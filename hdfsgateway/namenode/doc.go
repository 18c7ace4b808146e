// Package namenode is the NameNode side of the HDFS head: it serves
// Hadoop IPC over TCP, answering ClientNamenodeProtocol's read calls from
// a tier2/view.View, so that Hadoop's own client (FsShell, FileSystem,
// Spark, Hive) lists and stats tier 2 with hdfs:// URIs and learns where
// each block is. The blocks' bytes are served by the head's data-transfer
// server (package hdfsgateway/datanode), which block locations point at
// (Config.DataAddr). The namespace is read-only: every call that would
// change it is refused with the AccessControlException Hadoop's shell
// prints as "Permission denied".
//
// # The wire
//
// A connection starts with a 7-byte preamble:
//
//	+------+------+------+------+---------+--------------+---------------+
//	| 'h'  | 'r'  | 'p'  | 'c'  | version | service class| auth protocol |
//	+------+------+------+------+---------+--------------+---------------+
//	                              9         any            0 (NONE: SIMPLE)
//
// Version 9 only. Auth protocol 0 (SIMPLE: the user is named in the
// connection context, and trusted) only: SASL (-33, 0xDF; Kerberos and
// tokens) is refused with a FATAL answer until the head has security.
//
// Then both sides exchange frames. Every frame is a 4-byte big-endian
// length and that many bytes of varint-delimited protobuf messages:
//
//	request:  | length (4) | RpcRequestHeaderProto | RequestHeaderProto | request |
//	context:  | length (4) | RpcRequestHeaderProto | IpcConnectionContextProto   |   callId -3, first
//	ping:     | length (4) | RpcRequestHeaderProto |                                callId -4, unanswered
//	response: | length (4) | RpcResponseHeaderProto | response |                    status SUCCESS
//	error:    | length (4) | RpcResponseHeaderProto |                               status ERROR or FATAL
//
// (each message preceded by its length as a protobuf varint). The
// RpcRequestHeaderProto carries the call id, the client's 16-byte id and
// the retry count, which the response header echoes with the server's IPC
// version (9). RequestHeaderProto names the method and the protocol
// (org.apache.hadoop.hdfs.protocol.ClientProtocol). An ERROR answer names
// the Java exception the client rethrows (exceptionClassName, errorMsg)
// and keeps the connection; a FATAL one (callId -1) ends it.
//
// # Hostile input
//
// Lengths are bounded before anything is read: a frame by
// Config.MaxFrame (16 MiB by default, where Hadoop allows 64: no read
// call carries data), every message inside it by the frame. A connection
// that sends bytes that are not Hadoop IPC gets one FATAL answer (when it
// can still be told) and is closed; one cut mid-frame is just closed;
// neither affects the others. Connections are bounded in number
// (MaxConns; one more is closed at once), in calls in flight per
// connection (MaxCallsPerConn), in time to finish the preamble
// and context (HandshakeTimeout), in silence (IdleTimeout; Hadoop's client
// pings every minute while it waits) and in time to take an answer
// (WriteTimeout). A malformed request message, an unknown method or
// protocol answers ERROR to that call only.
//
// # Calls
//
// Every user may read everything (SIMPLE authentication trusts the name
// the client sends; the tree is 0444/0555 for all). Served: getFileInfo (an empty answer, Java's null, for a missing path),
// getFileLinkInfo, getLocatedFileInfo, getListing (pages of ListingLimit
// entries after startAfter, with remainingEntries; a file lists as
// itself; block locations when needLocation), getBlockLocations (the
// blocks of blocks.Of that hold a byte of [offset, offset+length), the
// last block, complete, never under construction), getServerDefaults
// (CRC32C per 512 bytes, replication 1, the block size), getFsStats,
// getContentSummary and getQuotaUsage (no quotas), getPreferredBlockSize,
// getStoragePolicy/getStoragePolicies (HOT), getAclStatus (no ACL
// entries), checkAccess (read and execute only), isFileClosed (always),
// getHAServiceState (ACTIVE), getXAttrs/listXAttrs (none), getEZForPath
// and getErasureCodingPolicy (none), getLinkTarget (no symlinks), and the
// no-ops renewLease, msync, getDataEncryptionKey, getDelegationToken and
// getSnapshottableDirListing.
//
// Refused: every other method of the protocol changes the namespace and
// answers org.apache.hadoop.security.AccessControlException ("Permission
// denied: user=alice, access=WRITE, op=mkdirs, path=/s/x: sluice's HDFS
// head is read-only", the user being the connection's), except a
// few administrative reads (datanode reports, cache pools, snapshot
// diffs, encryption zone lists, ...) that answer RpcNoSuchMethodException.
//
// View errors map to the exceptions Hadoop's client expects: a missing
// entry is java.io.FileNotFoundException (null for getFileInfo), an
// unavailable tier 2 or controller org.apache.hadoop.ipc.RetriableException.
//
// # Files and blocks
//
// Every entry is owned by view.Owner and view.Group, with the view's
// modes (0444 files, 0555 directories) and ID as the inode id; a file has
// replication 1 and Config.BlockSize blocks, whose ids and tokens come
// from package blocks: the data-transfer server finds a block's file from
// the token alone. The one DataNode of every block is Config.DataAddr,
// with a uuid derived from that address.
//
// # Goroutines
//
// Serve runs one accept loop per listener and one goroutine per
// connection, which reads frames and starts a goroutine per call, up to
// MaxCallsPerConn at once (then it reads no further frame until one
// ends). Answers go out as calls end, one frame at a time, in any order:
// Hadoop's client matches them by call id. A connection's goroutine waits
// for its calls before it ends; Close closes the listeners and
// connections, cancels the calls in flight and waits for everything.
package namenode
