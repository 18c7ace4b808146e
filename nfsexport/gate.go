package nfsexport

import (
	"encoding/binary"
	"fmt"
)

// The gate reads every RPC call before go-nfs does (see the package doc):
// it bounds each variable-length field, answers the calls go-nfs must not
// see, and lowers READ counts. Its input is one record of ONC RPC's record
// marking (RFC 5531 §11), a CALL message:
//
//	+-----+-------+---------+------+------+------+------------+------------+------+
//	| xid | 0=CALL| rpcvers | prog | vers | proc | cred       | verf       | args |
//	|  4  |   4   |  4 (=2) |  4   |  4   |  4   | 4+4+opaque | 4+4+opaque |      |
//	+-----+-------+---------+------+------+------+------------+------------+------+
//
// opaque fields are a 4-byte length and the bytes padded to 4; cred and
// verf bodies are at most 400 bytes (RFC 5531 §8.2).
const (
	progNFS   = 100003
	progMount = 100005
	versNFS   = 3
	versMount = 3

	maxAuth     = 400
	maxName     = 255  // a LOOKUP name
	maxDirpath  = 1024 // MNTPATHLEN
	maxForward  = 16 << 10
	maxReadSize = 1 << 20 // READ counts above this are lowered to it

	// NFSv3 procedures (RFC 1813).
	procNull        = 0
	procGetattr     = 1
	procSetattr     = 2
	procLookup      = 3
	procAccess      = 4
	procReadlink    = 5
	procRead        = 6
	procWrite       = 7
	procCreate      = 8
	procMkdir       = 9
	procSymlink     = 10
	procMknod       = 11
	procRemove      = 12
	procRmdir       = 13
	procRename      = 14
	procLink        = 15
	procReaddir     = 16
	procReaddirplus = 17
	procFsstat      = 18
	procFsinfo      = 19
	procPathconf    = 20
	procCommit      = 21

	// MOUNT v3 procedures.
	mountNull    = 0
	mountMnt     = 1
	mountDump    = 2
	mountUmnt    = 3
	mountUmntall = 4
	mountExport  = 5

	nfs3errIsDir = 21
	nfs3errROFS  = 30
	nfs3errStale = 70

	// accept_stat and reject_stat.
	acceptProgUnavail  = 1
	acceptProgMismatch = 2
	acceptProcUnavail  = 3
	rejectRPCMismatch  = 0
)

// roBody is the body of each write-type procedure's failure answer after
// its status: wcc_data is two absent attributes (8 zero bytes); RENAME has
// two; LINK a post_op_attr and a wcc_data.
var roBody = map[uint32]int{
	procSetattr: 8, procWrite: 8, procCreate: 8, procMkdir: 8, procSymlink: 8,
	procMknod: 8, procRemove: 8, procRmdir: 8, procRename: 16, procLink: 12,
	procCommit: 8,
}

// verdict is what the gate does with a call.
type verdict int

const (
	forward verdict = iota // to go-nfs, as it is (READ's count lowered)
	reply                  // answer with call.reply, go-nfs never sees it
)

// call is a parsed CALL's header.
type call struct {
	xid, prog, vers, proc uint32
	argsAt                int // offset of the arguments
}

// decoder reads XDR from a record, failing on the first short field.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) u32() uint32 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 4 {
		d.err = fmt.Errorf("%w: record ends at %d bytes, in a 4-byte field", ErrBadCall, len(d.b))
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

// opaque skips a variable-length opaque of at most max bytes.
func (d *decoder) opaque(what string, max int) {
	n := d.u32()
	if d.err != nil {
		return
	}
	if n > uint32(max) {
		d.err = fmt.Errorf("%w: %s of %d bytes, at most %d", ErrBadCall, what, n, max)
		return
	}
	padded := (int(n) + 3) &^ 3
	if len(d.b)-d.off < padded {
		d.err = fmt.Errorf("%w: %s of %d bytes past the record's end", ErrBadCall, what, n)
		return
	}
	d.off += padded
}

func (d *decoder) skip(n int) {
	if d.err == nil && len(d.b)-d.off < n {
		d.err = fmt.Errorf("%w: record ends at %d bytes, in a %d-byte field", ErrBadCall, len(d.b), n)
		return
	}
	d.off += n
}

// parseCall reads a CALL's header. rec may be only the start of a longer
// record (a refused WRITE's data need not be read); whole tells which.
func parseCall(rec []byte) (call, error) {
	d := decoder{b: rec}
	var c call
	c.xid = d.u32()
	if mtype := d.u32(); d.err == nil && mtype != 0 {
		return c, fmt.Errorf("%w: message type %d, not a call", ErrBadCall, mtype)
	}
	rpcvers := d.u32()
	c.prog, c.vers, c.proc = d.u32(), d.u32(), d.u32()
	d.u32()
	d.opaque("credential", maxAuth)
	d.u32()
	d.opaque("verifier", maxAuth)
	if d.err != nil {
		return c, d.err
	}
	if rpcvers != 2 {
		c.argsAt = -1 // marks an RPC version mismatch for judge
	} else {
		c.argsAt = d.off
	}
	return c, nil
}

