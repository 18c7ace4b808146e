// Package webhdfs serves tier 2 read-only over WebHDFS, the REST API of
// HDFS, so that Hadoop's webhdfs:// FileSystem (hadoop fs, distcp,
// MapReduce, Hive, Spark), curl and Python read streams. It is an
// http.Handler over a tier2/view.View (NewHandler); the gateway role
// mounts it on its HTTP server.
//
// # Requests
//
//	GET  /webhdfs/v1/<path>?op=<OP>[&<param>=<value>...]
//
// <path> is a path of the view (percent-decoded; "/webhdfs/v1" and
// "/webhdfs/v1/" are the root). The op is case-insensitive. Bounds,
// checked before anything is looked up: MaxPath bytes of decoded path,
// MaxQuery bytes of query, MaxUser bytes of user.name (Hadoop's default
// user pattern); offset and length are non-negative int64s, buffersize at
// least 1, as Hadoop's parameters are. HEAD is GET without a body.
//
// # Operations
//
// Answers are the JSON of HDFS's NameNode (keys sorted as its Jackson
// maps write them; no trailing newline), checked op by op against a real
// one (TestAgreesWithRealHDFS):
//
//	GETFILESTATUS, GETFILELINKSTATUS  {"FileStatus":{...}}; files 0444,
//	                     directories 0555, owner sluice, group supergroup,
//	                     replication 1, blockSize Config.BlockSize, fileId
//	                     the view's stable id, childrenNum counted
//	LISTSTATUS           {"FileStatuses":{"FileStatus":[...]}}, written entry
//	                     by entry; a file lists as itself; childrenNum -1
//	                     (not counted) for directories in a listing
//	LISTSTATUS_BATCH     {"DirectoryListing":{"partialListing":{"FileStatuses":
//	                     {"FileStatus":[...]}},"remainingEntries":N}}: BatchSize
//	                     entries with names after startAfter
//	OPEN                 the bytes, 200 with Content-Length, from offset for
//	                     length (to the end if absent or past it), copied
//	                     from the chunk (no buffering); no redirect (Hadoop's
//	                     client takes a 200 to its redirecting request as
//	                     the data, as from HttpFS); noredirect=true answers
//	                     {"Location": the same URL}
//	GETFILECHECKSUM      {"FileChecksum":{"algorithm","bytes","length":28}}:
//	                     hdfsgateway/blocks.Checksum, the RPC head's and a real
//	                     HDFS's value for the same block size
//	GETCONTENTSUMMARY    {"ContentSummary":{...}}, quotas -1, no snapshots
//	GETQUOTAUSAGE        {"QuotaUsage":{...}}
//	GETFILEBLOCKLOCATIONS {"BlockLocations":{"BlockLocation":[...]}}: every
//	                     block on the host the client called (splits)
//	GETHOMEDIRECTORY, GETTRASHROOT  {"Path":"/user/<user.name>[/.Trash]"}
//	                     (user dr.who without user.name)
//	GETDELEGATIONTOKEN   {"Token":null}, as an insecure HDFS answers
//	GETSERVERDEFAULTS    {"FsServerDefaults":{...}}, trashInterval 0 (so
//	                     "hadoop fs -rm" gets as far as its DELETE)
//	CHECKACCESS          200 for reading (and traversing a directory); write,
//	                     or execute on a file, AccessControlException
//	GETACLSTATUS         no entries; GETXATTRS (encoding required) and
//	                     LISTXATTRS: none
//	GETSTORAGEPOLICY, GETALLSTORAGEPOLICY  HOT
//
// Every other GET op of Hadoop 3.5 (snapshots, erasure coding, GETSTATUS,
// GETLINKTARGET, GET_BLOCK_LOCATIONS, ...) is an UnsupportedOperationException.
//
// # Errors
//
// As HDFS's web servers answer them:
//
//	{"RemoteException":{"exception":"<simple name>","javaClassName":"<class>","message":"..."}}
//
//	404 FileNotFoundException   no such path ("File does not exist: /p";
//	                            listings "File /p does not exist."), OPEN or
//	                            GETFILECHECKSUM of a directory
//	400 IllegalArgumentException  a bad path, query, parameter, method or op
//	400 UnsupportedOperationException  a GET op not served
//	403 AccessControlException  every mutation: PUT, POST and DELETE, and any
//	                            mutating op name whatever the method, with
//	                            ReadOnlyMessage ("Permission denied: ..."),
//	                            which Hadoop's shell prints as is
//	403 IOException             OPEN's offset at or past the end of a
//	                            non-empty file; GETXATTRS of a named xattr
//	503 RetriableException      tier 2 or the controller unavailable
//	                            (view.ErrUnavailable); the client may retry
//
// A client that goes away mid-body only ends its own request (the copy
// stops at the write error); the handler keeps no state between requests
// and starts no goroutine.
package webhdfs
