package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestReadSlice: `sluice read --from CUT --to CUT` prints exactly the
// events between the cuts and exits 0 at the end cut (with --follow, so
// only the end cut can end it), also as a reader group created with --to;
// `readergroup checkpoint` prints a checkpoint's cut and `readergroup
// reset --checkpoint` makes a group read again from it.
func TestReadSlice(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/b", "--segments", "2")...)
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf("k-%d", i))
	}
	withStdin(t, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/b", "--key", "k")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	code, _, stderr := runArgs(t, append(c, "read", "s/b", "--max", "3")...)
	if code != 0 {
		t.Fatalf("read: %s", stderr)
	}
	from := position(t, stderr)
	code, _, stderr = runArgs(t, append(c, "read", "s/b", "--from", from, "--max", "4")...)
	if code != 0 {
		t.Fatalf("read: %s", stderr)
	}
	to := position(t, stderr)
	// More events after the end cut.
	withStdin(t, "k-10\nk-11\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/b", "--key", "k")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	want := strings.Join(lines[3:7], "\n") + "\n"

	code, stdout, stderr := runArgs(t, append(c, "read", "s/b", "--from", from, "--to", to, "--follow")...)
	if code != 0 || stdout != want || position(t, stderr) != to {
		t.Fatalf("read --from --to: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// A group bounded the same way: its reader ends at the end cut.
	mustRun(t, append(c, "readergroup", "create", "s/g", "--stream", "s/b", "--from", from, "--to", to)...)
	code, stdout, stderr = runArgs(t, append(c, "read", "s/b", "--group", "g", "--follow")...)
	if code != 0 || stdout != want {
		t.Fatalf("read --group of a bounded group: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	mustFail(t, "is after the end cut", append(c, "read", "s/b", "--from", to, "--to", from)...)
	mustFail(t, "--to belongs to `readergroup create`", append(c, "read", "s/b", "--group", "g", "--to", to)...)
	mustFail(t, "--to: want a stream cut", append(c, "read", "s/b", "--to", "s/b:0.#epoch.0=x")...)

	// reset --checkpoint: a group from `from` checkpoints there at once
	// (no readers yet), reads 4 events, and after the reset the same 4.
	mustRun(t, append(c, "readergroup", "create", "s/g2", "--stream", "s/b", "--from", from)...)
	out := mustRun(t, append(c, "readergroup", "checkpoint", "s/g2", "cp")...)
	if !strings.Contains(out, "checkpoint cp of reader group s/g2: "+from) {
		t.Fatalf("checkpoint: %q, want the cut %s", out, from)
	}
	mustFail(t, "exists", append(c, "readergroup", "checkpoint", "s/g2", "cp")...)
	if code, _, stderr := runArgs(t, append(c, "readergroup", "describe", "s/g2")...); code != 0 || !strings.Contains(stderr, "checkpoint cp: "+from+"\n") {
		t.Fatalf("describe: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runArgs(t, append(c, "readergroup", "describe", "s/g")...); code != 0 || !strings.Contains(stderr, "ends at "+to+"\n") {
		t.Fatalf("describe of the bounded group: exit %d, stderr %q", code, stderr)
	}
	for range 2 {
		code, stdout, stderr = runArgs(t, append(c, "read", "s/b", "--group", "g2", "--max", "4")...)
		if code != 0 || stdout != want {
			t.Fatalf("read --group g2: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		out = mustRun(t, append(c, "readergroup", "reset", "s/g2", "--checkpoint", "cp")...)
		if !strings.Contains(out, "reset reader group s/g2 to checkpoint cp") {
			t.Fatalf("reset: %q", out)
		}
	}
	mustFail(t, "no such checkpoint", append(c, "readergroup", "reset", "s/g2", "--checkpoint", "nope")...)
	mustFail(t, "exactly one of --checkpoint NAME and --cut CUT", append(c, "readergroup", "reset", "s/g2")...)
	mustRun(t, append(c, "readergroup", "reset", "s/g2", "--cut", to)...)
	code, stdout, stderr = runArgs(t, append(c, "read", "s/b", "--group", "g2", "--max", "2")...)
	if code != 0 || stdout != "k-7\nk-8\n" {
		t.Fatalf("read --group g2 after reset --cut: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
