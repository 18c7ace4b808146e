package resume

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

const (
	scope, stream = "rs", "events"
	writerID      = "sensor-feed"
	events        = 6000
	keys          = 12
	confirmEvery  = 200 // the writer flushes and records its progress this often
)

func TestMain(m *testing.M) {
	if os.Getenv("SLUICE_RESUME_WRITER") != "" {
		os.Exit(writerMain())
	}
	proctest.Main(m, "resume", &sluiceBin)
}

// writerMain is the writer process: it writes the events of its input log
// (SLUICE_RESUME_LOG, one "key:n" per line, line i being sequence number
// i) from its last confirmed point (SLUICE_RESUME_STATE), or from the
// start with SLUICE_RESUME_FROM_START, printing "progress SEQ" as it goes
// and "done DUPS" at the end.
func writerMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "writer:", err); return 1 }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	input, err := readLog(os.Getenv("SLUICE_RESUME_LOG"))
	if err != nil {
		return fail(err)
	}
	statePath := os.Getenv("SLUICE_RESUME_STATE")
	from := 0
	if b, err := os.ReadFile(statePath); err == nil {
		if from, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
			return fail(fmt.Errorf("state file: %w", err))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if os.Getenv("SLUICE_RESUME_FROM_START") != "" {
		from = 0
	}
	c, err := client.New(ctx, os.Getenv("SLUICE_RESUME_CONTROLLER"))
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	// A small window keeps WriteSeq waiting on acknowledgements, so kills
	// land among events in flight.
	w, err := c.NewWriter(ctx, scope, stream, client.WithWriterID(writerID), client.WithSequenced(),
		client.WithMaxInflight(8<<10), client.WithMaxBatch(2<<10))
	if err != nil {
		return fail(err)
	}
	fmt.Printf("resumed from %d stored %d\n", from, w.Stored())
	dups := 0
	for seq := from; seq < len(input); seq++ {
		key, _, _ := strings.Cut(input[seq], ":")
		ack, err := w.WriteSeq(ctx, key, int64(seq), []byte(input[seq]))
		if err != nil {
			return fail(err)
		}
		if ack.Duplicate() {
			dups++
		}
		if seq%20 == 0 {
			fmt.Printf("progress %d\n", seq)
		}
		if (seq+1)%confirmEvery == 0 {
			if err := w.Flush(ctx); err != nil {
				return fail(err)
			}
			if err := saveState(statePath, seq+1); err != nil {
				return fail(err)
			}
		}
	}
	if err := w.Close(ctx); err != nil {
		return fail(err)
	}
	if err := saveState(statePath, len(input)); err != nil {
		return fail(err)
	}
	fmt.Printf("done %d\n", dups)
	return 0
}

