package crash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// TestCrashKill9WhileTiering is the crash test with tier 2 under the node
// and tiering as eager as it goes: a segment is tiered once 8 KiB of it
// wait or its oldest byte is 100 ms old, in chunks of at most 16 KiB, so
// kills land in chunk writes, renames, chunk records, checkpoints and log
// trimming. After every restart it verifies the segments as the test
// without tier 2 does, then tier 2 itself (checkTier2).
func TestCrashKill9WhileTiering(t *testing.T) {
	tmp := t.TempDir()
	tc := &tierCheck{root: filepath.Join(tmp, "tier2"), dataDir: filepath.Join(tmp, "data"), scope: "tiered"}
	runCrash(t, crashRun{
		scope:   tc.scope,
		cycles:  soakCycles(10, 300),
		dataDir: tc.dataDir,
		nodeArgs: []string{"--tier2", tc.root, "--tier-max-lag", "200ms",
			"--tier-segment-bytes", "8192", "--tier-chunk-bytes", "16384"},
		check:  tc.check,
		killed: tc.killed,
	})
	t.Logf("tier 2: %d chunk files checked over all restarts; %d kills left a temporary chunk behind; log files: %d at most, %d after the last restart; first file removed: %v",
		tc.chunks, tc.tmpAtKill, tc.maxWALFiles, tc.lastWALFiles, tc.trimmed)
	if tc.chunks == 0 {
		t.Fatal("no chunk was ever in tier 2: tiering never happened")
	}
	if !tc.trimmed {
		t.Fatal("no container ever dropped its first log file: the log was never trimmed after tiering")
	}
}

// tierCheck checks tier 2 and the log after each restart, and keeps what
// it saw across restarts.
type tierCheck struct {
	root, dataDir, scope string

	chunks       int  // chunk files checked, over all restarts
	tmpAtKill    int  // kills that left a temporary chunk behind
	trimmed      bool // some container's first log file was gone at a check
	maxWALFiles  int  // most log files seen at a check, all containers together
	lastWALFiles int
}

// check waits (bounded poll over the wire) until the node has tiered
// every byte of every segment, which takes a pass and so the reconcile of
// tier 2 with the container's records; then it checks every segment's
// directory in tier 2 against the segment as the node serves it, and
// looks at the log files.
func (tc *tierCheck) check(t *testing.T, cycle int, p *nodeProc, segments []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	conn, err := segclient.Dial(ctx, p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	infos := map[string]*protocol.SegmentInfo{}
	proctest.WaitFor(t, fmt.Sprintf("cycle %d: every segment in tier 2", cycle), time.Minute, func() (bool, string) {
		var state []string
		done := true
		for _, seg := range segments {
			info, err := conn.GetSegmentInfo(ctx, seg)
			if err != nil {
				t.Fatalf("cycle %d: segment info %s: %v", cycle, seg, err)
			}
			infos[seg] = info
			state = append(state, fmt.Sprintf("%s: length %d, tiered to %d, %d untiered, error %q",
				seg, info.Length, info.TieredOffset, info.UntieredBytes, info.Tier2Error))
			if info.UntieredBytes != 0 || info.TieredOffset != info.Length {
				done = false
			}
		}
		return done, strings.Join(state, "; ")
	})
	stats, err := conn.GetTierStats(ctx)
	if err != nil {
		t.Fatalf("cycle %d: tier stats: %v", cycle, err)
	}
	if len(stats.Containers) == 0 {
		t.Fatalf("cycle %d: the node reports no container with tier 2", cycle)
	}
	for _, c := range stats.Containers {
		if c.Errors != 0 || c.Stalled || c.LastError != "" || c.Untiered != 0 {
			t.Fatalf("cycle %d: container %d: tiering reports %d errors (stalled %v, last %q), %d bytes untiered",
				cycle, c.Container, c.Errors, c.Stalled, c.LastError, c.Untiered)
		}
	}

	for _, seg := range segments {
		info := infos[seg]
		q, err := protocol.ParseSegmentName(seg)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tc.root, filepath.FromSlash(tier2.SegmentDir(q.Scope, q.Stream, q.Number)))
		tc.checkSegment(t, cycle, seg, dir, info, readSegment(ctx, t, conn, seg))
	}
	tc.checkLog(t, cycle)
}