// judge decides a call in the record rec (whole: all of the record;
// else its first bytes, and the record is longer than maxForward). It
// returns the answer to send when the gate answers, and may lower a READ's
// count in rec. An error means the record is garbage: the connection is
// closed.
func judge(rec []byte, whole bool) (verdict, []byte, error) {
	c, err := parseCall(rec)
	if err != nil {
		return 0, nil, err
	}
	if c.argsAt < 0 {
		return reply, denied(c.xid, rejectRPCMismatch, 2, 2), nil
	}
	switch {
	case c.prog == progNFS && c.vers == versNFS:
		if n, ok := roBody[c.proc]; ok {
			return reply, accepted(c.xid, 0, make([]byte, 4+n), nfs3errROFS), nil
		}
		if c.proc > procCommit {
			return reply, accepted(c.xid, acceptProcUnavail, nil), nil
		}
	case c.prog == progMount && c.vers == versMount:
		switch c.proc {
		case mountDump:
			return reply, accepted(c.xid, 0, []byte{0, 0, 0, 0}), nil // no mounts listed
		case mountUmntall:
			return reply, accepted(c.xid, 0, nil), nil
		case mountExport:
			return reply, nil, nil // the caller answers with the export list
		}
		if c.proc > mountExport {
			return reply, accepted(c.xid, acceptProcUnavail, nil), nil
		}
	case c.prog == progNFS, c.prog == progMount:
		v := uint32(versNFS)
		if c.prog == progMount {
			v = versMount
		}
		return reply, accepted(c.xid, acceptProgMismatch, be32(v, v)), nil
	default:
		return reply, accepted(c.xid, acceptProgUnavail, nil), nil
	}
	if !whole {
		return 0, nil, fmt.Errorf("%w: a %d.%d call over %d bytes", ErrBadCall, c.prog, c.proc, maxForward)
	}
	if err := checkArgs(rec, c); err != nil {
		return 0, nil, err
	}
	return forward, nil, nil
}

// checkArgs bounds the arguments go-nfs decodes of a call it answers, and
// lowers a READ's count to maxReadSize.
func checkArgs(rec []byte, c call) error {
	d := decoder{b: rec, off: c.argsAt}
	if c.prog == progMount {
		if c.proc == mountMnt || c.proc == mountUmnt {
			d.opaque("mount path", maxDirpath)
		}
		return d.err
	}
	if c.proc == procNull {
		return nil
	}
	d.opaque("file handle", MaxHandle)
	switch c.proc {
	case procLookup:
		d.opaque("name", maxName)
	case procAccess:
		d.skip(4)
	case procRead:
		d.skip(8)
		at := d.off
		if n := d.u32(); d.err == nil && n > maxReadSize {
			binary.BigEndian.PutUint32(rec[at:], maxReadSize)
		}
	case procReaddir:
		d.skip(8 + 8 + 4)
	case procReaddirplus:
		d.skip(8 + 8 + 4 + 4)
	}
	return d.err
}

// handleArg returns the file handle that starts args (checkArgs has
// bounded it).
func handleArg(args []byte) ([]byte, bool) {
	if len(args) < 4 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(args)
	if n > MaxHandle || int(n) > len(args)-4 {
		return nil, false
	}
	return args[4 : 4+n], true
}

// accepted returns an accepted reply: xid, REPLY, MSG_ACCEPTED, a null
// verifier, stat, then body; status, if given, is written over body's
// first word.
func accepted(xid, stat uint32, body []byte, status ...uint32) []byte {
	if len(status) > 0 {
		binary.BigEndian.PutUint32(body, status[0])
	}
	out := be32(xid, 1, 0, 0, 0, stat)
	return append(out, body...)
}

// denied returns a rejected reply: xid, REPLY, MSG_DENIED, why, low, high.
func denied(xid, why, low, high uint32) []byte {
	return be32(xid, 1, 1, why, low, high)
}

// exportReply answers MOUNT EXPORT with the exported paths (no groups).
func exportReply(xid uint32, paths []string) []byte {
	out := accepted(xid, 0, nil)
	for _, p := range paths {
		out = append(out, be32(1, uint32(len(p)))...)
		out = append(out, p...)
		out = append(out, make([]byte, (4-len(p)%4)%4)...)
		out = append(out, be32(0)...) // no groups
	}
	return append(out, be32(0)...)
}

func be32(vs ...uint32) []byte {
	out := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
	return out
}
