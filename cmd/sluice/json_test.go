package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// leafCommands returns the path ("stream create") of every command of app
// that has no subcommands.
func leafCommands(app *cli.App) []string {
	var out []string
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			if len(c.Subcommands) == 0 {
				out = append(out, p)
			}
			walk(p, c.Subcommands)
		}
	}
	walk("", app.Commands)
	return out
}

// roles are the long-running commands: they print logs, not data, so -o
// json changes only their errors.
var roles = map[string]bool{"node": true, "controller": true, "standalone": true, "hdfs-gateway": true, "nfs-export": true, "s3-gateway": true, "scheduler": true, "executor": true}

// jsonValues decodes every JSON value of s (one, or JSON Lines), failing
// on anything else, and returns them.
func jsonValues(t *testing.T, what, s string) []any {
	t.Helper()
	var vals []any
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", what, err, s)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		t.Fatalf("%s: printed nothing, want JSON", what)
	}
	return vals
}

// checkCamelKeys fails on an object key of v that is not camelCase (a
// lower-case first letter, no '_', '-' or space), except under the maps
// whose keys are names (segments, readers, tags).
func checkCamelKeys(t *testing.T, what string, v any) {
	t.Helper()
	names := map[string]bool{"tags": true, "readers": true, "segments": true, "unassigned": true, "ended": true,
		"head": true, "cut": true, "positions": true}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "" || k[0] < 'a' || k[0] > 'z' || strings.ContainsAny(k, "_- ") {
					t.Errorf("%s: key %q at %s is not camelCase", what, k, path)
				}
				if names[k] {
					if m, ok := e.(map[string]any); ok {
						for name, e := range m {
							walk(path+"."+k+"["+name+"]", e)
						}
						continue
					}
				}
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", v)
}

