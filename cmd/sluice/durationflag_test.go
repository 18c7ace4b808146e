package main

import (
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"90s", 90 * time.Second}, {"1h30m", 90 * time.Minute}, {"250ms", 250 * time.Millisecond},
		{"7d", 7 * day}, {"1d12h", 36 * time.Hour}, {"2d30m", 2*day + 30*time.Minute}, {"168h", 7 * day},
		{"-1s", -time.Second}, {"-2d", -2 * day}, {"0d", 0}, {"1.5h", 90 * time.Minute},
		{"106751d", 106751 * day}, {".5s", 500 * time.Millisecond}, {"+5s", 5 * time.Second}, {"+1d", day},
		{"-.5s", -500 * time.Millisecond},
	} {
		got, err := parseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "d", "-", "7", "1.5d", "d7", "1d-1h", "+-1s", "-+1s", "++1s", "1d+1h", "--1s", "7days", "1w",
		"106752d", "99999999999999999999d", "106751d24h", "1h1d"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) accepted: %v", in, got)
		}
	}
}

func TestRetentionTimeTakesWholeDays(t *testing.T) {
	var d time.Duration
	v := durationValue{p: &d, check: wholeDays}
	for _, in := range []string{"7d", "168h", "1d24h"} {
		if err := v.Set(in); err != nil || d%day != 0 || d < day {
			t.Errorf("Set(%q) = %v: %v", in, err, d)
		}
	}
	for _, in := range []string{"90m", "1d1h", "0", "-1d", "12h"} {
		if err := v.Set(in); err == nil || !strings.Contains(err.Error(), "whole days") {
			t.Errorf("Set(%q) = %v, want a whole-days error", in, err)
		}
	}
}

// TestEveryDurationFlagTakesDays: every flag of a duration is a
// durationFlag, so each takes 7d and 1d12h as well as Go's forms.
func TestEveryDurationFlagTakesDays(t *testing.T) {
	var g globalOptions
	app := newApp(&g, nil, nil)
	seen := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				name := path + " " + c.Name + " --" + f.Names()[0]
				if _, ok := f.(*cli.DurationFlag); ok {
					t.Errorf("%s is a cli.DurationFlag (Go syntax only), not a durationFlag", name)
					continue
				}
				var dv durationValue
				if gf, ok := f.(*cli.GenericFlag); ok {
					dv, ok = gf.Value.(durationValue)
				}
				if dv.p == nil {
					if df, ok := f.(cli.DocGenerationFlag); ok && durationPlaceholder(df.GetUsage()) {
						t.Errorf("%s takes a duration (%q) but is %T, not a durationFlag", name, df.GetUsage(), f)
					}
					continue
				}
				seen++
				before := *dv.p
				if err := dv.Set("1d12h"); err != nil && dv.check == nil {
					t.Errorf("%s 1d12h: %v", name, err)
				}
				if err := dv.Set("7d"); err != nil || *dv.p != 7*day {
					t.Errorf("%s 7d: %v, %v", name, err, *dv.p)
				}
				*dv.p = before
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("sluice", app.Commands)
	// node, controller, standalone: zk-session-timeout, the server's four
	// timeouts, the tier flags; and read, write, bench, cluster, executor.
	if seen < 20 {
		t.Fatalf("found %d duration flags; the walk missed some", seen)
	}
}

// durationPlaceholder says whether a flag's usage names its value as a
// duration does (`D`, `TIME`, `TIMEOUT`).
func durationPlaceholder(usage string) bool {
	for _, p := range []string{"`D`", "`TIME`", "`TIMEOUT`"} {
		if strings.Contains(usage, p) {
			return true
		}
	}
	return false
}
