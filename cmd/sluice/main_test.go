package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// runArgs runs the app in-process with args and returns its exit status,
// stdout and stderr.
func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"sluice"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// oneErrorLine fails unless stderr is exactly one line starting with
// "sluice: " and containing want.
func oneErrorLine(t *testing.T, stderr, want string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "sluice: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("stderr = %q, want one line 'sluice: ...%s...'", stderr, want)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {}, {"help"}} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		for _, want := range []string{"sluice", "node", "version", "--controller", "--output"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, stdout)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := runArgs(t, "version")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, version) || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("stdout = %q", stdout)
	}

	code, stdout, _ = runArgs(t, "--output", "json", "version")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || v["version"] != version {
		t.Fatalf("json version: exit %d, stdout %q", code, stdout)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"no-such-command"}, `unknown command "no-such-command"`},
		{[]string{"--no-such-flag"}, "no-such-flag"},
		{[]string{"version", "--no-such-flag"}, "no-such-flag"},
		{[]string{"--output", "yaml", "version"}, `unknown format "yaml"`},
		{[]string{"--log-level", "loud", "version"}, "--log-level"},
		{[]string{"node", "--containers", "x"}, "containers"},
		{[]string{"help", "no-such-command"}, "no-such-command"},
		{[]string{"node", "--data", "/dev/null/sub"}, "/dev/null/sub"},
		{[]string{"--controller", "ftp://h:1", "scope", "list"}, `--controller "ftp://h:1"`},
		{[]string{"--controller", "http://", "scope", "list"}, "want http://HOST:PORT"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(t, tt.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			oneErrorLine(t, stderr, tt.want)
		})
	}
}

func TestNodeHelpShowsFlags(t *testing.T) {
	code, stdout, _ := runArgs(t, "node", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--data", "--listen", "--containers", "--cache-size", "--wal-file-size", "127.0.0.1:12345"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("node help lacks %q:\n%s", want, stdout)
		}
	}
}
