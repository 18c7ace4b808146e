package embed_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
)

// headConfig is a head on free loopback ports for the controller at url.
func headConfig(url string) embed.HDFSConfig {
	cfg := embed.DefaultHDFSConfig()
	cfg.Controller, cfg.Logger = url, quiet()
	cfg.RPCListen, cfg.DataListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	return cfg
}

// putChunk writes a chunk file where the storage writer would.
func putChunk(t *testing.T, root, path, data string) {
	t.Helper()
	st, err := fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStandaloneServesTheHead: the standalone's head shows the
// controller's streams and tier 2's chunks over NameNode RPC and data
// transfer (Go's HDFS client) and WebHDFS, refuses writes, and is gone
// after Stop.
func TestStandaloneServesTheHead(t *testing.T) {
	dir := t.TempDir()
	s, err := embed.StartStandalone(ctxT(t), standaloneConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	h := s.HDFS()
	if h == nil {
		t.Fatal("no head in a standalone with tier 2")
	}
	ctx := ctxT(t)
	ctl := ctlclient.NewClient(s.URL())
	createStream(ctx, t, ctl, "hd")
	chunk := tier2.ChunkPath("hd", "events", 0, 0)
	putChunk(t, strings.TrimPrefix(s.Node().TierURI(), "file://"), chunk, "chunk bytes")

	c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{h.RPCAddr()}, User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.ReadFile("/" + chunk)
	if err != nil || string(got) != "chunk bytes" {
		t.Fatalf("read %s through the head: %q, %v", chunk, got, err)
	}
	if err := c.MkdirAll("/hd/x", 0o755); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("mkdir through the head: %v, want permission denied", err)
	}
	resp, err := http.Get("http://" + h.HTTPAddr() + "/webhdfs/v1/hd?op=LISTSTATUS")
	if err != nil {
		t.Fatal(err)
	}
	var ls struct {
		FileStatuses struct {
			FileStatus []struct{ PathSuffix, Type string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&ls)
	resp.Body.Close()
	if err != nil || len(ls.FileStatuses.FileStatus) != 1 || ls.FileStatuses.FileStatus[0].PathSuffix != "events" {
		t.Fatalf("webhdfs LISTSTATUS /hd: %+v, %v", ls, err)
	}

	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The client's connection was closed with the head: its next call
	// fails (whatever may listen on the port by now is no head of this
	// test's).
	if _, err := c.Stat("/hd"); err == nil {
		t.Fatal("the HDFS client still gets answers after Stop")
	}
}

// TestStandaloneWithoutHead: --no-hdfs-head, and no tier 2, mean no head.
func TestStandaloneWithoutHead(t *testing.T) {
	for name, change := range map[string]func(*embed.StandaloneConfig){
		"off":       func(c *embed.StandaloneConfig) { c.NoHDFS = true },
		"no tier 2": func(c *embed.StandaloneConfig) { c.Node.Tier.URI = "none" },
		"both":      func(c *embed.StandaloneConfig) { c.NoHDFS, c.Node.Tier.URI = true, "none" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := standaloneConfig(t.TempDir())
			change(&cfg)
			s, err := embed.StartStandalone(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop(context.Background())
			if s.HDFS() != nil {
				t.Fatal("a head started")
			}
		})
	}
}

// TestHeadAsItsOwnRole: StartHDFS against a controller (here a
// standalone's, its own head off) serves; a port in use fails the start
// and releases what it opened; a controller without tier 2 is one error.
func TestHeadAsItsOwnRole(t *testing.T) {
	cfg := standaloneConfig(t.TempDir())
	cfg.NoHDFS = true
	s, err := embed.StartStandalone(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())

	h, err := embed.StartHDFS(ctxT(t), headConfig(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + h.HTTPAddr() + "/webhdfs/v1/?op=GETFILESTATUS")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("webhdfs: %v, %v", resp, err)
	}
	resp.Body.Close()

	busy := headConfig(s.URL())
	busy.DataListen = h.DataAddr() // taken
	if _, err := embed.StartHDFS(ctxT(t), busy); err == nil || !strings.Contains(err.Error(), "listen "+h.DataAddr()) {
		t.Fatalf("a head on a taken port: %v", err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := h.Err(); err != nil {
		t.Fatalf("Err after Stop: %v", err)
	}

	none := standaloneConfig(t.TempDir())
	none.NoHDFS, none.Node.Tier.URI = true, "none"
	s2, err := embed.StartStandalone(ctxT(t), none)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop(context.Background())
	if _, err := embed.StartHDFS(ctxT(t), headConfig(s2.URL())); err == nil || !strings.Contains(err.Error(), "has no tier 2") {
		t.Fatalf("a head of a controller without tier 2: %v", err)
	}
}

func TestHeadConfigIsChecked(t *testing.T) {
	for _, tt := range []struct {
		change func(*embed.HDFSConfig)
		want   string
	}{
		{func(c *embed.HDFSConfig) { c.RPCListen = "8020" }, "head RPC listen address"},
		{func(c *embed.HDFSConfig) { c.DataListen = "" }, "head data listen address"},
		{func(c *embed.HDFSConfig) { c.HTTPListen = "x" }, "WebHDFS listen address"},
		{func(c *embed.HDFSConfig) { c.Controller, c.Tier2 = "", "" }, "controller URL"},
		{func(c *embed.HDFSConfig) { c.BlockSize = 1000 }, "block size 1000"},
		{func(c *embed.HDFSConfig) { c.BlockSize = -512 }, "block size -512"},
		{func(c *embed.HDFSConfig) { c.Tier2 = "ftp://x" }, "tier 2 URI"},
		{func(c *embed.HDFSConfig) { c.API.ReadTimeout = 0 }, "API read timeout"},
	} {
		cfg := embed.DefaultHDFSConfig()
		tt.change(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, embed.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate: %v; want ErrInvalidConfig saying %q", err, tt.want)
		}
	}
	if err := embed.DefaultHDFSConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

// TestStopCutsAStalledRead: a WebHDFS client that stops reading an OPEN
// does not outlive Stop: requests still running after the shutdown
// timeout are cut off, and Stop returns only once none reads tier 2.
func TestStopCutsAStalledRead(t *testing.T) {
	cfg := standaloneConfig(t.TempDir())
	cfg.Controller.API.ShutdownTimeout = 300 * time.Millisecond
	s, err := embed.StartStandalone(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	createStream(ctxT(t), t, ctlclient.NewClient(s.URL()), "hd")
	chunk := tier2.ChunkPath("hd", "events", 0, 0)
	putChunk(t, strings.TrimPrefix(s.Node().TierURI(), "file://"), chunk, strings.Repeat("x", 32<<20))
	c, err := net.Dial("tcp", s.HDFS().HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /webhdfs/v1/%s?op=OPEN HTTP/1.1\r\nHost: x\r\n\r\n", chunk)
	// The status line: the handler is sending the body, which this
	// client no longer reads.
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line %q, %v", line, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.HDFS().Stop(context.Background()) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Stop waits for a client that does not read")
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "webhdfs.(*handler).open") {
		t.Fatal("an OPEN handler still runs after Stop returned")
	}
}