// TestEveryCommandPrintsJSON runs every leaf command with -o json against
// a real standalone (and, for cluster, a scheduler's API) and parses what
// it prints: JSON, or JSON Lines for read. A command missing from the
// table fails the test: a new command joins it.
func TestEveryCommandPrintsJSON(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	// bench scale needs auto-scaling in seconds: a standalone of its own.
	fast := startStandalone(t, t.TempDir(), "--rate-windows", "1s,2s,3s,4s", "--autoscale-interval", "100ms", "--autoscale-cooldown", "500ms")
	sched := newFakeScheduler(t)
	s := []string{"--scheduler", sched.URL}
	// In order: later cases use what earlier ones made.
	cases := []struct {
		path  string
		args  []string
		stdin string
		want  string // a string the JSON must hold
	}{
		{path: "version", want: `"version"`},
		{path: "scope create", args: []string{"j"}, want: `"scopeName":"j"`},
		{path: "scope list", want: `"scopeName":"j"`},
		{path: "stream create", args: []string{"j/s", "--segments", "2"}, want: `"segments":[`},
		{path: "stream list", args: []string{"j"}, want: `"streamName":"s"`},
		{path: "stream describe", args: []string{"j/s"}, want: `"head":{`},
		{path: "stream watermarks", args: []string{"j/s"}, want: `[]`}, // no writer noted a time
		{path: "write", args: []string{"j/s", "--key", "k"}, stdin: "one\ntwo\n", want: `"acknowledged":2`},
		{path: "read", args: []string{"j/s", "--max", "2"}, want: `"payload":"one"`},
		{path: "stream scale", args: []string{"j/s", "--seal", "0", "--ranges", "0-0.25,0.25-0.5"}, want: `"keyLow":0.25`},
		{path: "readergroup create", args: []string{"j/g", "--stream", "j/s"}, want: `"group":"j/g"`},
		{path: "readergroup describe", args: []string{"j/g"}, want: `"stream":"j/s"`},
		{path: "readergroup lag", args: []string{"j/g"}, want: `"totalBytesBehind"`},
		{path: "readergroup checkpoint", args: []string{"j/g", "c1"}, want: `"checkpoint":"c1"`},
		{path: "readergroup reset", args: []string{"j/g", "--checkpoint", "c1"}, want: `"checkpoint":"c1"`},
		{path: "readergroup delete", args: []string{"j/g"}, want: `"deleted":true`},
		{path: "hive ddl", args: []string{"j/s", "--location", "file:///t2"}, want: `"ddl":"`},
		{path: "bench write", args: []string{"--count", "20", "--event-size", "10"}, want: `"eventsPerSec"`},
		{path: "bench read", args: []string{"--count", "20", "--event-size", "10"}, want: `"latencyMs"`},
		{path: "bench e2e", args: []string{"--count", "20", "--event-size", "10"}, want: `"writeLatencyMs"`},
		{path: "bench summarize", stdin: "# run: write-fresh\n" + `{"mode":"write","events":1,"mbPerSec":10.5,"latencyMs":{"p50":0.5,"p99":1}}` + "\n",
			want: `"measure":"MB/s","median":10.5`},
		{path: "bench scale", args: []string{"--controller", fast.URL, "--target", "50", "--rate", "500", "--warmup", "1s", "--event-size", "10"}, want: `"reaction"`},
		{path: "stream truncate", args: []string{"j/s", "--cut", "j/s:1.#epoch.0=0,2.#epoch.1=0,3.#epoch.1=0"}, want: `"truncated":true`},
		{path: "stream seal", args: []string{"j/s"}, want: `"sealed":true`},
		{path: "stream delete", args: []string{"j/s"}, want: `"deleted":true`},
		{path: "scope delete", args: []string{"j"}, want: `"deleted":true`},
		{path: "cluster status", args: s, want: `"phases"`},
		{path: "cluster endpoints", args: s, want: `"zkRoot"`},
		{path: "cluster nodes", args: s, want: `"name":"node-0"`},
		{path: "cluster controllers", args: s, want: `"name":"controller-0"`},
		{path: "cluster heads", args: s, want: `"webhdfs":"webhdfs://h0:9870"`},
		{path: "cluster heads", args: append([]string{"--kind", "nfs"}, s...), want: `"url":"nfs://h0:12049/"`},
		{path: "cluster pod restart", args: append([]string{"node-1"}, s...), want: `"name":"node-1"`},
		{path: "cluster pod replace", args: append([]string{"node-2"}, s...), want: `"name":"node-2"`},
		{path: "cluster restart", args: append([]string{"--kind", "node"}, s...), want: `"phases"`},
		{path: "cluster pause", args: s, want: `"phases"`},
		{path: "cluster resume", args: s, want: `"phases"`},
		{path: "cluster uninstall forget-agent", args: append([]string{"a-node-2"}, s...), want: `"name":"unreserve"`},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.path] = true
		t.Run(tc.path, func(t *testing.T) {
			if tc.stdin != "" {
				withStdin(t, tc.stdin)
			}
			args := append(append([]string{"--controller", rs.URL}, strings.Fields(tc.path)...), tc.args...)
			args = append(args, "-o", "json") // after the command: a global flag anywhere
			code, stdout, stderr := runArgs(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
			}
			vals := jsonValues(t, tc.path, stdout)
			var compact bytes.Buffer
			for _, v := range vals {
				checkCamelKeys(t, tc.path, v)
				b, _ := json.Marshal(v)
				compact.Write(b)
			}
			if !strings.Contains(compact.String(), tc.want) {
				t.Errorf("%s printed %s; want it to hold %s", tc.path, compact.String(), tc.want)
			}
			if tc.path == "read" && len(vals) != 2 {
				t.Errorf("read printed %d JSON lines, want 2:\n%s", len(vals), stdout)
			}
		})
	}
	// The roles print logs; -o json shapes their errors only.
	for r := range roles {
		tested[r] = true
		t.Run(r, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, r, "--no-such-flag", "-o", "json")
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q", code, stdout)
			}
			checkJSONError(t, stderr, "no-such-flag", codeUsage)
		})
	}
	var g globalOptions
	for _, leaf := range leafCommands(newApp(&g, nil, nil)) {
		if !tested[leaf] {
			t.Errorf("command %q has no case in TestEveryCommandPrintsJSON: add one", leaf)
		}
	}
}

// checkJSONError fails unless stderr is one JSON error object whose
// message holds want and whose code is code.
func checkJSONError(t *testing.T, stderr, want, code string) {
	t.Helper()
	var e jsonError
	dec := json.NewDecoder(strings.NewReader(stderr))
	if err := dec.Decode(&e); err != nil || dec.More() || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr is not one JSON error object (%v):\n%s", err, stderr)
	}
	if !strings.Contains(e.Error.Message, want) || e.Error.Code != code {
		t.Fatalf("error %+v; want a message holding %q, code %q", e.Error, want, code)
	}
}

