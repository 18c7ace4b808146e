package nfsexport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2"
)

// bigChunk is the fixture's chunk of several READs.
var bigChunk = tier2.ChunkPath("s", "a", 0, 1080)

// dialRaw opens a connection for hostile bytes.
func dialRaw(t testing.TB, port int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reads c until the server closes it (any replies before
// are discarded); the deadline only bounds a broken server.
func closedByServer(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the server kept a garbage connection open")
	}
}

func TestHostileClientsHarmNoOther(t *testing.T) {
	f, chunks := chunkFixture(t)
	rng := rand.New(rand.NewPCG(1, 2))

	// A client reading the big chunk, with nfs-cat, while the others act.
	var wg sync.WaitGroup
	readErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 5 {
			got, err := run(testCtx(t), "nfs-cat", f.url("/"+bigChunk))
			if err == nil && !bytes.Equal(got, chunks[bigChunk]) {
				err = fmt.Errorf("nfs-cat read %d bytes that differ from the chunk", len(got))
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	// Garbage.
	for range 20 {
		c := dialRaw(t, f.port)
		junk := make([]byte, 1+rng.IntN(3000))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		c.Write(junk)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		closedByServer(t, c)
	}
	// Calls whose lengths claim more than they hold: a credential, a
	// MOUNT path, a LOOKUP name, a handle.
	u := func(vs ...uint32) []byte { return be32(vs...) }
	hdr := func(prog, vers, proc uint32) []byte { return u(7, 0, 2, prog, vers, proc) }
	for _, body := range [][]byte{
		append(hdr(progNFS, 3, procGetattr), u(1, 0x7fffffff)...),
		append(hdr(progMount, 3, mountMnt), u(0, 0, 0, 0, 0xffffffff)...),
		append(hdr(progNFS, 3, procLookup), u(0, 0, 0, 0, 8, 0x01000000, 0, 0xfffffff0)...),
		append(hdr(progNFS, 3, procGetattr), u(0, 0, 0, 0, 4096)...),
		append(hdr(progNFS, 3, procRead), u(0, 0, 0, 0)...), // no handle
		u(7, 1, 2, 3), // a reply, not a call
	} {
		c := dialRaw(t, f.port)
		c.Write(append(u(uint32(len(body))|1<<31), body...))
		closedByServer(t, c)
	}
	// A record of 2 GiB announced and its first maxForward bytes sent: the
	// gate reads no more before judging it (a GETATTR that long is
	// garbage), and closes it.
	big := dialRaw(t, f.port)
	big.Write(append(append(u(0x7fffffff|1<<31), hdr(progNFS, 3, procGetattr)...), make([]byte, maxForward)...))
	// A half-sent call, left open; and a client that asks for the big
	// chunk and reads nothing, left open.
	half := dialRaw(t, f.port)
	half.Write(append(u(200|1<<31), hdr(progNFS, 3, procNull)...))
	slow := dialRPC(t, f.port)
	root, _ := slow.mount("/")
	fh := slow.walk(root, "s", "a", "segment=0", tier2.ChunkName(1080))
	for range 8 {
		slow.c.Write(callBytes(99, progNFS, 3, procRead, xdrArgs{}.opaque(fh).u64(0).u32(1<<20)))
	}
	// A client that disconnects in the middle of a READ's reply.
	mid := dialRPC(t, f.port)
	mroot, _ := mid.mount("/")
	mfh := mid.walk(mroot, "s", "a", "segment=0", tier2.ChunkName(1080))
	mid.c.Write(callBytes(5, progNFS, 3, procRead, xdrArgs{}.opaque(mfh).u64(0).u32(1<<20)))
	io.ReadFull(mid.c, make([]byte, 1000))
	mid.c.Close()

	wg.Wait()
	select {
	case err := <-readErr:
		t.Fatalf("the well-behaved client: %v", err)
	default:
	}
	// And a new client still reads everything.
	r := dialRPC(t, f.port)
	nroot, _ := r.mount("/s")
	if st, size, _ := r.getattr(r.walk(nroot, "a", "segment=0", tier2.ChunkName(1080))); st != 0 || int(size) != len(chunks[bigChunk]) {
		t.Fatalf("GETATTR after the hostile clients: status %d size %d", st, size)
	}
	closedByServer(t, big)

	// Close cuts the connections still open: the half-sent call's and the
	// slow reader's.
	f.srv.Close()
	closedByServer(t, half)
	closedByServer(t, slow.c)
	// Close waited for every connection's goroutines.
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, fn := range []string{"nfsexport.(*Server).serveConn", "nfsexport.(*Server).gate", "nfsexport.copyReplies", "connserve.(*Server).start"} {
		if strings.Contains(stacks, fn) {
			t.Errorf("after Close, a goroutine is still in %s", fn)
		}
	}
}

// A client that asks for more than it reads is closed once a reply waits
// longer than WriteTimeout to be taken; the others go on. The timeout is
// far above the time a small reply takes to go into an empty socket
// buffer, however busy the machine (every reply's write has it, the slow
// client's MOUNT and LOOKUP replies and the other client's too), and far
// below the test's own minute: the slow client reads nothing, so its
// READ replies wait for good and the cut-off comes after one timeout.
func TestClientThatDoesNotReadIsClosed(t *testing.T) {
	f, chunks := chunkFixture(t)
	f.srv.Close()
	f.cfg.WriteTimeout = time.Second
	f.start(t)
	slow := dialRPC(t, f.port)
	root, _ := slow.mount("/")
	fh := slow.walk(root, "s", "a", "segment=0", tier2.ChunkName(1080))
	call := callBytes(99, progNFS, 3, procRead, xdrArgs{}.opaque(fh).u64(0).u32(1<<20))
	for {
		// Until the server closes it; the socket buffers hold a few
		// replies at most, so this ends.
		slow.c.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := slow.c.Write(call); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the server did not close a client that does not read")
			}
			break
		}
	}
	r := dialRPC(t, f.port)
	rroot, _ := r.mount("/")
	if st, size, _ := r.getattr(r.walk(rroot, "s", "a", "segment=0", tier2.ChunkName(1080))); st != 0 || int(size) != len(chunks[bigChunk]) {
		t.Fatalf("GETATTR beside it: status %d size %d", st, size)
	}
}

// callBytes is a whole CALL record with AUTH_NULL credentials.
func callBytes(xid, prog, vers, proc uint32, args []byte) []byte {
	m := append(be32(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0), args...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(m))|1<<31), m...)
}

