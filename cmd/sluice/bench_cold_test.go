package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench read --cold catches up from tier 2: the fill is all in tier 2
// before the read, the page cache of the tier-2 files is dropped, and the
// report sets the read against a reference file as large read cold and
// against the stream's own tier-2 files read cold; the reference file is
// gone afterwards.
func TestBenchReadCold(t *testing.T) {
	dir := t.TempDir()
	rs := startStandalone(t, dir, "--tier-max-lag", "1s", "--cache-size", "4MiB", "--no-hdfs-head", "--no-nfs-head", "--no-s3-head")
	c := []string{"--controller", rs.URL, "--output", "json"}
	for _, args := range [][]string{
		{"--count", "3000"}, // the controller's tier 2
		{"--count", "3000", "--readers", "2", "--segments", "2", "--tier-dir", filepath.Join(dir, "tier2")},
	} {
		r := benchJSON(t, append(append(c, "bench", "read", "--cold"), args...)...)
		checkReport(t, r, 3000, 1024)
		cold, ok := r["cold"].(map[string]any)
		if !ok {
			t.Fatalf("%v: report has no cold section: %v", args, r)
		}
		// Every event with its 4-byte frame is in tier 2.
		if tb := cold["tieredBytes"].(float64); tb < 3000*(1024+4) || cold["refBytes"] != tb {
			t.Fatalf("%v: tiered %v bytes, reference %v: want at least %d, and equal", args, tb, cold["refBytes"], 3000*(1024+4))
		}
		if cold["tierDir"] != filepath.Join(dir, "tier2") || cold["files"].(float64) < 1 || cold["fileBytes"].(float64) < cold["tieredBytes"].(float64) {
			t.Fatalf("%v: dropped %v files of %v bytes under %v", args, cold["files"], cold["fileBytes"], cold["tierDir"])
		}
		if cold["diskReadMbPerSec"].(float64) <= 0 || cold["ratio"].(float64) <= 0 {
			t.Fatalf("%v: disk %v MB/s, ratio %v", args, cold["diskReadMbPerSec"], cold["ratio"])
		}
		// The stream's own chunk files, read again plainly: at least the
		// events' bytes (a SequenceFile adds headers and keys), and no more
		// than everything dropped.
		if fb := cold["streamFileBytes"].(float64); fb < cold["tieredBytes"].(float64) || fb > cold["fileBytes"].(float64) ||
			cold["streamFiles"].(float64) < 1 || cold["streamFilesReadMbPerSec"].(float64) <= 0 || cold["filesRatio"].(float64) <= 0 ||
			cold["streamFilesFirstReadMbPerSec"].(float64) <= 0 {
			t.Fatalf("%v: the stream's files: %v files, %v bytes, %v MB/s, ratio %v", args, cold["streamFiles"], fb,
				cold["streamFilesReadMbPerSec"], cold["filesRatio"])
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".bench-cold-ref-") {
				t.Fatalf("%v: the reference file %s is left", args, e.Name())
			}
		}
	}

	// The table shows the disk's cold read.
	code, stdout, stderr := runArgs(t, "--controller", rs.URL, "bench", "read", "--cold", "--count", "100")
	if code != 0 {
		t.Fatalf("table: exit %d, %s", code, stderr)
	}
	for _, want := range []string{"tier dir", "disk cold read MB/s", "MB/s / disk cold read"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("table lacks %q:\n%s", want, stdout)
		}
	}

	mustFail(t, "--cold applies to bench read", "--controller", rs.URL, "bench", "write", "--cold", "--count", "1")
	mustFail(t, "--tier-dir is used only with --cold", "--controller", rs.URL, "bench", "read", "--tier-dir", dir, "--count", "1")
	mustFail(t, "--tier-dir "+filepath.Join(dir, "nothing")+": not a directory", "--controller", rs.URL, "bench", "read", "--cold", "--tier-dir", filepath.Join(dir, "nothing"), "--count", "1")
}

// Without tier 2 there is nothing to catch up from.
func TestBenchReadColdNeedsTier2(t *testing.T) {
	rs := startStandalone(t, t.TempDir(), "--tier2", "none", "--no-hdfs-head", "--no-nfs-head", "--no-s3-head")
	mustFail(t, "the controller has no tier 2", "--controller", rs.URL, "bench", "read", "--cold", "--count", "10")
}
