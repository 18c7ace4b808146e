package nfsexport

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// rpcClient sends ONC RPC calls by hand (AUTH_UNIX, as libnfs does) for
// the procedures libnfs's tools do not send, and for hostile input.
type rpcClient struct {
	t   testing.TB
	c   net.Conn
	xid uint32
}

func dialRPC(t testing.TB, port int) *rpcClient {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rpcClient{t: t, c: c, xid: 100}
}

// xdrArgs builds XDR arguments.
type xdrArgs []byte

func (a xdrArgs) u32(v uint32) xdrArgs { return binary.BigEndian.AppendUint32(a, v) }
func (a xdrArgs) u64(v uint64) xdrArgs { return binary.BigEndian.AppendUint64(a, v) }
func (a xdrArgs) opaque(b []byte) xdrArgs {
	a = a.u32(uint32(len(b)))
	a = append(a, b...)
	return append(a, make([]byte, (4-len(b)%4)%4)...)
}

// call sends a call and returns the reply's accept_stat and results.
func (r *rpcClient) call(prog, vers, proc uint32, args []byte) (uint32, []byte) {
	r.t.Helper()
	r.xid++
	cred := xdrArgs{}.u32(0).opaque([]byte("test")).u32(0).u32(0).u32(0)
	m := xdrArgs{}.u32(r.xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(1).opaque(cred).u32(0).u32(0)
	m = append(m, args...)
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(m))|1<<31)
	r.c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := r.c.Write(append(rec, m...)); err != nil {
		r.t.Fatal(err)
	}
	reply := r.readRecord()
	if len(reply) < 24 || binary.BigEndian.Uint32(reply) != r.xid || binary.BigEndian.Uint32(reply[4:]) != 1 {
		r.t.Fatalf("reply %x to call %d", reply, r.xid)
	}
	if binary.BigEndian.Uint32(reply[8:]) != 0 {
		r.t.Fatalf("call denied: %x", reply)
	}
	vlen := binary.BigEndian.Uint32(reply[16:])
	at := 20 + int((vlen+3)&^3)
	return binary.BigEndian.Uint32(reply[at:]), reply[at+4:]
}

func (r *rpcClient) readRecord() []byte {
	r.t.Helper()
	var mark [4]byte
	if _, err := io.ReadFull(r.c, mark[:]); err != nil {
		r.t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint32(mark[:])&^(1<<31))
	if _, err := io.ReadFull(r.c, b); err != nil {
		r.t.Fatal(err)
	}
	return b
}

// nfs calls an NFSv3 procedure and returns its nfsstat3 and the rest.
func (r *rpcClient) nfs(proc uint32, args []byte) (uint32, []byte) {
	r.t.Helper()
	stat, res := r.call(progNFS, versNFS, proc, args)
	if stat != 0 {
		r.t.Fatalf("nfs proc %d: accept_stat %d", proc, stat)
	}
	return binary.BigEndian.Uint32(res), res[4:]
}

// mount returns the root handle of dirpath, or the MOUNT status.
func (r *rpcClient) mount(dirpath string) ([]byte, uint32) {
	r.t.Helper()
	stat, res := r.call(progMount, versMount, mountMnt, xdrArgs{}.opaque([]byte(dirpath)))
	if stat != 0 {
		r.t.Fatalf("mount: accept_stat %d", stat)
	}
	if st := binary.BigEndian.Uint32(res); st != 0 {
		return nil, st
	}
	n := binary.BigEndian.Uint32(res[4:])
	return res[8 : 8+n], 0
}

// lookup returns the handle of name in dir, or the status.
func (r *rpcClient) lookup(dir []byte, name string) ([]byte, uint32) {
	r.t.Helper()
	st, res := r.nfs(procLookup, xdrArgs{}.opaque(dir).opaque([]byte(name)))
	if st != 0 {
		return nil, st
	}
	n := binary.BigEndian.Uint32(res)
	return res[4 : 4+n], 0
}

// walk looks up path's components from the handle root.
func (r *rpcClient) walk(root []byte, names ...string) []byte {
	r.t.Helper()
	h := root
	for _, n := range names {
		var st uint32
		if h, st = r.lookup(h, n); st != 0 {
			r.t.Fatalf("lookup %q: status %d", n, st)
		}
	}
	return h
}

// getattr returns GETATTR's status and, if OK, the size and fileid.
func (r *rpcClient) getattr(h []byte) (st uint32, size, fileid uint64) {
	r.t.Helper()
	st, res := r.nfs(procGetattr, xdrArgs{}.opaque(h))
	if st != 0 {
		return st, 0, 0
	}
	// fattr3: type mode nlink uid gid (5x4), size used (2x8), rdev (8), fsid (8), fileid
	return st, binary.BigEndian.Uint64(res[20:]), binary.BigEndian.Uint64(res[52:])
}
