package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestStreamTruncateAtEventBoundaries: `sluice stream truncate` with a cut
// inside an event fails with one line naming the segment, the offset and
// the nearest event boundaries, and changes nothing (the stream reads
// whole); a cut at an event boundary is accepted; `sluice read --from`
// inside an event fails with one clear line.
func TestStreamTruncateAtEventBoundaries(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/t", "--segments", "1")...)
	lines := []string{"first", "second", "third", "fourth"}
	withStdin(t, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/t")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	seg := "s/t/0.#epoch.0"
	second := int64(4 + len("first"))        // where the second event starts
	third := second + int64(4+len("second")) // and the third
	mid := second + 2

	mustFail(t, fmt.Sprintf("offset %d of %s: ", mid, seg), append(c, "stream", "truncate", "s/t", "--cut", fmt.Sprintf("s/t:0.#epoch.0=%d", mid))...)
	_, _, stderr := runArgs(t, append(c, "stream", "truncate", "s/t", "--cut", fmt.Sprintf("s/t:0.#epoch.0=%d", mid))...)
	if want := fmt.Sprintf("the nearest event boundaries are %d and %d", second, third); !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q does not say %q", stderr, want)
	}
	code, stdout, stderr := runArgs(t, append(c, "read", "s/t", "--max", "4")...)
	if code != 0 || stdout != strings.Join(lines, "\n")+"\n" {
		t.Fatalf("read after a refused truncation: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// read prints its position, then the error.
	code, stdout, stderr = runArgs(t, append(c, "read", "s/t", "--from", fmt.Sprintf("s/t:0.#epoch.0=%d", mid), "--max", "1")...)
	if errLines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 1 || stdout != "" ||
		!strings.Contains(errLines[len(errLines)-1], fmt.Sprintf("offset %d is inside the event at %d", mid, second)) {
		t.Fatalf("read from inside an event: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	if out := mustRun(t, append(c, "stream", "truncate", "s/t", "--cut", fmt.Sprintf("s/t:0.#epoch.0=%d", third))...); out != "truncated stream s/t\n" {
		t.Fatalf("truncate printed %q", out)
	}
	code, stdout, stderr = runArgs(t, append(c, "read", "s/t", "--max", "2")...)
	if code != 0 || stdout != "third\nfourth\n" {
		t.Fatalf("read after truncating at %d: exit %d, stdout %q, stderr %q", third, code, stdout, stderr)
	}
}
