package nfsexport

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/sluice-streams/sluice/tier2/view"
)

// READ is answered by the gate itself when it can (readReply): go-nfs
// opens and stats the file three times per call, builds the reply in
// growing buffers and passes it through its writer goroutine and our
// pipe, which cost more than the read on a busy machine. Anything unusual
// (a failing read) goes on to go-nfs, whose answer is the
// reference; a directory gets NFS3ERR_ISDIR (go-nfs answers NFS3ERR_ACCES)
// and a stale handle NFS3ERR_STALE (so that it is looked up once a call).
//
// The reply, after the RPC header (xid, REPLY, MSG_ACCEPTED, null
// verifier, SUCCESS):
//
//	+--------+----------------+-------+-----+----------+------+-----+
//	| NFS3_OK| post_op_attr   | count | eof | data len | data | pad |
//	|   4    | 4 (=1) + fattr3 84 |   4   |  4  |    4     |      | 0-3 |
//	+--------+----------------+-------+-----+----------+------+-----+
const readHead = 4*6 + 4 + 4 + fattrSize + 4 + 4 + 4

// fattrSize is an NFSv3 fattr3's size: type, mode, nlink, uid, gid,
// size, used, rdev, fsid, fileid, atime, mtime, ctime.
const fattrSize = 5*4 + 8 + 8 + 8 + 8 + 8 + 3*8

// readBufs holds the buffers of READ replies between calls, shared by the
// connections: a connection holds one only while it answers a READ.
var readBufs sync.Pool

func getReadBuf() []byte {
	if b, ok := readBufs.Get().(*[]byte); ok {
		return *b
	}
	return nil
}

func putReadBuf(b []byte) {
	if cap(b) > 0 {
		b = b[:0]
		readBufs.Put(&b)
	}
}

// readReply answers the READ call c in rec into buf (grown as needed; the
// record mark first) and returns the record to write, or nil to let go-nfs
// answer.
func (s *Server) readReply(rec []byte, c call, buf []byte) []byte {
	args := rec[c.argsAt:]
	fh, ok := handleArg(args)
	if !ok {
		return nil
	}
	at := 4 + (len(fh)+3)&^3
	if len(args) < at+12 {
		return nil
	}
	off := binary.BigEndian.Uint64(args[at:])
	count := int(binary.BigEndian.Uint32(args[at+8:])) // checkArgs bounded it
	fsys, parts, err := s.h.FromHandle(fh)
	if err != nil { // stale: answered here, so the handle is looked up once
		w := binary.BigEndian.AppendUint32(buf[:0], 0)
		w = append(w, accepted(c.xid, 0, make([]byte, 8), nfs3errStale)...) // no attributes
		binary.BigEndian.PutUint32(w, uint32(len(w)-4)|1<<31)
		return w
	}
	rf, ok := fsys.(*roFS)
	if !ok || rf.err != nil {
		return nil
	}
	if s.h.ops.enter() != nil {
		return nil
	}
	defer s.h.ops.exit()
	p := rf.full(strings.Join(parts, "/"))
	e, err := s.v.Stat(s.ctx, p)
	if err != nil {
		return nil
	}
	if e.IsDir { // NFS3ERR_ISDIR and the directory's attributes
		w := binary.BigEndian.AppendUint32(buf[:0], 0)
		w = append(w, accepted(c.xid, 0, be32(nfs3errIsDir, 1))...)
		w = appendFattr(w, e)
		binary.BigEndian.PutUint32(w, uint32(len(w)-4)|1<<31)
		return w
	}
	if off >= uint64(e.Size) {
		count = 0
	} else if rest := uint64(e.Size) - off; uint64(count) > rest {
		count = int(rest)
	}
	need := 4 + readHead + count + 3
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:need]
	data := buf[4+readHead : 4+readHead+count]
	n := 0
	if count > 0 {
		f, err := s.v.Open(s.ctx, p)
		if err != nil {
			return nil
		}
		n, err = f.ReadAt(data, int64(off))
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil
		}
	}
	eof := uint32(0)
	if off+uint64(n) >= uint64(e.Size) {
		eof = 1
	}
	pad := (4 - n%4) % 4
	size := readHead + n + pad
	w := buf[:4]
	binary.BigEndian.PutUint32(w, uint32(size)|1<<31)
	w = binary.BigEndian.AppendUint32(w, c.xid)
	w = append(w, be32(1, 0, 0, 0, 0, 0, 1)...) // REPLY, ACCEPTED, AUTH_NULL, SUCCESS; NFS3_OK, attributes follow
	w = appendFattr(w, e)
	w = append(w, be32(uint32(n), eof, uint32(n))...)
	clear(buf[4+readHead+n : 4+size])
	return buf[:4+size]
}

