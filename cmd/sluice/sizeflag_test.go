package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		back string
	}{
		{"0", 0, "0"}, {"1048576", 1 << 20, "1MiB"}, {"1000", 1000, "1000"}, {"256MiB", 256 << 20, "256MiB"},
		{"1MB", 1 << 20, "1MiB"}, {"10GiB", 10 << 30, "10GiB"}, {"3K", 3 << 10, "3KiB"}, {"2TiB", 2 << 40, "2TiB"},
	} {
		var n int64
		b := byteSize{&n}
		if err := b.Set(tc.in); err != nil || n != tc.want || b.String() != tc.back {
			t.Errorf("Set(%q) = %v: %d, %q; want %d, %q", tc.in, err, n, b.String(), tc.want, tc.back)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "10XB", "MiB", "9999999TiB"} {
		var n int64
		if err := (byteSize{&n}).Set(in); err == nil {
			t.Errorf("Set(%q) accepted: %d", in, n)
		}
	}
}

// sizeStrings are size flags kept as strings and parsed with parseBytes
// when used: --retention-size, where 0 is refused and no value means no
// size limit.
var sizeStrings = map[string]bool{"retention-size": true}

// TestEverySizeFlagTakesUnits: each command's flags that say BYTES are
// size flags, so each takes 1MiB as well as a plain number.
func TestEverySizeFlagTakesUnits(t *testing.T) {
	var g globalOptions
	app := newApp(&g, nil, nil)
	seen := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				if !ok || !strings.Contains(df.GetUsage(), "`BYTES`") && !strings.Contains(df.GetUsage(), "BYTES") {
					continue
				}
				seen++
				gf, ok := f.(*cli.GenericFlag)
				if !ok && sizeStrings[f.Names()[0]] {
					continue
				}
				if !ok {
					t.Errorf("%s %s --%s is %T, not a size flag", path, c.Name, f.Names()[0], f)
					continue
				}
				if err := gf.Value.Set("1MiB"); err != nil {
					t.Errorf("%s %s --%s 1MiB: %v", path, c.Name, f.Names()[0], err)
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("sluice", app.Commands)
	if seen < 10 {
		t.Fatalf("found %d size flags; the walk missed some", seen)
	}
}
