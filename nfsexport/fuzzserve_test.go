package nfsexport

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
)

// FuzzServe sends one record to a running head (the chunk fixture) and
// reads what comes back: whatever the bytes, the head answers or closes
// that connection, and goes on answering others (a panic anywhere in the
// gate, the READ and FSINFO answers or go-nfs would end the process).
func FuzzServe(f *testing.F) {
	fx, _ := chunkFixture(f)
	file := encodeHandle(0, tier2.ChunkPath("s", "a", 0, 1080))
	dir := encodeHandle(0, tier2.SegmentDir("s", "a", 0))
	long := encodeHandle(1, tier2.ChunkPath("t", longStream, 12, 77))
	for _, seed := range [][]byte{
		callBytes(1, progNFS, 3, procRead, xdrArgs{}.opaque(file).u64(0).u32(1<<20)),
		callBytes(2, progNFS, 3, procRead, xdrArgs{}.opaque(long).u64(1<<40).u32(100)),
		callBytes(3, progNFS, 3, procRead, xdrArgs{}.opaque(dir).u64(0).u32(10)),
		callBytes(4, progNFS, 3, procFsinfo, xdrArgs{}.opaque(dir)),
		callBytes(5, progNFS, 3, procReaddirplus, xdrArgs{}.opaque(dir).u64(7).u64(0).u32(512).u32(4096)),
		callBytes(6, progNFS, 3, procReaddir, xdrArgs{}.opaque(dir).u64(0).u64(0).u32(1024)),
		callBytes(7, progNFS, 3, procLookup, xdrArgs{}.opaque(dir).opaque([]byte(".."))),
		callBytes(8, progNFS, 3, procAccess, xdrArgs{}.opaque(file).u32(0x3f)),
		callBytes(9, progNFS, 3, procGetattr, xdrArgs{}.opaque(long)),
		callBytes(10, progMount, 3, mountMnt, xdrArgs{}.opaque([]byte("/s/a"))),
		callBytes(11, progNFS, 3, procReadlink, xdrArgs{}.opaque(file)),
		callBytes(12, progNFS, 3, procPathconf, xdrArgs{}.opaque(file)),
	} {
		f.Add(seed[4:])
	}
	addr := "127.0.0.1:" + strconv.Itoa(fx.port)
	f.Fuzz(func(t *testing.T, rec []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		mark := binary.BigEndian.AppendUint32(nil, uint32(len(rec))|1<<31)
		if _, err := c.Write(append(mark, rec...)); err != nil {
			return // closed already: fine
		}
		var m [4]byte
		if _, err := io.ReadFull(c, m[:]); err == nil {
			io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(m[:])&^(1<<31)))
		}
		// The head still answers another client.
		r := dialRPC(t, fx.port)
		if stat, _ := r.call(progNFS, versNFS, procNull, nil); stat != 0 {
			t.Fatalf("NULL after the record: accept_stat %d", stat)
		}
		r.c.Close()
	})
}
