package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// TestStreamWatermarks: `sluice stream watermarks` lists what the
// standalone's controller computed from a writer's report, in a table
// and as JSON; --writer-timeout refuses a duration below 1ms.
func TestStreamWatermarks(t *testing.T) {
	mustFail(t, "writer-timeout", "standalone", "--writer-timeout", "0s")

	rs := startStandalone(t, t.TempDir(), "--writer-timeout", "10m")
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "s")...)
	mustRun(t, append(c, "stream", "create", "s/t", "--segments", "1")...)
	if out := mustRun(t, append(c, "-o", "json", "stream", "watermarks", "s/t")...); strings.TrimSpace(out) != "[]" {
		t.Fatalf("watermarks of a new stream: %q, want []", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := ctlclient.NewClient(rs.URL).NoteWriterTime(ctx, "s", "t", "w1",
		api.WriterTime{Time: 1700000000000, Position: api.StreamCut{"s/t/0.#epoch.0": 0}})
	if err != nil {
		t.Fatal(err)
	}
	var ws []api.Watermark
	deadline := time.Now().Add(30 * time.Second)
	for len(ws) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no watermark after a writer's report")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not synchronisation
		if err := json.Unmarshal([]byte(mustRun(t, append(c, "-o", "json", "stream", "watermarks", "s/t")...)), &ws); err != nil {
			t.Fatal(err)
		}
	}
	if ws[0].Seq != 1 || ws[0].LowerTime != 1700000000000 || ws[0].Cut["s/t/0.#epoch.0"] != 0 {
		t.Fatalf("watermarks: %+v", ws)
	}
	out := mustRun(t, append(c, "stream", "watermarks", "s/t")...)
	if !strings.Contains(out, "2023-11-14T22:13:20.000Z") || !strings.Contains(out, "s/t:0.#epoch.0=0") {
		t.Fatalf("table:\n%s", out)
	}
	if out := mustRun(t, append(c, "-o", "json", "stream", "watermarks", "s/t", "--after", "1")...); strings.TrimSpace(out) != "[]" {
		t.Fatalf("watermarks after 1: %q, want []", out)
	}
	mustFail(t, "not found", append(c, "stream", "watermarks", "s/nope")...)
}
