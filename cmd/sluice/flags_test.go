package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestFlagsFirst: the global flags move to the front from anywhere before
// "--", a command's own flags go before its positional arguments, and
// the order of repeated flags is kept (the last wins).
func TestFlagsFirst(t *testing.T) {
	var g globalOptions
	app := newApp(&g, nil, nil)
	for _, tc := range []struct{ in, want string }{
		{"stream describe s/t -o json", "-o json stream describe s/t"},
		{"-o json stream describe s/t", "-o json stream describe s/t"},
		{"stream -o json describe s/t", "-o json stream describe s/t"},
		{"stream describe -o=json s/t", "-o=json stream describe s/t"},
		{"stream describe s/t --output json", "--output json stream describe s/t"},
		{"scope list --controller=http://h:1", "--controller=http://h:1 scope list"},
		{"scope list --controller h:1 -o json", "--controller h:1 -o json scope list"},
		{"-o table scope list -o json", "-o table -o json scope list"},
		{"stream create s/x --segments 2 --log-level warn", "--log-level warn stream create --segments 2 s/x"},
		{"write s/t --key -o", "write --key -o s/t"}, // -o is --key's value
		{"read s/t --follow -o json", "-o json read --follow s/t"},
		{"read s/t -f -", "read -f s/t -"},
		{"read s/t -- -o json", "read s/t -- -o json"}, // "--" ends the flags
		{"stream list s --version", "--version stream list s"},
		{"help stream -o json", "-o json help stream"},
		{"stream create --segments 2 s/create", "stream create --segments 2 s/create"},
		{"bogus -o json", "-o json bogus"},
		{"", ""},
	} {
		got := flagsFirst(app, append([]string{"sluice"}, strings.Fields(tc.in)...))
		if strings.Join(got[1:], " ") != tc.want {
			t.Errorf("%q -> %q, want %q", tc.in, strings.Join(got[1:], " "), tc.want)
		}
	}
}

// TestGlobalFlagsAnywhere runs commands with the global flags in each
// place and form, and checks that they took effect.
func TestGlobalFlagsAnywhere(t *testing.T) {
	// --output: version prints JSON.
	for _, args := range [][]string{
		{"version", "-o", "json"},
		{"-o", "json", "version"},
		{"version", "--output=json"},
		{"version", "-o=json"},
		{"-o", "table", "version", "-o", "json"}, // the last wins
		{"--version", "-o", "json"},
		{"-o", "json", "scope", "--version"}, // --version anywhere: only the version
	} {
		code, stdout, stderr := runArgs(t, args...)
		var v map[string]string
		if code != 0 || stderr != "" || json.Unmarshal([]byte(stdout), &v) != nil || v["version"] != version {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want the version in JSON", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := runArgs(t, "-o", "json", "version", "-o", "table")
	if code != 0 || !strings.HasPrefix(stdout, "VERSION") {
		t.Errorf("-o json version -o table: exit %d, stdout %q; want the table (the last wins)", code, stdout)
	}
	code, stdout, _ = runArgs(t, "--version")
	if _, vstdout, _ := runArgs(t, "version"); code != 0 || stdout != vstdout {
		t.Errorf("--version printed %q, version %q", stdout, vstdout)
	}

	// --controller: the error names the controller that was asked.
	const dead = "127.0.0.1:1"
	for _, args := range [][]string{
		{"scope", "list", "--controller", dead},
		{"scope", "list", "--controller=" + dead},
		{"scope", "--controller", dead, "list"},
		{"--controller", "http://127.0.0.1:2", "scope", "list", "--controller", dead},
	} {
		code, _, stderr := runArgs(t, args...)
		oneErrorLine(t, stderr, "controller http://"+dead+" unreachable")
		if code != 1 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	t.Setenv("SLUICE_CONTROLLER", dead)
	_, _, stderr := runArgs(t, "scope", "list")
	oneErrorLine(t, stderr, "controller http://"+dead+" unreachable")
	_, _, stderr = runArgs(t, "scope", "list", "--controller", "127.0.0.1:3")
	oneErrorLine(t, stderr, "controller http://127.0.0.1:3 unreachable") // the flag wins over the variable

	// --log-level after the command is checked like before it.
	_, _, stderr = runArgs(t, "version", "--log-level", "loud")
	oneErrorLine(t, stderr, "--log-level")
}

// TestNoCommandFlagIsGlobal: global flags are taken from anywhere on the
// line, so no command may have a flag of the same name.
func TestNoCommandFlagIsGlobal(t *testing.T) {
	var g globalOptions
	app := newApp(&g, nil, nil)
	global := map[string]bool{}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			global[n] = true
		}
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if global[n] {
						t.Errorf("%s %s has a flag -%s, which is a global flag", path, c.Name, n)
					}
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("sluice", app.Commands)
}
