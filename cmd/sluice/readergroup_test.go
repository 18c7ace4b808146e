package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestReaderGroupCommands(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/r", "--segments", "2")...)
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("e-%02d", i))
	}
	withStdin(t, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/r")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	if code, stdout, stderr := runArgs(t, append(c, "readergroup", "create", "s/g", "--stream", "s/r")...); code != 0 ||
		stdout != "created reader group s/g of s/r\n" {
		t.Fatalf("create: exit %d: stdout %q, stderr %q", code, stdout, stderr)
	}
	mustFail(t, "already exists", append(c, "readergroup", "create", "s/g", "--stream", "s/r")...)
	mustFail(t, "not found", append(c, "readergroup", "create", "s/h", "--stream", "s/missing")...)

	out := mustRun(t, append(c, "readergroup", "describe", "s/g")...)
	if !strings.Contains(out, "(unassigned)") || strings.Count(out, "s/r/") != 2 {
		t.Fatalf("describe of a new group:\n%s", out)
	}
	out = mustRun(t, append(c, "readergroup", "lag", "s/g")...)
	if !strings.Contains(out, "TOTAL") || strings.HasSuffix(strings.TrimSpace(out), " 0") {
		t.Fatalf("lag before reading:\n%s", out)
	}

	// Two reads as members of the group: together every event once.
	code, first, stderr := runArgs(t, append(c, "read", "s/r", "--group", "g", "--max", "12")...)
	if code != 0 {
		t.Fatalf("read --group: %s", stderr)
	}
	code, second, stderr := runArgs(t, append(c, "read", "s/r", "--group", "g", "--timeout", "500ms")...)
	if code != 0 {
		t.Fatalf("read --group: %s", stderr)
	}
	got := strings.Fields(first + second)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(lines, " ") {
		t.Fatalf("the group read %v, want %v", got, lines)
	}

	var lag struct {
		Total int64 `json:"totalBytesBehind"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(c, "--output", "json", "readergroup", "lag", "s/g")...)), &lag); err != nil || lag.Total != 0 {
		t.Fatalf("lag after reading all: %+v %v", lag, err)
	}
	out = mustRun(t, append(c, "--output", "json", "readergroup", "describe", "s/g")...)
	if !strings.Contains(out, `"stream": "s/r"`) || !strings.Contains(out, `"readers": {}`) {
		t.Fatalf("describe json after both left:\n%s", out)
	}
	mustFail(t, "another stream", append(c, "read", "s/other", "--group", "g")...)
	if code, _, stderr := runArgs(t, append(c, "readergroup", "delete", "s/g")...); code != 0 {
		t.Fatalf("delete: %s", stderr)
	}
	mustFail(t, "reader group s/g: not found", append(c, "readergroup", "describe", "s/g")...)
	mustFail(t, "SCOPE/GROUP", append(c, "readergroup", "describe", "nogroup")...)
}
