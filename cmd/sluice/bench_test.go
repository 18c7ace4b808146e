package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/porttest"
)

// benchJSON runs a bench command with --output json and decodes its report.
func benchJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := runArgs(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v: report is not JSON: %v\n%s", args, err, stdout)
	}
	return r
}

// checkReport checks the fields every report has and that they are sane for
// count events of size bytes.
func checkReport(t *testing.T, r map[string]any, count, size float64) {
	t.Helper()
	for _, k := range []string{"events", "bytes", "seconds", "eventsPerSec", "mbPerSec", "latencyMs"} {
		if _, ok := r[k]; !ok {
			t.Fatalf("report lacks %q: %v", k, r)
		}
	}
	if r["events"] != count || r["bytes"] != count*size {
		t.Fatalf("events %v bytes %v, want %v and %v", r["events"], r["bytes"], count, count*size)
	}
	secs, eps, mbs := r["seconds"].(float64), r["eventsPerSec"].(float64), r["mbPerSec"].(float64)
	if secs <= 0 || eps <= 0 || mbs <= 0 {
		t.Fatalf("seconds %v events/s %v MB/s %v: want all > 0", secs, eps, mbs)
	}
	if d := eps*secs - count; d > 1 || d < -1 {
		t.Fatalf("events/s %v x seconds %v != events %v", eps, secs, count)
	}
	checkLatency(t, r["latencyMs"])
}

func checkLatency(t *testing.T, v any) {
	t.Helper()
	l, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("latency is %v", v)
	}
	var prev float64
	for _, k := range []string{"p50", "p95", "p99", "p999", "max"} {
		x, ok := l[k].(float64)
		if !ok || x <= 0 || x < prev {
			t.Fatalf("latency %s = %v after %v: want > 0 and ordered: %v", k, l[k], prev, l)
		}
		prev = x
	}
}

func TestBenchWrite(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "--output", "json"}
	r := benchJSON(t, append(c, "bench", "write", "--count", "500", "--event-size", "100", "--writers", "2", "--segments", "3")...)
	checkReport(t, r, 500, 100)
	if r["mode"] != "write" || r["segments"] != 3.0 || r["writers"] != 2.0 || r["diskMbPerSec"] != nil {
		t.Fatalf("report %v", r)
	}
	// The stream bench created is gone; with --keep it stays.
	if out := mustRun(t, "--controller", rs.URL, "stream", "list", "bench"); strings.Contains(out, "bench-") {
		t.Fatalf("bench left its stream:\n%s", out)
	}
	r = benchJSON(t, append(c, "bench", "write", "--count", "10", "--keep", "--rate", "1000")...)
	checkReport(t, r, 10, 1024)
	if out := mustRun(t, "--controller", rs.URL, "stream", "list", "bench"); !strings.Contains(out, r["stream"].(string)) {
		t.Fatalf("--keep: %s not kept:\n%s", r["stream"], out)
	}

	// --measure-disk adds the disk's limits and the ratios (small probes:
	// the test checks the report, not the disk).
	bytes, syncs := diskProbeBytes, diskProbeSyncs
	diskProbeBytes, diskProbeSyncs = 4<<20, 50
	defer func() { diskProbeBytes, diskProbeSyncs = bytes, syncs }()
	r = benchJSON(t, append(c, "bench", "write", "--count", "200", "--measure-disk", "--disk-dir", t.TempDir())...)
	checkReport(t, r, 200, 1024)
	for _, k := range []string{"diskMbPerSec", "diskP99Ms", "diskRatio", "p99DiskRatio"} {
		if x, ok := r[k].(float64); !ok || x <= 0 {
			t.Fatalf("%s = %v, want > 0", k, r[k])
		}
	}
	// No ideal log without --rate: the load to probe it at is unknown.
	if g, ok := r["diskGroupP99Ms"]; ok {
		t.Fatalf("diskGroupP99Ms = %v without --rate", g)
	}
}

