package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/porttest"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
)

// withStdin makes `sluice write` read text for the rest of the test.
func withStdin(t *testing.T, text string) {
	withStdinReader(t, strings.NewReader(text))
}

// withStdinReader makes `sluice write` read r for the rest of the test.
func withStdinReader(t *testing.T, r io.Reader) {
	old := stdin
	stdin = r
	t.Cleanup(func() { stdin = old })
}

// segmentEvents returns the events segment holds now, read straight from
// the node at addr.
func segmentEvents(t *testing.T, addr, segment string) []string {
	t.Helper()
	conn, err := segclient.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got []string
	for _, ev := range clienttest.ReadEvents(t, context.Background(), conn, segment) {
		got = append(got, string(ev))
	}
	return got
}

// ackedRE matches the count line `sluice write` prints at its end.
var ackedRE = regexp.MustCompile(`(?m)^sluice: (\d+) events? acknowledged`)

// acknowledged returns the count `sluice write` printed on stderr.
func acknowledged(t *testing.T, stderr string) int {
	t.Helper()
	m := ackedRE.FindAllStringSubmatch(stderr, -1)
	if len(m) != 1 {
		t.Fatalf("stderr %q: want one line 'sluice: N events acknowledged'", stderr)
	}
	n, _ := strconv.Atoi(m[0][1])
	return n
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestWriteCommand(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x", "--segments", "1")...)

	withStdin(t, "one\ntwo\n\nlast without newline")
	code, stdout, stderr := runArgs(t, append(c, "write", "s/x", "--key", "k")...)
	if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "sluice: 4 events acknowledged (26 bytes in ") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	got := segmentEvents(t, rs.Node, protocol.SegmentName("s", "x", 0, 0))
	if strings.Join(got, "|") != "one|two||last without newline" {
		t.Fatalf("segment holds %q", got)
	}

	withStdin(t, "x\n")
	mustFail(t, "not found", append(c, "write", "s/nope")...)
	withStdin(t, "x\n")
	mustFail(t, "SCOPE/STREAM", append(c, "write", "nostream")...)
	withStdin(t, "x\n")
	mustFail(t, "--timeout 0s: want more than 0", append(c, "write", "s/x", "--timeout", "0")...)
}