// killed notes whether the kill caught a chunk being written: a
// temporary is there, for the restart's reconcile to remove.
func (tc *tierCheck) killed(t *testing.T, cycle int) {
	t.Helper()
	tmps, err := filepath.Glob(filepath.Join(tc.root, tc.scope, "s", "segment=*", "_tmp.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tmps) > 0 {
		tc.tmpAtKill++
	}
}

// span is the byte range [first, end) of a segment that one chunk holds.
type span struct{ first, end int64 }

// checkSegment checks one segment's chunks: only complete chunks (no
// temporary survives the reconcile), each a SequenceFile whose keys are
// consecutive event offsets from its name's offset and whose events are
// the segment's bytes there; together they cover [StartOffset,
// TieredOffset) exactly once, with neither gap nor overlap.
func (tc *tierCheck) checkSegment(t *testing.T, cycle int, seg, dir string, info *protocol.SegmentInfo, data []byte) {
	t.Helper()
	if int64(len(data)) != info.Length {
		t.Fatalf("cycle %d: %s: read %d bytes, the node reports length %d", cycle, seg, len(data), info.Length)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		if info.TieredOffset > info.StartOffset {
			t.Fatalf("cycle %d: %s: tiered to %d, but tier 2 has no directory %s", cycle, seg, info.TieredOffset, dir)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var spans []span
	for _, e := range entries {
		if tier2.IsTemp(e.Name()) {
			t.Fatalf("cycle %d: %s: temporary %s survived the restart's reconcile", cycle, seg, e.Name())
		}
		first, ok := tier2.ParseChunkName(e.Name())
		if !ok {
			t.Fatalf("cycle %d: %s: unexpected file %s in tier 2", cycle, seg, e.Name())
		}
		end := checkChunk(t, cycle, filepath.Join(dir, e.Name()), first, data)
		spans = append(spans, span{first, end})
		tc.chunks++
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.first - b.first) })
	at := info.StartOffset
	for _, s := range spans {
		if s.first < at {
			t.Fatalf("cycle %d: %s: chunk at %d overlaps the previous one, which ends at %d", cycle, seg, s.first, at)
		}
		if s.first > at {
			t.Fatalf("cycle %d: %s: tier 2 lacks [%d, %d): the next chunk starts at %d", cycle, seg, at, s.first, s.first)
		}
		at = s.end
	}
	if at != info.TieredOffset {
		t.Fatalf("cycle %d: %s: chunks cover up to %d, the node reports tiered to %d", cycle, seg, at, info.TieredOffset)
	}
}

// checkChunk decodes one chunk file, checks it against the segment's
// bytes and returns the offset just past its last event.
func checkChunk(t *testing.T, cycle int, path string, first int64, data []byte) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := seqfile.NewReader(f)
	if err != nil {
		t.Fatalf("cycle %d: chunk %s: %v", cycle, path, err)
	}
	next := first
	events := 0
	for {
		off, ev, err := r.NextEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("cycle %d: chunk %s, event %d: %v", cycle, path, events, err)
		}
		if off != next {
			t.Fatalf("cycle %d: chunk %s: event %d has key %d, expected %d (keys must be consecutive event offsets)", cycle, path, events, off, next)
		}
		end := off + protocol.EventHeaderSize + int64(len(ev))
		if end > int64(len(data)) {
			t.Fatalf("cycle %d: chunk %s: event at %d ends at %d, past the segment's %d bytes", cycle, path, off, end, len(data))
		}
		if want := protocol.AppendEvent(nil, ev); !bytes.Equal(data[off:end], want) {
			t.Fatalf("cycle %d: chunk %s: event at %d differs from the segment's bytes there", cycle, path, off)
		}
		next = end
		events++
	}
	if events == 0 {
		t.Fatalf("cycle %d: chunk %s holds no event", cycle, path)
	}
	return next
}

// checkLog counts the containers' log files and notes whether some
// container's first file is gone, which only trimming after tiering does.
func (tc *tierCheck) checkLog(t *testing.T, cycle int) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tc.dataDir, "container-*", "wal"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("cycle %d: no log directory under %s (%v)", cycle, tc.dataDir, err)
	}
	files := 0
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		first := uint64(0)
		for _, e := range entries {
			hex, ok := strings.CutSuffix(e.Name(), ".wal")
			if !ok {
				continue
			}
			seq, err := strconv.ParseUint(hex, 16, 64)
			if err != nil || len(hex) != 16 {
				continue
			}
			files++
			if first == 0 || seq < first {
				first = seq
			}
		}
		if first > 1 {
			tc.trimmed = true
		}
	}
	tc.lastWALFiles = files
	tc.maxWALFiles = max(tc.maxWALFiles, files)
}