// TestBenchSlowLog: the hidden --slow-log writes a line per event of the
// timed run over --slow-over; a file that cannot be made is one clear error.
func TestBenchSlowLog(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "--output", "json"}
	file := filepath.Join(t.TempDir(), "slow.txt")
	r := benchJSON(t, append(c, "bench", "e2e", "--count", "50", "--rate", "1000", "--slow-log", file, "--slow-over", "0s")...)
	checkReport(t, r, 50, 1024)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if acks, e2e := strings.Count(string(b), "ack "), strings.Count(string(b), "e2e "); acks != 50 || e2e != 50 {
		t.Fatalf("--slow-log: %d ack and %d e2e lines, want 50 of each:\n%s", acks, e2e, b)
	}
	mustFail(t, "--slow-log: open "+filepath.Join(file, "x"), "--controller", rs.URL, "bench", "write", "--count", "5", "--slow-log", filepath.Join(file, "x"))
}

func TestBenchE2EAndRead(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "--output", "json"}
	r := benchJSON(t, append(c, "bench", "e2e", "--count", "300", "--segments", "2", "--rate", "3000")...)
	checkReport(t, r, 300, 1024)
	checkLatency(t, r["writeLatencyMs"])
	if r["readers"] != 1.0 {
		t.Fatalf("readers %v, want 1", r["readers"])
	}

	// --readers: one reader group shares the segments; every event is read
	// once (events counts exactly the events written).
	r = benchJSON(t, append(c, "bench", "e2e", "--count", "600", "--segments", "4", "--readers", "3", "--rate", "3000")...)
	checkReport(t, r, 600, 1024)
	checkLatency(t, r["writeLatencyMs"])
	if r["readers"] != 3.0 || r["segments"] != 4.0 {
		t.Fatalf("report %v", r)
	}

	// read over an existing stream counts only the fill.
	mustRun(t, "--controller", rs.URL, "scope", "create", "s")
	mustRun(t, "--controller", rs.URL, "stream", "create", "s/x", "--segments", "2")
	withStdin(t, "old\nolder\n")
	if code, _, stderr := runArgs(t, "--controller", rs.URL, "write", "s/x"); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	r = benchJSON(t, append(c, "bench", "read", "--stream", "s/x", "--count", "400", "--event-size", "64")...)
	checkReport(t, r, 400, 64)
	r = benchJSON(t, append(c, "bench", "read", "--stream", "s/x", "--count", "400", "--event-size", "64", "--readers", "2")...)
	checkReport(t, r, 400, 64)
	if r["readers"] != 2.0 {
		t.Fatalf("readers %v, want 2", r["readers"])
	}
	// The runs' reader groups are gone.
	if groups, err := ctlclient.NewClient(rs.URL).ListReaderGroups(context.Background(), "s"); err != nil || len(groups) != 0 {
		t.Fatalf("reader groups of s after the runs: %v, %v; want none", groups, err)
	}

	// The table names every figure.
	code, stdout, _ := runArgs(t, "--controller", rs.URL, "bench", "e2e", "--count", "20")
	if code != 0 {
		t.Fatalf("table: exit %d", code)
	}
	for _, want := range []string{"events", "20", "events/s", "MB/s", "latency ms", "p99.9", "write->ack ms"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestBenchBadInput(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustFail(t, "not found", append(c, "bench", "write", "--stream", "bench/unknown", "--count", "1")...)
	mustFail(t, "--keep applies to the stream bench creates", append(c, "bench", "read", "--stream", "s/x", "--keep")...)
	mustFail(t, "--event-size 8388609: want 1 to 8388608", append(c, "bench", "write", "--event-size", "8388609")...)
	mustFail(t, "e2e events carry an 8-byte timestamp", append(c, "bench", "e2e", "--event-size", "4")...)
	mustFail(t, "--duration and --count exclude each other", append(c, "bench", "write", "--count", "1", "--duration", "1s")...)
	mustFail(t, "--measure-disk needs --disk-dir", append(c, "bench", "write", "--measure-disk")...)
	mustFail(t, "--disk-canary needs --measure-disk", append(c, "bench", "write", "--disk-canary")...)
	mustFail(t, "--disk-canary: with --measure-disk, and bench write or e2e", append(c, "bench", "read", "--disk-canary", "--measure-disk", "--disk-dir", t.TempDir())...)
	mustFail(t, "--readers 0: want at least 1", append(c, "bench", "e2e", "--readers", "0")...)
	mustFail(t, "--stream \"nostream\" is not SCOPE/STREAM", append(c, "bench", "write", "--stream", "nostream")...)

	addr := porttest.Addr(t) // reserved, nothing listens there
	mustFail(t, "unreachable", "--controller", "http://"+addr, "bench", "write", "--count", "1")
}
