package nfsexport

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/view"
	"github.com/sluice-streams/sluice/tier2/view/viewtest"
)

func TestServeAfterClose(t *testing.T) {
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := New(view.New(st, viewtest.NewCatalog(nil), view.Options{}), Config{})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(l); err != ErrClosed {
		t.Fatalf("Serve after Close: %v, want ErrClosed", err)
	}
	if _, err := l.Accept(); err == nil {
		t.Error("Serve after Close left the listener open")
	}
}

// A connection keeps at most keepReplyBuf between replies, whatever the
// size of the replies before (a READDIRPLUS of a big segment is hundreds
// of KB).
func TestReplyBufferNotKeptAfterLargeReply(t *testing.T) {
	var replies bytes.Buffer
	for _, n := range []int{100, 400 << 10, 200} {
		replies.Write(binary.BigEndian.AppendUint32(nil, uint32(n)|1<<31))
		replies.Write(bytes.Repeat([]byte{7}, n))
	}
	want := replies.Len()
	server, client := net.Pipe()
	defer client.Close()
	got := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, client)
		got <- n
	}()
	var rc replyCopier
	var mu sync.Mutex
	rc.copy(server, &replies, &mu, -1)
	server.Close()
	if n := <-got; n != int64(want) {
		t.Fatalf("copied %d bytes of %d", n, want)
	}
	if cap(rc.buf) > keepReplyBuf {
		t.Errorf("after the replies, the connection keeps a buffer of %d bytes, want at most %d", cap(rc.buf), keepReplyBuf)
	}
}