func readLog(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// saveState records the confirmed point whole or not at all.
func saveState(path string, n int) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TestResumeCrash: the writer process is killed -9 at random
// points (a split and a merge of the stream happen while it writes) and
// started again each time; the last run completes. Every input event is
// then in the stream exactly once, in per-key order.
func TestResumeCrash(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("SLUICE_RESUME_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("SLUICE_RESUME_SEED: %v", err)
		}
	}
	kills := 4
	if os.Getenv("SLUICE_SOAK") != "" {
		kills = 40
	}
	if s := os.Getenv("SLUICE_RESUME_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil || kills < 0 {
			t.Fatalf("SLUICE_RESUME_KILLS %q: want a count", s)
		}
	}
	t.Logf("seed %d (SLUICE_RESUME_SEED replays it), %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(60+20*kills)*time.Second)
	defer cancel()

	dir := t.TempDir()
	sa := proctest.Start(t, sluiceBin, "standalone", nil, "--log-level", "warn", "standalone",
		"--data", filepath.Join(dir, "data"), "--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
		"--no-hdfs-head", "--no-nfs-head", "--no-s3-head")
	nodeAddr := sa.Line(t, "node listening on ", 30*time.Second)
	ctlURL := "http://" + sa.Line(t, "controller listening on ", 30*time.Second)
	ctl := ctlclient.NewClient(ctlURL)
	if err := ctl.CreateScope(ctx, scope); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: 2}}); err != nil {
		t.Fatal(err)
	}

	// The input log: events round robin over the keys, "key:n".
	logPath, statePath := filepath.Join(dir, "input.log"), filepath.Join(dir, "writer.state")
	var input strings.Builder
	count := map[string]int{}
	for i := range events {
		k := fmt.Sprintf("key-%d", i%keys)
		fmt.Fprintf(&input, "%s:%d\n", k, count[k])
		count[k]++
	}
	if err := os.WriteFile(logPath, []byte(input.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(round int, fromStart bool) *proctest.Proc {
		env := []string{"SLUICE_RESUME_WRITER=1", "SLUICE_RESUME_CONTROLLER=" + ctlURL,
			"SLUICE_RESUME_LOG=" + logPath, "SLUICE_RESUME_STATE=" + statePath}
		if fromStart {
			env = append(env, "SLUICE_RESUME_FROM_START=1")
		}
		return proctest.Start(t, os.Args[0], fmt.Sprintf("writer (run %d)", round), env)
	}
	progress := func(p *proctest.Proc) int {
		logs := p.Logs()
		i := strings.LastIndex(logs, "progress ")
		if i < 0 {
			return -1
		}
		line, _, _ := strings.Cut(logs[i+len("progress "):], "\n")
		n, _ := strconv.Atoi(line)
		return n
	}
	var split []api.SegmentRange
	for round := 1; round <= kills; round++ {
		fromStart := rng.IntN(3) == 0
		p := run(round, fromStart)
		resumed := p.Line(t, "resumed from ", 30*time.Second)
		var from, stored int
		fmt.Sscanf(resumed, "%d stored %d", &from, &stored)
		target := from + 1 + rng.IntN(max(1, events-from)/2+1)
		t.Logf("run %d: from %d (from start: %v), stored %d; kill after %d", round, from, fromStart, stored, target)
		// Scale while the writer writes: a split in the first run, a merge
		// of one half with the other segment in the third.
		switch {
		case round == 1:
			waitProgress(t, p, progress, from+1)
			var err error
			if split, err = ctl.Scale(ctx, scope, stream, api.ScaleRequest{SealedSegments: []int64{0},
				NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}}); err != nil {
				t.Fatal(err)
			}
		case round == 3 && split != nil:
			waitProgress(t, p, progress, from+1)
			if _, err := ctl.Scale(ctx, scope, stream, api.ScaleRequest{SealedSegments: []int64{split[1].Number, 1},
				NewRanges: []api.KeyRange{{Low: 0.25, High: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
		waitProgress(t, p, progress, target)
		p.Kill()
	}
	p := run(kills+1, false)
	p.Line(t, "done ", 90*time.Second)
	checkStream(t, ctx, ctl, nodeAddr, count)
}

// waitProgress waits until the writer printed progress at or beyond n, or
// finished.
func waitProgress(t *testing.T, p *proctest.Proc, progress func(*proctest.Proc) int, n int) {
	t.Helper()
	proctest.WaitFor(t, fmt.Sprintf("%s to reach %d", p.Name, n), 60*time.Second, func() (bool, string) {
		select {
		case <-p.Done():
			if p.Err() != nil {
				t.Fatalf("%s failed: %v", p.Name, p.Err())
			}
			return true, ""
		default:
		}
		got := progress(p)
		return got >= n || got >= events-20, fmt.Sprintf("at %d", got)
	})
}

// checkStream reads every segment of the stream's history, predecessors
// first, and requires per key the events 0..want-1, each once, in order.
func checkStream(t *testing.T, ctx context.Context, ctl *ctlclient.Client, nodeAddr string, want map[string]int) {
	t.Helper()
	epochs, err := ctl.Epochs(ctx, scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := segclient.Dial(ctx, nodeAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	seen := map[string]bool{}
	next := map[string]int{}
	for _, e := range epochs {
		for _, s := range e.Segments {
			if seen[s.Segment] {
				continue
			}
			seen[s.Segment] = true
			for _, ev := range clienttest.ReadEvents(t, ctx, conn, s.Segment) {
				key, nText, ok := strings.Cut(string(ev), ":")
				n, err := strconv.Atoi(nText)
				if !ok || err != nil {
					t.Fatalf("segment %s: bad event %q", s.Segment, ev)
				}
				if n != next[key] {
					t.Fatalf("segment %s: key %s: event %d where %d was due (lost, duplicated or reordered)", s.Segment, key, n, next[key])
				}
				next[key]++
			}
		}
	}
	for key, n := range want {
		if next[key] != n {
			t.Errorf("key %s: %d events in the stream, %d in the input", key, next[key], n)
		}
	}
	if len(seen) < 2 {
		t.Errorf("the stream has %d segments: the scales did not happen", len(seen))
	}
}
