package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

// withStdin makes `sluice write` read text for the rest of the test.
func withStdin(t *testing.T, text string) {
	old := stdin
	stdin = strings.NewReader(text)
	t.Cleanup(func() { stdin = old })
}

func TestWriteCommand(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x", "--segments", "1")...)

	withStdin(t, "one\ntwo\n\nlast without newline")
	code, stdout, stderr := runArgs(t, append(c, "write", "s/x", "--key", "k")...)
	if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "wrote 4 events (26 bytes) in ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	conn, err := segclient.Dial(context.Background(), rs.Node)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := conn.ReadSegment(context.Background(), protocol.SegmentName("s", "x", 0, 0), 0, 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, b := range r.Data {
		data = append(data, b...)
	}
	var got []string
	for len(data) > 0 {
		ev, rest, err := protocol.NextEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ev))
		data = rest
	}
	if strings.Join(got, "|") != "one|two||last without newline" {
		t.Fatalf("segment holds %q", got)
	}

	withStdin(t, "x\n")
	mustFail(t, "not found", append(c, "write", "s/nope")...)
	withStdin(t, "x\n")
	mustFail(t, "SCOPE/STREAM", append(c, "write", "nostream")...)
}

func TestWriteUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	withStdin(t, "x\n")
	mustFail(t, "timed out after 300ms", "--controller", "http://"+addr, "write", "s/x", "--timeout", "300ms")
}
