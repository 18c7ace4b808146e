// Package nfsexport is the NFS head: tier 2's read-only tree
// (tier2/view) served over NFSv3 and MOUNT v3 on one TCP port (default
// 127.0.0.1:12049, DefaultListen), for libnfs's tools (nfs-ls, nfs-cat,
// nfs-cp) and the kernel's NFS client. It is a role: New(view, Config),
// Serve(listener), Close.
//
// # Pieces
//
//   - go-nfs (github.com/willscott/go-nfs v0.0.4) decodes the NFSv3 and
//     MOUNT calls and encodes the answers; this package gives it a Handler
//     of its own (handler.go) and a read-only billy.Filesystem over the
//     view (fs.go): files 0444, directories 0555, owner UID:GID
//     65534:65534 (nobody:nogroup; the view's owner names have no
//     numbers), sizes and mtimes from the view, fileid = view.Entry.ID.
//     Reads are view.File.ReadAt calls of the client's count (at most
//     1 MiB), never a whole file.
//   - The gate (gate.go) reads every call before go-nfs does, because
//     go-nfs allocates whatever length a call claims (a 4-byte length
//     field can ask for 4 GiB) and answers some failures without the
//     body RFC 1813 puts after the status. It closes the connection on a
//     record in fragments, a record that is not a CALL, a credential or
//     verifier over 400 bytes, a handle over 64 bytes, a LOOKUP name
//     over 255, a MOUNT path over 1024, or any length past the record's
//     end; it answers itself every write-type procedure (NFS3ERR_ROFS),
//     MOUNT's EXPORT, DUMP and UMNTALL, other programs (PROG_UNAVAIL),
//     other versions (PROG_MISMATCH, 3..3) and unknown procedures
//     (PROC_UNAVAIL); it lowers a READ count over 1 MiB to 1 MiB; it
//     answers FSSTAT, FSINFO, PATHCONF and READ of a stale handle itself; it
//     answers FSINFO itself (rtmax and rtpref 1 MiB, properties
//     FSF3_HOMOGENEOUS only: go-nfs's claims 1 GiB reads and links); and it
//     answers READ itself (read.go: one stat, one ReadAt into the reply's
//     buffer, one write, about four times go-nfs's throughput), leaving
//     go-nfs every READ out of the ordinary (a failing
//     read; a directory is NFS3ERR_ISDIR). Only
//     calls it passed reach go-nfs, whole, at most 16 KiB each; a write
//     call's data (a WRITE of any size) is discarded as it arrives, never
//     held.
//   - Server (server.go): internal/connserve accepts and tracks the
//     client connections. Each one is gated into a pair of pipes that go-nfs
//     serves as its connection; go-nfs's replies are copied back a whole
//     record at a time, between the gate's own. When the client goes, the
//     gate ends the calls pipe (go-nfs reads EOF and closes its end) and
//     drains the replies until go-nfs has closed: so when a client goes,
//     its connection's goroutines, go-nfs's included, are gone when its
//     handler returns. Close cancels the server's context, which also
//     closes go-nfs's ends (a go-nfs call that was running ends its
//     goroutine as soon as it returns); Close then waits for connserve's
//     goroutines, go-nfs's accept loop
//     and every call into the view in flight, and refuses later ones, so
//     nothing touches tier 2 after it returns.
//
// # Where go-nfs v0.0.4 falls short, and what this package does
//
//   - It allocates whatever an XDR length claims (handles, names, mount
//     paths, credentials): the gate bounds every one before go-nfs reads.
//   - It answers COMMIT on a read-only filesystem NFS3ERR_SERVERFAULT: the
//     gate answers it, and every other write-type call, NFS3ERR_ROFS.
//   - Its FSSTAT, FSINFO and PATHCONF failures lack the post_op_attr RFC
//     1813 requires (libnfs cannot decode them): the gate answers those
//     for stale handles.
//   - It reads ACCESS's handle without the XDR padding: handles are a
//     multiple of 4 bytes.
//   - It does not implement MOUNT's EXPORT, DUMP or UMNTALL, and answers any
//     version of a program as version 3: the gate does.
//   - Its FSINFO claims 1 GiB reads and writes and links: the gate answers
//     FSINFO. Its READ copies each reply several times: the gate answers
//     READ.
//   - Its Serve does not track connections, and its log is process-wide
//     (the standard log): connections are connserve's and the pipes' (see
//     Server), and its log goes to logrus at debug level (nfslog.go).
//
// # Exports and mounts
//
// MOUNT answers the root handle of "/" (every scope), "/<scope>", or a
// directory below (a stream, a segment): libnfs's nfs-cat and nfs-cp
// mount the directory of the file they read, as Linux's knfsd lets a
// client mount below an export. Anything else is MNT3ERR_NOENT. EXPORT
// lists "/" and "/<scope>" for each scope (at most 1000). AUTH_UNIX and
// AUTH_NULL are offered; credentials are not checked: every file is
// world-readable and nothing can be written.
//
// # File handles
//
// A handle is derived from the entry's path, never from the process, so
// a head restarted over the same tier 2 takes the handles an earlier one
// gave out (a kernel mount and its open files survive the restart):
//
//	literal, when the path fits (62 bytes):
//	+------+-------+---------------------+---------------+
//	| 0x01 | depth | path (0..62 bytes)  | 0-3 zero pad  |
//	+------+-------+---------------------+---------------+
//
//	hashed, when it does not:
//	+------+-------+-----------------+---+----------------+---------------------------+--------------+
//	| 0x04 | depth | ID (8 bytes BE) | n | n x hash (4 B) | prefix (0..53-4n bytes)   | 0-3 zero pad |
//	+------+-------+-----------------+---+----------------+---------------------------+--------------+
//
// path is the view path without slashes at either end ("" for the root);
// depth counts its first components that are the export the handle was
// minted under (0 for "/", 1 for "/<scope>", up to 3), so a handle never
// reaches above its export. A hashed handle carries view.ID(path), the
// deepest ancestor directory that fits (prefix) and a 32-bit hash (the
// first 4 bytes of its SHA-256) of each of the n (1..4) components below
// it. Its path is found among the handles
// this process minted (up to 65536 remembered), else by listing the prefix
// and, level by level, only the directories whose names have that level's
// hash: a lookup makes at most 8 tier-2 listings whatever the tree's size,
// stops when the server closes, and one that finds nothing is remembered
// for 10 s (up to 4096), so a made-up handle costs what a real one does.
// Each sibling on the way whose name shares its level's hash costs one
// more listing, so a handle of n levels goes stale beside more than 8-n:
// honest names share a 32-bit hash once in 2^32 pairs, and a tenant who
// names streams to share one spends about 2^32 SHA-256s a name.
// Version 3 (the same with 16-bit FNV-1a hashes, 2 bytes each, and a
// prefix of up to 53-2n bytes) is still read, not minted: its hashes
// were too narrow (one name in 65536 shares one, and a handful of such
// streams, found in milliseconds, made every hashed handle below a stream
// stale).
// The gate answers READ, FSINFO, FSSTAT and PATHCONF of a stale handle
// itself, so each call looks its handle up once. Hashed handles of
// version 2 (no hashes: found by walking every directory below the
// prefix) are not read: a head's answer to one is NFS3ERR_STALE, once,
// and the client looks the path up again. Handles are padded to a
// multiple of 4 bytes:
// go-nfs reads ACCESS's handle without its XDR padding, and a handle of
// another length is not ours. A handle that does not decode, or whose
// entry is gone (a removed chunk, a deleted stream), answers
// NFS3ERR_STALE; while tier 2 or the controller cannot say, calls fail
// (NFS3ERR_IO) and the handle stays good. decodeHandle has a fuzz target, as has the gate.
//
// # Listings
//
// go-nfs pages READDIR and READDIRPLUS with cookies that index the sorted
// listing, and asks the handler for the cookie verifier (a hash of the
// path and of the entries' view paths, never 0) and for the listing kept
// under it. go-nfs names a directory relative to its export, so
// /p/a/segment=0 under the /p mount and /q/a/segment=0 under /q are both
// "a/segment=0" (and every segment mounted on its own is ""): the view
// paths of the entries tell the two listings apart. The handler keeps the
// last 64 listings being paged, with their directory's path as go-nfs
// names it and as the view does (2^17 entries in all, 5 minutes each; a
// larger listing is not kept), so every page of one listing comes from the same snapshot and a
// chunk renamed into place during a listing appears on the next. A
// dropped listing is read again; if the directory changed meanwhile, or
// the verifier is another directory's (under any export), the client gets
// NFS3ERR_BAD_COOKIE and starts over.
//
// Between replies a connection keeps at most a 64 KiB buffer; a larger
// reply of go-nfs's (a READDIRPLUS of a big segment) borrows one of the
// READ buffers' pool for its write.
//
// # Read-only
//
// SETATTR, WRITE, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME,
// LINK and COMMIT are answered NFS3ERR_ROFS by the gate, with the
// weak-cache-consistency body each procedure's failure carries (empty
// attributes). go-nfs would answer most of them NFS3ERR_ROFS too (the
// filesystem lacks billy.WriteCapability) but COMMIT with
// NFS3ERR_SERVERFAULT; and the billy filesystem's own write calls fail
// with ErrReadOnly (EROFS) as the last line. FSSTAT reports no free
// space and no free files; ACCESS grants read, lookup and execute only.
package nfsexport
