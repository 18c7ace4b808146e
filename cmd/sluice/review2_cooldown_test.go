package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
)

// TestReview2AutoScaleCooldownZero: `--autoscale-cooldown 0s` is
// accepted, and asks for no cooldown; a hot BY_RATE stream then splits at
// the next steps. The flag's 0 reaches controller.AutoScaleOptions, whose
// zero Cooldown means the default (10 min): the standalone, whose own
// default is 10 s, silently waits 10 minutes instead.
func TestReview2AutoScaleCooldownZero(t *testing.T) {
	rs := startStandalone(t, t.TempDir(), "--autoscale-cooldown", "0s", "--autoscale-interval", "100ms",
		"--rate-windows", "1s,2s,3s,4s")
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/x", "--scale-by", "events", "--target", "1")...)
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprint(i))
	}
	withStdin(t, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "s/x")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}
	ctl := ctlclient.NewClient(rs.URL)
	deadline := time.Now().Add(5 * time.Second)
	for {
		segs, err := ctl.CurrentSegments(context.Background(), "s", "x")
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) > 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("300 events (about 300 events/s over 1 s, target 1) did not split the stream within 5 s with --autoscale-cooldown 0s")
		}
		time.Sleep(50 * time.Millisecond) // polling the controller, not synchronisation
	}
}
