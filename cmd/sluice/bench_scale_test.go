package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestBenchManyStreamsScaleAt runs bench write over two streams through
// one shared client with a split during the run and the server's memory
// (the standalone runs in this process).
func TestBenchManyStreamsScaleAt(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "--output", "json"}
	r := benchJSON(t, append(c, "bench", "write", "--streams", "2", "--segments", "2", "--writers", "2", "--clients", "1",
		"--event-size", "100", "--rate", "1000", "--duration", "2s", "--scale-at", "500ms", "--server-pid", strconv.Itoa(os.Getpid()))...)
	if r["streams"] != 2.0 || r["segments"] != 4.0 || r["writers"] != 2.0 {
		t.Fatalf("report %v: want 2 streams, 4 segments, 2 writers", r)
	}
	s, ok := r["scale"].(map[string]any)
	if !ok || s["eventsDuring"].(float64) <= 0 || s["eventsOutside"].(float64) <= 0 || s["askedMs"].(float64) < 500 {
		t.Fatalf("scale %v", r["scale"])
	}
	checkLatency(t, s["duringMs"])
	checkLatency(t, s["outsideMs"])
	if m, ok := r["server"].(map[string]any); !ok || m["rssBytes"].(float64) <= 0 {
		t.Fatalf("server %v", r["server"])
	}
}

func TestBenchScaleBadInput(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustFail(t, "--streams applies to the streams bench creates", append(c, "bench", "write", "--stream", "s/x", "--streams", "2")...)
	mustFail(t, "--scale-at applies to bench write", append(c, "bench", "e2e", "--scale-at", "1s")...)
	mustFail(t, "--scale-at 0s: want more than 0", append(c, "bench", "write", "--scale-at", "0s")...)
	mustFail(t, "needs the stream's target rate", append(c, "bench", "scale", "--rate", "100")...)
	mustFail(t, "writes above --target", append(c, "bench", "scale", "--target", "100", "--rate", "100")...)
	mustFail(t, "--target and --warmup apply to bench scale", append(c, "bench", "write", "--target", "100")...)
	mustFail(t, "--server-pid 999999999", append(c, "bench", "write", "--count", "1", "--server-pid", "999999999")...)
}

// TestPprofAddr: --pprof-addr serves the runtime's profiles until stopped.
func TestPprofAddr(t *testing.T) {
	var out bytes.Buffer
	app := &cli.App{Writer: &out, ErrWriter: io.Discard, Action: func(c *cli.Context) error {
		stop, err := servePprof(c, "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer stop()
		addr, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "pprof listening on ")
		if !ok {
			t.Fatalf("printed %q", out.String())
		}
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "# HeapAlloc = ") {
			t.Fatalf("heap profile: %s\n%.300s", resp.Status, b)
		}
		return nil
	}}
	if err := app.Run([]string{"sluice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := servePprof(cli.NewContext(app, nil, nil), "256.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "--pprof-addr 256.0.0.1:1") {
		t.Fatalf("bad address: %v", err)
	}
}
