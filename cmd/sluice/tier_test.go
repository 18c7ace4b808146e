package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// TestStandaloneTiersToADirectory runs the standalone server with its
// default tier 2 (DIR/tier2) and its default lag bound of 30 s, creates a
// stream that overrides it with 400 ms, writes events, waits
// (bounded) until `stream describe` reports nothing waiting, and checks the
// chunks hold every event once, that reads still return them, and that
// `hive ddl` points at the directory.
func TestStandaloneTiersToADirectory(t *testing.T) {
	dir := t.TempDir()
	rs := startStandalone(t, dir, "--cache-size", "1")
	c := []string{"--controller", rs.URL}
	mustRun(t, append(c, "scope", "create", "sc")...)
	mustRun(t, append(c, "stream", "create", "sc/st", "--segments", "2", "--tier-max-lag", "400ms")...)
	if out := mustRun(t, append(c, "stream", "describe", "sc/st")...); !strings.Contains(out, "max lag 400ms") {
		t.Fatalf("describe does not show the stream's tiering policy:\n%s", out)
	}
	var want []string
	for i := range 300 {
		want = append(want, fmt.Sprintf("event-%03d", i))
	}
	withStdin(t, strings.Join(want, "\n")+"\n")
	if code, _, stderr := runArgs(t, append(c, "write", "sc/st")...); code != 0 {
		t.Fatalf("write: %s", stderr)
	}

	var d streamDescription
	proctest.WaitFor(t, "every byte in tier 2", 20*time.Second, func() (bool, string) {
		code, stdout, stderr := runArgs(t, append(c, "--output", "json", "stream", "describe", "sc/st")...)
		if code != 0 {
			t.Fatalf("describe: %s", stderr)
		}
		d = streamDescription{}
		if err := json.Unmarshal([]byte(stdout), &d); err != nil {
			t.Fatalf("describe output %q: %v", stdout, err)
		}
		return d.Tier != nil && d.Tier.UntieredBytes == 0 && d.Tier.TieredBytes > 0, fmt.Sprintf("%+v %s", d.Tier, d.TierError)
	})
	if len(d.Tier.Segments) != 2 || d.Tier.LagMillis != 0 {
		t.Fatalf("tier state %+v", d.Tier)
	}

	// Every event is in exactly one chunk, keys are offsets.
	var got []string
	files, _ := filepath.Glob(filepath.Join(dir, "tier2", "sc", "st", "segment=*", "*.seq"))
	if len(files) < 2 {
		t.Fatalf("chunks %v", files)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := seqfile.NewReader(fh)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for {
			_, ev, err := r.NextEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			got = append(got, string(ev))
		}
		fh.Close()
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tier 2 holds %d events, want the %d written once each", len(got), len(want))
	}

	// Reads come back whole with a cache that holds nothing.
	code, stdout, stderr := runArgs(t, append(c, "read", "sc/st", "--max", "300", "--timeout", "5s")...)
	if code != 0 {
		t.Fatalf("read: %s", stderr)
	}
	lines := strings.Fields(stdout)
	sort.Strings(lines)
	if strings.Join(lines, ",") != strings.Join(want, ",") {
		t.Fatalf("read back %d events", len(lines))
	}

	_, ddl, _ := runArgs(t, append(c, "hive", "ddl", "sc/st")...)
	if !strings.Contains(ddl, "LOCATION 'file://"+filepath.Join(dir, "tier2", "sc", "st")+"'") {
		t.Fatalf("hive ddl does not point at the tier-2 directory:\n%s", ddl)
	}
}