// appendFattr appends e's fattr3, as go-nfs's answers have it (fsid 0).
func appendFattr(w []byte, e view.Entry) []byte {
	typ, nlink := uint32(1), uint32(1) // NF3REG
	if e.IsDir {
		typ, nlink = 2, 2
	}
	w = append(w, be32(typ, uint32(e.Mode().Perm()), nlink, UID, GID)...)
	w = binary.BigEndian.AppendUint64(w, uint64(e.Size))
	w = binary.BigEndian.AppendUint64(w, uint64(e.Size))
	w = binary.BigEndian.AppendUint64(w, 0) // rdev
	w = binary.BigEndian.AppendUint64(w, 0) // fsid
	w = binary.BigEndian.AppendUint64(w, e.ID)
	sec, nsec := uint32(e.ModTime.Unix()), uint32(e.ModTime.Nanosecond())
	for range 3 { // atime, mtime, ctime
		w = append(w, be32(sec, nsec)...)
	}
	return w
}

// FSINFO is answered by the gate too: go-nfs's answer claims reads and
// writes of up to 1 GiB and hard and symbolic links. Ours:
//
//	rtmax, rtpref   1 MiB (maxReadSize: larger READs are served short)
//	rtmult          4096
//	wtmax, wtpref   1 MiB, wtmult 4096 (every WRITE is NFS3ERR_ROFS)
//	dtpref          64 KiB
//	maxfilesize     2^63-1
//	time_delta      1 ns
//	properties      FSF3_HOMOGENEOUS only: no links, no setting times
const (
	fsinfoDirPref     = 64 << 10
	fsf3Homogeneous   = 0x8
	fsinfoMaxFileSize = 1<<63 - 1
)

// fsinfoReply answers the FSINFO call c in rec (NFS3ERR_STALE for a
// handle that is not good here), or returns nil to let go-nfs answer.
func (s *Server) fsinfoReply(rec []byte, c call) []byte {
	fh, ok := handleArg(rec[c.argsAt:])
	if !ok {
		return nil
	}
	fsys, parts, err := s.h.FromHandle(fh)
	if err != nil {
		return accepted(c.xid, 0, make([]byte, 8), nfs3errStale)
	}
	out := accepted(c.xid, 0, be32(0)) // NFS3_OK
	if rf, ok := fsys.(*roFS); ok && rf.err == nil && s.h.ops.enter() == nil {
		e, err := s.v.Stat(s.ctx, rf.full(strings.Join(parts, "/")))
		s.h.ops.exit()
		if err == nil {
			out = appendFattr(append(out, be32(1)...), e)
		} else {
			out = append(out, be32(0)...)
		}
	} else {
		out = append(out, be32(0)...)
	}
	out = append(out, be32(maxReadSize, maxReadSize, 4096, maxReadSize, maxReadSize, 4096, fsinfoDirPref)...)
	out = binary.BigEndian.AppendUint64(out, fsinfoMaxFileSize)
	return append(out, be32(0, 1, fsf3Homogeneous)...)
}