// TestJSONErrors: with -o json, an error is one JSON object on stderr,
// with the REST API's code or the CLI's, and the exit status is 1.
func TestJSONErrors(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "-o", "json"}
	mustRun(t, append(c, "scope", "create", "e")...)
	mustRun(t, append(c, "stream", "create", "e/s")...)
	withStdin(t, "abc\n")
	mustRun(t, append(c, "write", "e/s")...)
	for _, tc := range []struct {
		args       []string
		want, code string
	}{
		{[]string{"stream", "describe", "e/nope"}, "stream e/nope: not found", "NOT_FOUND"},
		{[]string{"scope", "create", "e"}, "scope e: already exists", "EXISTS"},
		{[]string{"stream", "create", "e/a b"}, `name "a b"`, "INVALID"},
		{[]string{"stream", "truncate", "e/s", "--cut", "e/s:0.#epoch.0=1"}, "offset 1", "NOT_EVENT_BOUNDARY"},
		{[]string{"stream", "delete", "e/s"}, "is not sealed", "CONFLICT"},
		{[]string{"stream", "describe"}, "want SCOPE/STREAM, got none", codeUsage},
		{[]string{"stream", "describe", "e"}, `"e" is not SCOPE/STREAM`, codeUsage},
		{[]string{"stream", "create", "e/x", "--segments", "many"}, "segments", codeUsage},
		{[]string{"stream", "create", "e/x", "--retention-time", "90m"}, "want whole days", codeUsage},
		{[]string{"read", "e/s", "--timeout", "1y"}, "want a duration", codeUsage},
		{[]string{"stream", "frob"}, `unknown command "frob"`, codeUsage},
		{[]string{"stream", "truncate", "e/s"}, `Required flag "cut" not set`, codeUsage},
		{[]string{"--log-level", "loud", "version"}, "--log-level", codeUsage},
		{[]string{"--controller", "127.0.0.1:1", "scope", "list"}, "unreachable", codeUnreachable},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(t, append(c, tc.args...)...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 1 and nothing on stdout", code, stdout)
			}
			checkJSONError(t, stderr, tc.want, tc.code)
		})
	}
	// Without -o json, the same error is today's one line.
	_, _, stderr := runArgs(t, "--controller", rs.URL, "stream", "describe", "e/nope")
	oneErrorLine(t, stderr, "stream e/nope: not found")
}

// TestWriteJSONSummary: write -o json prints its summary on stdout however
// it ends once writing began, and a failure as a JSON error on stderr.
func TestWriteJSONSummary(t *testing.T) {
	rs := startStandalone(t, t.TempDir())
	c := []string{"--controller", rs.URL, "-o", "json"}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x")...)
	var in bytes.Buffer
	in.WriteString("a\nbc\n")
	in.Write(bytes.Repeat([]byte("x"), 9<<20))
	in.WriteString("\nafter\n")
	withStdinReader(t, &in)
	code, stdout, stderr := runArgs(t, append(c, "write", "s/x", "--key", "k")...)
	if code != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var sum writeSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("stdout is not the summary: %v\n%s", err, stdout)
	}
	if want := (writeSummary{Stream: "s/x", Lines: 2, Acknowledged: 2, FirstAcknowledged: 2, Bytes: 3}); sum.Done ||
		sum.Stream != want.Stream || sum.Lines != want.Lines || sum.Acknowledged != want.Acknowledged ||
		sum.FirstAcknowledged != want.FirstAcknowledged || sum.Bytes != want.Bytes {
		t.Fatalf("summary %+v, want %+v", sum, want)
	}
	checkJSONError(t, stderr, "line 3 is 9 MiB, over the 8 MiB event limit", "")

	withStdin(t, "done\n")
	out := mustRun(t, append(c, "write", "s/x")...)
	if err := json.Unmarshal([]byte(out), &sum); err != nil || !sum.Done || sum.Acknowledged != 1 || sum.Bytes != 4 {
		t.Fatalf("summary %+v (%v) of a write that ended well", sum, err)
	}
}