func TestUnknownProgramsAndVersions(t *testing.T) {
	f := newFixture(t, map[string][]string{"s": nil})
	r := dialRPC(t, f.port)
	for _, c := range []struct {
		prog, vers, proc, want uint32
	}{
		{100000, 2, 0, acceptProgUnavail}, // portmap: not here
		{progNFS, 4, 0, acceptProgMismatch},
		{progNFS, 2, 0, acceptProgMismatch},
		{progMount, 1, 0, acceptProgMismatch},
		{progNFS, 3, 22, acceptProcUnavail},
		{progMount, 3, 6, acceptProcUnavail},
		{progNFS, 3, procNull, 0},
		{progMount, 3, mountUmntall, 0},
		{progMount, 3, mountDump, 0},
	} {
		if stat, _ := r.call(c.prog, c.vers, c.proc, nil); stat != c.want {
			t.Errorf("%d v%d proc %d: accept_stat %d, want %d", c.prog, c.vers, c.proc, stat, c.want)
		}
	}
}

// FuzzJudge: any record is forwarded with its bounded fields, answered,
// or refused with ErrBadCall; never a panic, and a forwarded record's
// handle fits NFSv3's limit.
func FuzzJudge(f *testing.F) {
	fh := encodeHandle(0, "s/a")
	for _, seed := range [][]byte{
		callBytes(1, progNFS, 3, procGetattr, xdrArgs{}.opaque(fh)),
		callBytes(2, progNFS, 3, procRead, xdrArgs{}.opaque(fh).u64(0).u32(1<<30)),
		callBytes(3, progNFS, 3, procLookup, xdrArgs{}.opaque(fh).opaque([]byte("x"))),
		callBytes(4, progNFS, 3, procWrite, xdrArgs{}.opaque(fh).u64(0).u32(1).u32(0).opaque([]byte("x"))),
		callBytes(5, progMount, 3, mountMnt, xdrArgs{}.opaque([]byte("/s"))),
		callBytes(6, progNFS, 3, procReaddirplus, xdrArgs{}.opaque(fh).u64(0).u64(0).u32(512).u32(4096)),
		callBytes(7, progMount, 3, mountExport, nil),
	} {
		f.Add(seed[4:], true)
	}
	f.Fuzz(func(t *testing.T, rec []byte, whole bool) {
		v, answer, err := judge(rec, whole)
		if err != nil {
			if !errors.Is(err, ErrBadCall) {
				t.Fatalf("error %v is not ErrBadCall", err)
			}
			return
		}
		if v == reply {
			return
		}
		if !whole {
			t.Fatal("forwarded a record not read whole")
		}
		c, err := parseCall(rec)
		if err != nil || answer != nil {
			t.Fatalf("forwarded a call that does not parse: %v", err)
		}
		if c.proc != procNull && c.prog == progNFS {
			if _, ok := handleArg(rec[c.argsAt:]); !ok {
				t.Fatalf("forwarded an NFS call without a bounded handle: %x", rec)
			}
		}
	})
}