// TestWriteUnreachable: with nothing listening at the controller's
// address, `sluice write` says at once that it retries and why, then gives
// up at --timeout with one error line.
func TestWriteUnreachable(t *testing.T) {
	addr := porttest.Addr(t) // reserved, nothing listens there
	withStdin(t, "x\n")
	code, stdout, stderr := runArgs(t, "--controller", "http://"+addr, "write", "s/x", "--timeout", "3s")
	t.Logf("stderr:\n%s", stderr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	want := fmt.Sprintf("sluice: controller http://%s unreachable (connection refused); retrying (attempt 1)\n", addr)
	if !strings.HasPrefix(stderr, want) {
		t.Fatalf("stderr %q does not start with %q", stderr, want)
	}
	if last := lastLine(stderr); !strings.HasPrefix(last, "sluice: timed out after 3s (--timeout): write s/x: nothing written: ") ||
		!strings.Contains(last, "unreachable") {
		t.Fatalf("last line %q, want the timeout and the controller's failure", last)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")[1:] {
		if !strings.HasPrefix(line, "sluice: controller http://"+addr+" unreachable (connection refused); retrying (attempt ") && line != lastLine(stderr) {
			t.Fatalf("unexpected line %q in %q", line, stderr)
		}
	}
}

// TestWriteControllerStopsAnswering: a controller that takes connections
// and never answers is reported as unreachable once a request has waited
// controllerRequestTimeout (lowered here), and retried; the command still
// ends at --timeout. It used to stay silent until then.
func TestWriteControllerStopsAnswering(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // never accepted: the kernel takes connections, nobody answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	old := controllerRequestTimeout
	controllerRequestTimeout = 200 * time.Millisecond
	defer func() { controllerRequestTimeout = old }()
	withStdin(t, "x\n")
	url := "http://" + l.Addr().String()
	code, stdout, stderr := runAsync(t, "--controller", url, "write", "s/x", "--timeout", "3s")()
	t.Logf("stderr:\n%s", stderr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	want := "sluice: controller " + url + " unreachable (no answer to GET /v1/scopes/s/streams/x within 200ms); retrying (attempt 1)\n"
	if !strings.HasPrefix(stderr, want) {
		t.Fatalf("stderr %q does not start with %q", stderr, want)
	}
	if last := lastLine(stderr); !strings.HasPrefix(last, "sluice: timed out after 3s (--timeout): write s/x: nothing written: controller "+url+" unreachable") {
		t.Fatalf("last line %q", last)
	}
}

// TestWriteTooLargeLine: a line over the event limit in the middle of the
// input ends the write with an error that names it and says how many
// lines before it were acknowledged; those are stored, nothing after.
func TestWriteTooLargeLine(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x", "--segments", "1")...)
	var in bytes.Buffer
	for i := range 56 {
		fmt.Fprintf(&in, "line-%d\n", i+1)
	}
	in.Write(bytes.Repeat([]byte("x"), 9<<20))
	in.WriteString("\nafter\n")
	withStdinReader(t, &in)
	code, stdout, stderr := runArgs(t, append(c, "write", "s/x", "--key", "k")...)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := acknowledged(t, stderr); n != 56 {
		t.Fatalf("%d events acknowledged, want 56; stderr %q", n, stderr)
	}
	want := "sluice: write s/x: line 57 is 9 MiB, over the 8 MiB event limit; the 56 lines before it were acknowledged"
	if last := lastLine(stderr); last != want {
		t.Fatalf("last line %q, want %q", last, want)
	}
	got := segmentEvents(t, rs.Node, protocol.SegmentName("s", "x", 0, 0))
	if len(got) != 56 || got[0] != "line-1" || got[55] != "line-56" {
		t.Fatalf("segment holds %d events (%.40q...), want line-1..line-56", len(got), got)
	}
}

// runAsync runs the app in-process in the background; the returned
// function waits for it (failing the test if it hangs) and returns its
// exit status and output.
func runAsync(t *testing.T, args ...string) func() (int, string, string) {
	t.Helper()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(append([]string{"sluice"}, args...), &stdout, &stderr) }()
	return func() (int, string, string) {
		t.Helper()
		select {
		case code := <-done:
			return code, stdout.String(), stderr.String()
		case <-time.After(time.Minute): // a hang guard, not a timing assertion
			t.Fatalf("%v did not return a minute after its --timeout: it hangs; stderr so far %q", args, stderr.String())
			return 0, "", ""
		}
	}
}

// TestWriteNodeStopsAnswering: when the node stops answering (a proxy in
// front of it freezes), `sluice write --timeout 2s` gives up at the
// timeout with one clear error and the count of acknowledged events; it
// used to hang for ever waiting for acks on a context with no end.
func TestWriteNodeStopsAnswering(t *testing.T) {
	d := clienttest.Start(t, clienttest.ThroughProxy())
	seg, pw, wait := writeFirstLine(t, d, "2s")
	defer pw.Close()
	d.Proxy.Freeze()
	if _, err := pw.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	code, stdout, stderr := wait()
	t.Logf("stderr:\n%s", stderr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The first line's ack may have been on its way when the proxy froze:
	// it counts if it arrived. The second never reached the node.
	if n := acknowledged(t, stderr); n > 1 {
		t.Fatalf("%d events acknowledged, but the node holds 1; stderr %q", n, stderr)
	}
	last := lastLine(stderr)
	if !strings.HasPrefix(last, "sluice: timed out after 2s (--timeout): write s/x: ") ||
		!strings.Contains(last, "events not acknowledged") || !strings.Contains(last, "does not answer") {
		t.Fatalf("last line %q, want the timeout, the events left and the node that does not answer", last)
	}
	if got := segmentEvents(t, d.NodeAddr, seg); len(got) != 1 {
		t.Fatalf("segment holds %q, want only the first line", got)
	}
}

// TestWriteNodeDown: with the node's port closed, `sluice write` says
// that it retries the node and why, and at --timeout counts what was
// acknowledged (nothing) and names the last failure.
func TestWriteNodeDown(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	d.StopNode()
	withStdin(t, "one\ntwo\n")
	code, stdout, stderr := runArgs(t, "--controller", d.URL, "write", "s/x", "--timeout", "2s")
	t.Logf("stderr:\n%s", stderr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	want := "sluice: node " + d.NodeAddr + " unreachable (connection refused); retrying (attempt 1)\n"
	if !strings.HasPrefix(stderr, want) {
		t.Fatalf("stderr %q does not start with %q", stderr, want)
	}
	if n := acknowledged(t, stderr); n != 0 {
		t.Fatalf("%d events acknowledged, want 0", n)
	}
	if last := lastLine(stderr); !strings.HasPrefix(last, "sluice: timed out after 2s (--timeout): write s/x: 2 of 2 events not acknowledged (last failure: ") ||
		!strings.Contains(last, "node "+d.NodeAddr+" unreachable (connection refused)") {
		t.Fatalf("last line %q", last)
	}
}

// childEnv marks the test binary run as `sluice` by TestSluiceChild.
const childEnv = "SLUICE_TEST_CHILD"

// TestSluiceChild is not a test: run with childEnv=1 it is the sluice
// binary, taking its arguments after "--", so that tests can send signals
// to a real process. In a normal test run it does nothing.
func TestSluiceChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(run(append([]string{"sluice"}, flag.Args()...), os.Stdout, os.Stderr))
}

// TestWriteInterrupted: SIGINT to a real `sluice write` process after some
// lines are stored stops it reading stdin; it waits for those lines' acks
// and prints how many events were acknowledged, which is what a reader
// then finds in the stream.
func TestWriteInterrupted(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x", "--segments", "1")...)
	seg := protocol.SegmentName("s", "x", 0, 0)

	cmd := exec.Command(os.Args[0], "-test.run=^TestSluiceChild$", "--", "--controller", rs.URL, "write", "s/x", "--key", "k")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	const lines = 7
	for i := range lines {
		fmt.Fprintf(in, "event-%d\n", i)
	}
	proctest.WaitFor(t, "the lines stored", 30*time.Second, func() (bool, string) {
		got := segmentEvents(t, rs.Node, seg)
		return len(got) == lines, fmt.Sprintf("segment holds %d events; child's stderr %q", len(got), stderr.String())
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatalf("sluice write did not exit after SIGINT; stderr %q", stderr.String())
	}
	if ee, ok := exitErr.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; stderr %q", exitErr, stderr.String())
	}
	n := acknowledged(t, stderr.String())
	got := segmentEvents(t, rs.Node, seg)
	if n != len(got) || n != lines {
		t.Fatalf("sluice write says %d events acknowledged, the stream holds %d, %d were written; stderr %q", n, len(got), lines, stderr.String())
	}
	if last := lastLine(stderr.String()); last != fmt.Sprintf("sluice: write s/x: interrupted after line %d of stdin", lines) {
		t.Fatalf("last line %q", last)
	}
	if stdout.String() != "" {
		t.Fatalf("stdout %q", stdout.String())
	}
}

// TestLineSourceEdges: lines at the event limit pass whole, one byte more
// is refused with its length (with or without a newline, at the end or
// not), and what follows a refused line is read normally.
func TestLineSourceEdges(t *testing.T) {
	max := protocol.MaxEventSize
	x := func(n int) string { return strings.Repeat("x", n) }
	type want struct {
		n    int64 // -1: no line
		data string
		over bool
		eof  bool
	}
	for _, tc := range []struct {
		name string
		in   string
		want []want
	}{
		{"empty input", "", []want{{n: -1, eof: true}}},
		{"empty lines", "\n\n", []want{{n: 0}, {n: 0}, {n: -1, eof: true}}},
		{"no final newline", "a\nb", []want{{n: 1, data: "a"}, {n: 1, data: "b", eof: true}}},
		{"at the limit", x(max) + "\n", []want{{n: int64(max), data: x(max)}, {n: -1, eof: true}}},
		{"at the limit, last", x(max), []want{{n: int64(max), data: x(max), eof: true}}},
		{"one over", x(max+1) + "\nnext\n", []want{{n: int64(max + 1), over: true}, {n: 4, data: "next"}, {n: -1, eof: true}}},
		{"one over, last", x(max + 1), []want{{n: int64(max + 1), over: true, eof: true}}},
		{"far over", x(3*max) + "\n", []want{{n: int64(3 * max), over: true}, {n: -1, eof: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := readLines(strings.NewReader(tc.in))
			defer s.stop()
			for i, w := range tc.want {
				got := <-s.c
				if got.n != w.n || (got.data == nil) != (w.over || w.n < 0) || string(got.data) != w.data || (got.err == io.EOF) != w.eof {
					t.Fatalf("line %d: n %d, %d bytes (nil %v), err %v; want n %d, %d bytes, over %v, eof %v",
						i+1, got.n, len(got.data), got.data == nil, got.err, w.n, len(w.data), w.over, w.eof)
				}
			}
		})
	}
}

// BenchmarkStdinLines compares the line reader of `sluice write` (a
// goroutine handing lines over a channel, at most 8 MiB kept per line)
// with plain bufio.ReadBytes in the same run: the cost of being
// interruptible while stdin blocks. 100-byte lines.
func BenchmarkStdinLines(b *testing.B) {
	line := strings.Repeat("x", 99) + "\n"
	text := strings.Repeat(line, 10000)
	b.Run("lineSource", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for range b.N {
			s := readLines(strings.NewReader(text))
			for in := range s.c {
				if in.err != nil {
					break
				}
			}
			s.stop()
		}
	})
	b.Run("ReadBytes", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for range b.N {
			r := bufio.NewReaderSize(strings.NewReader(text), 64<<10)
			for {
				if _, err := r.ReadBytes('\n'); err != nil {
					break
				}
			}
		}
	})
}

// fakeAck is an outcome that a test settles.
type fakeAck struct {
	done chan struct{}
	err  error
}

func newFakeAck() *fakeAck                   { return &fakeAck{done: make(chan struct{})} }
func (a *fakeAck) Done() <-chan struct{}     { return a.done }
func (a *fakeAck) Err() error                { <-a.done; return a.err }
func (a *fakeAck) settle(err error) *fakeAck { a.err = err; close(a.done); return a }

// TestAckLogPrefix: the lines from the first that are all acknowledged
// stop before the first failed line, whichever order the lines settled
// and were compacted in: here line 2 fails after line 5 did and after a
// compaction had counted line 5.
func TestAckLogPrefix(t *testing.T) {
	var l ackLog
	acks := make([]*fakeAck, ackCompact)
	for i := range acks {
		acks[i] = newFakeAck()
		if i != 1 { // line 2 stays in flight
			acks[i].settle(nil)
		}
	}
	acks[4] = newFakeAck().settle(errors.New("line 5 failed"))
	for _, a := range acks {
		l.add(a) // the last add compacts: line 5 is counted as failed
	}
	acks[1].settle(errors.New("line 2 failed"))
	acked, prefix := l.count()
	if acked != ackCompact-2 || prefix != 1 {
		t.Fatalf("count() = %d acknowledged, the first %d lines; want %d and 1", acked, prefix, ackCompact-2)
	}
}

// TestWriteSegmentDeletedUnderIt: when the stream's segment disappears
// from the node while `sluice write` runs, the lines written after it
// fail, and the command says so and exits 1 with the count of what was
// acknowledged. (Whether the failure is settled before the command's
// Flush or during it is up to timing; client's
// TestFlushReportsEarlierFailures pins the first case down.)
func TestWriteSegmentDeletedUnderIt(t *testing.T) {
	d := clienttest.Start(t)
	seg, pw, wait := writeFirstLine(t, d, "30s")
	defer pw.Close()
	if err := d.Dial().DeleteSegment(context.Background(), seg); err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write([]byte("two\nthree\n")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	code, stdout, stderr := wait()
	t.Logf("stderr:\n%s", stderr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := acknowledged(t, stderr); n != 1 {
		t.Fatalf("%d events acknowledged, want 1", n)
	}
	if last := lastLine(stderr); !strings.HasPrefix(last, "sluice: write s/x: 2 of 3 events not acknowledged: ") {
		t.Fatalf("last line %q, want the 2 lines not acknowledged and why", last)
	}
}

// writeFirstLine creates stream s/x (one segment) in d, starts `sluice
// write s/x --key k --timeout TIMEOUT` reading a pipe, writes one line and
// waits until the node holds it. It returns the segment, the pipe's
// writing end (the caller closes it) and the command's wait.
func writeFirstLine(t *testing.T, d *clienttest.Deployment, timeout string) (string, *io.PipeWriter, func() (int, string, string)) {
	t.Helper()
	d.CreateStream("s", "x", 1)
	seg := protocol.SegmentName("s", "x", 0, 0)
	pr, pw := io.Pipe()
	withStdinReader(t, pr)
	wait := runAsync(t, "--controller", d.URL, "write", "s/x", "--key", "k", "--timeout", timeout)
	if _, err := pw.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	proctest.WaitFor(t, "the first line stored", 30*time.Second, func() (bool, string) {
		got := segmentEvents(t, d.NodeAddr, seg)
		return len(got) == 1, fmt.Sprintf("segment holds %q", got)
	})
	return seg, pw, wait
}
