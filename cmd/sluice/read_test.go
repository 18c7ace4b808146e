package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// position returns the cut that `sluice read` printed last on stderr.
func position(t *testing.T, stderr string) string {
	t.Helper()
	i := strings.LastIndex(stderr, "position: ")
	if i < 0 || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr %q has no position line", stderr)
	}
	cut := strings.TrimSuffix(stderr[i+len("position: "):], "\n")
	if _, err := api.ParseStreamCut(cut); err != nil {
		t.Fatalf("position %q: %v", cut, err)
	}
	return cut
}

func TestReadCommand(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/r", "--segments", "3")...)
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf("k-%d", i))
	}
	withStdin(t, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/r", "--key", "k")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}

	// --max: the first 4, in order (one key), and the position after them.
	code, stdout, stderr := runArgs(t, append(c, "read", "s/r", "--max", "4")...)
	if code != 0 || stdout != strings.Join(lines[:4], "\n")+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	cut := position(t, stderr)

	// --from CUT continues right after; --timeout ends it when the stream
	// has no more.
	code, stdout, stderr = runArgs(t, append(c, "read", "s/r", "--from", cut, "--timeout", "300ms")...)
	if code != 0 || stdout != strings.Join(lines[4:], "\n")+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	end := position(t, stderr)

	// From the end position, and from the tail: nothing.
	for _, from := range []string{end, "tail"} {
		code, stdout, stderr = runArgs(t, append(c, "read", "s/r", "--from", from, "--timeout", "200ms")...)
		if code != 0 || stdout != "" || position(t, stderr) != end {
			t.Fatalf("--from %s: exit %d, stdout %q, stderr %q", from, code, stdout, stderr)
		}
	}

	mustFail(t, "--from: want head, tail or a stream cut", append(c, "read", "s/r", "--from", "s/r:0.#epoch.0=x")...)
	mustFail(t, "not a segment of s/r", append(c, "read", "s/r", "--from", "s/other:0.#epoch.0=0")...)
	mustFail(t, "reader group s/g: not found", append(c, "read", "s/r", "--group", "g")...)
	mustFail(t, "not found", append(c, "read", "s/missing")...)
	mustFail(t, "SCOPE/STREAM", append(c, "read", "nostream")...)

	code, stdout, _ = runArgs(t, "read", "--help")
	if code != 0 || !strings.Contains(stdout, "--group") || !strings.Contains(stdout, "--follow") {
		t.Fatalf("help: exit %d\n%s", code, stdout)
	}
}

// TestReadNodeStopsAnswering: with the node frozen (a proxy in front of
// it stops forwarding), `sluice read` returns by its --timeout: from the
// tail (which asks the node where the tail is; it used to wait for ever),
// from the head, and as a group reader.
func TestReadNodeStopsAnswering(t *testing.T) {
	d := clienttest.Start(t, clienttest.ThroughProxy())
	d.CreateStream("s", "x", 2)
	c := []string{"--controller", d.URL}
	withStdin(t, "a\nb\nc\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/x")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	if code, _, stderr := runArgs(t, append(c, "readergroup", "create", "s/g", "--stream", "s/x")...); code != 0 {
		t.Fatalf("readergroup create: %s", stderr)
	}
	d.Proxy.Freeze()
	old := readStartTimeout
	readStartTimeout = 0 // the start gets --timeout alone
	defer func() { readStartTimeout = old }()

	code, stdout, stderr := runAsync(t, append(c, "read", "s/x", "--from", "tail", "--timeout", "1s")...)()
	if code != 1 || stdout != "" {
		t.Fatalf("--from tail: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	oneErrorLine(t, stderr, "could not start within 1s (the larger of --timeout and 0s): read s/x: ")

	// The node sends nothing: no event arrives within --timeout (which
	// leaves the controller time to answer the start on a busy machine).
	code, stdout, stderr = runAsync(t, append(c, "read", "s/x", "--timeout", "3s")...)()
	if code != 0 || stdout != "" {
		t.Fatalf("--from head: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	position(t, stderr)
	code, stdout, stderr = runAsync(t, append(c, "read", "s/x", "--group", "g", "--timeout", "3s")...)()
	if code != 0 || stdout != "" {
		t.Fatalf("--group: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	position(t, stderr)
}

func TestEventLine(t *testing.T) {
	ev := client.Event{Data: []byte("héllo"), Segment: "s/t/0.#epoch.0", Offset: 8}
	if l := newEventLine(ev); l.Payload != "héllo" || l.Encoding != "utf8" || l.Segment != ev.Segment || l.Offset != 8 {
		t.Errorf("utf8 event: %+v", l)
	}
	ev.Data = []byte{0xff, 0x00, 'a'}
	l := newEventLine(ev)
	if l.Encoding != "base64" || l.Payload != base64.StdEncoding.EncodeToString(ev.Data) {
		t.Errorf("binary event: %+v", l)
	}
}
