package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
)

// runningStandalone is `sluice standalone` run in-process.
type runningStandalone struct {
	URL, Node string
	stop      context.CancelFunc
	exit      chan int
	stderr    *lockedBuffer
}

func startStandalone(t *testing.T, dir string, extra ...string) *runningStandalone {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	rs := &runningStandalone{stop: cancel, exit: make(chan int, 1), stderr: &lockedBuffer{}}
	go func() {
		code := runContext(ctx, append([]string{"sluice", "--log-level", "warn", "standalone", "--data", dir,
			"--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
			"--hdfs-rpc-addr", "127.0.0.1:0", "--hdfs-data-addr", "127.0.0.1:0", "--webhdfs-addr", "127.0.0.1:0", "--nfs-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0"}, extra...), pw, rs.stderr)
		pw.Close()
		rs.exit <- code
	}()
	lines := bufio.NewReader(pr)
	for rs.URL == "" || rs.Node == "" {
		line, err := lines.ReadString('\n')
		if err != nil {
			cancel()
			t.Fatalf("standalone did not start: %v; stderr %q", err, rs.stderr.String())
		}
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "controller listening on "); ok {
			rs.URL = "http://" + a
		}
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "node listening on "); ok {
			rs.Node = a
		}
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() { rs.Stop(t) })
	return rs
}

func (rs *runningStandalone) Stop(t *testing.T) {
	t.Helper()
	if rs.stop == nil {
		return
	}
	rs.stop()
	rs.stop = nil
	if code := <-rs.exit; code != 0 {
		t.Errorf("standalone exit %d, stderr %q", code, rs.stderr.String())
	}
}

// TestStandalone: one process serves the REST API and the node; streams
// and their data survive a stop and a start on the same directory.
func TestStandalone(t *testing.T) {
	dir := t.TempDir()
	rs := startStandalone(t, dir)
	resp, err := http.Get(rs.URL + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	// The uri route names the node for every segment.
	resp, err = http.Get(rs.URL + "/v1/segments/" + url.PathEscape(protocol.SegmentName("sa", "events", 0, 0)) + "/uri")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("uri: %v %v", resp, err)
	}
	var uri struct{ Endpoint string }
	json.NewDecoder(resp.Body).Decode(&uri)
	resp.Body.Close()
	if uri.Endpoint != rs.Node {
		t.Fatalf("uri endpoint %q, node listens on %q", uri.Endpoint, rs.Node)
	}
	mustRun(t, "--controller", rs.URL, "scope", "create", "sa")
	mustRun(t, "--controller", rs.URL, "stream", "create", "sa/events", "--segments", "2")

	ctx := context.Background()
	seg := protocol.SegmentName("sa", "events", 0, 0)
	conn, err := segclient.Dial(ctx, rs.Node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.SetupAppend(ctx, "w", seg); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Append(ctx, "w", 0, 1, protocol.AppendEvent(nil, []byte("kept")), protocol.NoExpectedOffset); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	rs.Stop(t)

	rs = startStandalone(t, dir)
	if out := mustRun(t, "--controller", rs.URL, "stream", "describe", "sa/events"); !strings.Contains(out, "events") {
		t.Fatalf("describe after restart: %q", out)
	}
	if got := segmentEvents(t, rs.Node, seg); len(got) == 0 || got[0] != "kept" {
		t.Fatalf("events after restart: %q", got)
	}
}
