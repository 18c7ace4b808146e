package container

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

// memChunks is a tier 2 in memory: what a storage writer would have put
// in chunk files, and the loads the container asked for.
type memChunks struct {
	mu     sync.Mutex
	chunks map[string]map[int64][]byte
	loads  int
	parts  []ChunkPart // the parts loaded, in order
	fail   error
	// partBytes > 0: tier records marks, one at the first event boundary
	// after each partBytes of a chunk, as the storage writer does.
	partBytes int64
}

// memHeader stands for a chunk file's header in the positions of marks:
// a chunk's byte at offset o is at file position memHeader + o - first.
const memHeader = 100

func newMemChunks() *memChunks { return &memChunks{chunks: map[string]map[int64][]byte{}} }

func (m *memChunks) LoadChunk(segment string, offset int64, part ChunkPart, buf []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	m.parts = append(m.parts, part)
	if m.fail != nil {
		return nil, m.fail
	}
	b, ok := m.chunks[segment][offset]
	if !ok {
		return nil, fmt.Errorf("no chunk of %s at %d", segment, offset)
	}
	if part.Whole() {
		return bytes.Clone(b), nil
	}
	from, to := part.Offset-offset, part.Offset-offset+part.Length
	if from < 0 || to > int64(len(b)) || part.Pos != memHeader+from || part.End != memHeader+to {
		return nil, fmt.Errorf("part %+v is not in the chunk of %s at %d (%d bytes)", part, segment, offset, len(b))
	}
	if int64(len(buf)) != part.End-part.Pos {
		return nil, fmt.Errorf("part %+v: a buffer of %d bytes", part, len(buf))
	}
	return buf[:copy(buf, b[from:to])], nil
}

// tier moves up to maxBytes of a segment's untiered bytes into one chunk
// the way a storage writer does: copy the blocks, then commit.
func (m *memChunks) tier(t *testing.T, c *Container, name string, maxBytes int64) (offset, length int64) {
	t.Helper()
	offset, blocks, err := c.UntieredBlocks(name, maxBytes)
	if err != nil {
		t.Fatalf("UntieredBlocks(%s): %v", name, err)
	}
	data := bytes.Join(blocks, nil)
	if len(data) == 0 {
		return offset, 0
	}
	m.mu.Lock()
	if m.chunks[name] == nil {
		m.chunks[name] = map[int64][]byte{}
	}
	m.chunks[name][offset] = data
	partBytes := m.partBytes
	m.mu.Unlock()
	var marks []ChunkMark
	if partBytes > 0 {
		marks = append(marks, ChunkMark{Offset: offset, Pos: memHeader})
		last := int64(0)
		for rest, at := data, int64(0); len(rest) > 0; {
			if at-last >= partBytes {
				marks = append(marks, ChunkMark{Offset: offset + at, Pos: memHeader + at})
				last = at
			}
			_, r, err := protocol.NextEvent(rest)
			if err != nil {
				t.Fatal(err)
			}
			at += int64(len(rest) - len(r))
			rest = r
		}
		marks = append(marks, ChunkMark{Offset: offset + int64(len(data)), Pos: memHeader + int64(len(data))})
	}
	if err := c.CommitChunk(name, offset, int64(len(data)), marks); err != nil {
		t.Fatalf("CommitChunk(%s, %d, %d): %v", name, offset, len(data), err)
	}
	return offset, int64(len(data))
}

// readAll reads a segment from its start to its durable end.
func readBytes(t *testing.T, c *Container, name string) []byte {
	t.Helper()
	info, err := c.Info(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for off := info.StartOffset; off < info.Length; {
		r, err := c.Read(t.Context(), name, off, 1000)
		if err != nil {
			t.Fatalf("Read(%s, %d): %v", name, off, err)
		}
		for _, d := range r.Data {
			out = append(out, d...)
		}
		off += int64(r.Len())
	}
	return out
}

func TestTieredBytesReadBackFromChunks(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(1)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	if err := c.Create(name, nil); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 20 {
		b := block(fmt.Sprintf("event-%02d", i), "x")
		want = append(want, b...)
		appendEvents(t, c, name, "w", int64(i+1), fmt.Sprintf("event-%02d", i), "x")
	}
	off1, n1 := chunks.tier(t, c, name, 100)
	off2, n2 := chunks.tier(t, c, name, 100)
	if off1 != 0 || off2 != n1 || n1 == 0 || n2 == 0 {
		t.Fatalf("chunks at %d (+%d) and %d (+%d): want contiguous from 0", off1, n1, off2, n2)
	}
	ts, _ := c.TierState(name)
	if cs, _ := c.Chunks(name); ts.Tiered != n1+n2 || ts.Untiered != int64(len(want))-n1-n2 || ts.FirstChunk != 0 || !reflect.DeepEqual(cs, []int64{0, n1}) {
		t.Fatalf("tier state %+v, chunks %v", ts, cs)
	}
	if got := readBytes(t, c, name); !bytes.Equal(got, want) {
		t.Fatalf("read back %q\nwant %q", got, want)
	}
	if chunks.loads == 0 {
		t.Fatal("no read came from tier 2 although the cache holds nothing")
	}
	// A read from the middle of a chunk.
	r, err := c.Read(t.Context(), name, 5, 10)
	if err != nil || !bytes.Equal(bytes.Join(r.Data, nil), want[5:15]) {
		t.Fatalf("Read(5, 10) = %q, %v; want %q", bytes.Join(r.Data, nil), err, want[5:15])
	}
	// A tier 2 that fails makes the read fail, not return wrong bytes.
	chunks.fail = errors.New("tier 2 is down")
	if _, err := c.Read(t.Context(), name, 0, 10); err == nil {
		t.Fatal("read of a chunk with tier 2 down succeeded")
	}
}

// TestChunkPartsAreLoadedAlone: a chunk recorded with marks is loaded a
// part at a time, only the parts a read needs, and its marks survive a
// replay of the log and a checkpoint.
func TestChunkPartsAreLoadedAlone(t *testing.T) {
	dir := t.TempDir()
	chunks := newMemChunks()
	chunks.partBytes = 60
	c := open(t, Config{Dir: dir, Chunks: chunks, Cache: cache.New(1)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	if err := c.Create(name, nil); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 40 {
		e := fmt.Sprintf("event-%02d", i)
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	if _, n := chunks.tier(t, c, name, 300); n == 0 {
		t.Fatal("nothing tiered")
	}
	chunks.tier(t, c, name, 1000)
	check := func(c *Container, when string) {
		t.Helper()
		chunks.mu.Lock()
		chunks.parts = nil
		chunks.mu.Unlock()
		// A small read from the middle of the first chunk loads one part.
		r, err := c.Read(t.Context(), name, 70, 5)
		if err != nil || !bytes.Equal(bytes.Join(r.Data, nil), want[70:75]) {
			t.Fatalf("%s: Read(70, 5) = %q, %v; want %q", when, bytes.Join(r.Data, nil), err, want[70:75])
		}
		chunks.mu.Lock()
		parts := chunks.parts
		chunks.mu.Unlock()
		if len(parts) != 1 || parts[0].Whole() || parts[0].Offset > 70 || parts[0].Offset+parts[0].Length < 75 || parts[0].Length > 60+14 {
			t.Fatalf("%s: a 5-byte read loaded %+v, want the one part holding it", when, parts)
		}
		if got := readBytes(t, c, name); !bytes.Equal(got, want) {
			t.Fatalf("%s: read back %q\nwant %q", when, got, want)
		}
	}
	check(c, "live")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, Config{Dir: dir, Chunks: chunks, Cache: cache.New(1)})
	check(c, "after a replay")
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, Config{Dir: dir, Chunks: chunks, Cache: cache.New(1)})
	check(c, "after a checkpoint")
}

// TestChunkMarksAreChecked: marks that do not describe the chunk are
// refused by CommitChunk, and damaged ones by decodeMarks.
func TestChunkMarksAreChecked(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir(), Chunks: newMemChunks()})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	appendEvents(t, c, name, "w", 1, "abc", "defg")
	n := int64(len(block("abc", "defg")))
	for _, marks := range [][]ChunkMark{
		{{0, 50}},                            // one mark
		{{0, 50}, {n - 1, 90}},               // does not reach the end
		{{1, 50}, {n, 90}},                   // does not start at the chunk
		{{0, 0}, {n, 90}},                    // no header
		{{0, 50}, {7, 50}, {n, 90}},          // positions do not rise
		{{0, 50}, {7, 60}, {7, 70}, {n, 90}}, // offsets do not rise
		{{0, 50}, {n, 50 + 6*n + 65}},        // more file bytes than the events can take
	} {
		if err := c.CommitChunk(name, 0, n, marks); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("CommitChunk with marks %v = %v, want ErrInvalidArgument", marks, err)
		}
	}
	if ts, _ := c.TierState(name); ts.Tiered != 0 {
		t.Fatalf("a refused chunk was recorded: %+v", ts)
	}
	good := []ChunkMark{{0, 50}, {7, 61}, {n, 90}}
	b := encodeMarks(good, 0)
	if got, err := decodeMarks(b, 0, n); err != nil || !reflect.DeepEqual(got, good) {
		t.Fatalf("decodeMarks(encodeMarks) = %v, %v", got, err)
	}
	for cut := 1; cut < len(b); cut++ {
		if _, err := decodeMarks(b[:cut], 0, n); err == nil {
			t.Fatalf("marks cut to %d bytes decoded", cut)
		}
	}
	if err := c.CommitChunk(name, 0, n, good); err != nil {
		t.Fatal(err)
	}
}

func TestCommitChunkRefusesWhatDoesNotFit(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	r1 := appendEvents(t, c, name, "w", 1, "aaaa")
	appendEvents(t, c, name, "w", 2, "bbbb")
	for _, tc := range []struct {
		what           string
		offset, length int64
	}{
		{"not at the first untiered offset", 1, r1.Offset - 1},
		{"inside a block", 0, r1.Offset - 1},
		{"beyond the length", 0, 1000},
		{"empty", 0, 0},
	} {
		if err := c.CommitChunk(name, tc.offset, tc.length, nil); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("%s: CommitChunk(%d, %d) = %v, want ErrInvalidArgument", tc.what, tc.offset, tc.length, err)
		}
	}
	if ts, _ := c.TierState(name); ts.Tiered != 0 {
		t.Fatalf("a refused chunk moved the tiered offset to %d", ts.Tiered)
	}
	if err := c.CommitChunk(protocol.SegmentName("sc", "st", 9, 0), 0, 1, nil); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("unknown segment: %v", err)
	}
}

func TestLogIsTrimmedOnceBlocksAreTiered(t *testing.T) {
	chunks := newMemChunks()
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, Chunks: chunks, WALFileSize: 4096, CheckpointBytes: -1})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	var want []byte
	for i := range 200 {
		e := fmt.Sprintf("event-%03d-%s", i, bytes.Repeat([]byte("p"), 40))
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	before := c.LogStats().Files
	if before < 3 {
		t.Fatalf("only %d log files; the test needs several", before)
	}
	// Checkpoint before tiering: nothing may go, every block is only in the log.
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := c.LogStats().Files; got != before {
		t.Fatalf("log files went from %d to %d with nothing tiered", before, got)
	}
	for {
		if _, n := chunks.tier(t, c, name, 2000); n == 0 {
			break
		}
	}
	// Two checkpoints: the log keeps what the older kept checkpoint needs.
	c.Checkpoint()
	appendEvents(t, c, name, "w", 1000, "after")
	want = append(want, block("after")...)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := c.LogStats().Files; got >= before {
		t.Fatalf("log still has %d files (had %d) after everything was tiered", got, before)
	}
	c.Close()
	c2 := open(t, Config{Dir: dir, Chunks: chunks})
	if got := readBytes(t, c2, name); !bytes.Equal(got, want) {
		t.Fatal("after a restart on the trimmed log, the segment reads back different bytes")
	}
}

func TestTruncateDeleteAndForgetSurviveRestart(t *testing.T) {
	chunks := newMemChunks()
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, Chunks: chunks, CheckpointBytes: -1})
	a, b := protocol.SegmentName("sc", "st", 0, 0), protocol.SegmentName("sc", "st", 1, 0)
	tx := protocol.TransactionSegmentName(a, "00000000-0000-0000-0000-000000000001")
	for _, n := range []string{a, b, tx} {
		c.Create(n, nil)
	}
	for i := range 6 {
		appendEvents(t, c, a, "w", int64(i+1), fmt.Sprint("a", i))
		appendEvents(t, c, b, "w", int64(i+1), fmt.Sprint("b", i))
	}
	_, n1 := chunks.tier(t, c, a, 10)
	chunks.tier(t, c, a, 10)
	if _, err := c.Truncate(a, n1); err != nil {
		t.Fatal(err)
	}
	if cs, _ := c.Chunks(a); len(cs) != 1 || cs[0] != n1 {
		t.Fatalf("after truncating past the first chunk, chunks are %v, want [%d]", cs, n1)
	}
	if ts, _ := c.TierState(a); ts.FirstChunk != n1 {
		t.Fatalf("first chunk %d, want %d", ts.FirstChunk, n1)
	}
	c.Delete(b)
	c.Delete(tx)
	if got := c.Gone(); !reflect.DeepEqual(got, []string{b}) {
		t.Fatalf("Gone() = %v, want [%s] (transactions are never tiered)", got, b)
	}
	live := durableState(c)
	c.mu.Lock()
	c.mu.failed = fmt.Errorf("test: skip the closing checkpoint")
	c.mu.Unlock()
	c.Close()
	c2 := open(t, Config{Dir: dir, Chunks: chunks, CheckpointBytes: -1})
	if got := durableState(c2); !reflect.DeepEqual(got, live) {
		t.Fatalf("replayed state differs\n got %+v\nwant %+v", got, live)
	}
	if err := c2.Forget(b); err != nil {
		t.Fatal(err)
	}
	c2.Close() // with a checkpoint this time
	c3 := open(t, Config{Dir: dir, Chunks: chunks})
	if got := c3.Gone(); len(got) != 0 {
		t.Fatalf("Gone() after Forget and restart = %v", got)
	}
}

func TestAppendsStopAtTheUntieredBound(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, MaxUntieredBytes: 100})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	var err error
	i := 0
	for ; i < 100 && err == nil; i++ {
		_, err = c.Append(Append{Segment: name, Writer: "w", EventNumber: int64(i + 1), EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: block("0123456789")})
	}
	if !errors.Is(err, protocol.ErrContainerUnavailable) || i > 10 {
		t.Fatalf("after %d appends of 14 bytes with a bound of 100: %v, want ErrContainerUnavailable", i, err)
	}
	chunks.tier(t, c, name, 1000)
	if _, err := c.Append(Append{Segment: name, Writer: "w", EventNumber: 1000, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: block("again")}); err != nil {
		t.Fatalf("append after tiering caught up: %v", err)
	}
}

// TestTieringReplayAgreesWithLiveState runs random operations, tiering
// included, and checks that a checkpoint plus the log after it rebuilds
// the live state, that the untiered count matches the segments, and that
// every segment reads back what was appended.
func TestTieringReplayAgreesWithLiveState(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir := t.TempDir()
			chunks := newMemChunks()
			c := open(t, Config{Dir: dir, Chunks: chunks, WALFileSize: 4096, CheckpointBytes: 8192})
			names := make([]string, 4)
			for i := range names {
				names[i] = protocol.SegmentName("sc", "st", int64(i), 0)
				c.Create(names[i], nil)
			}
			for op := 0; op < 600; op++ {
				i := rng.Intn(len(names))
				switch rng.Intn(8) {
				case 0, 1, 2, 3:
					e := fmt.Sprint("e", op, bytes.Repeat([]byte("x"), rng.Intn(60)))
					c.Append(Append{Segment: names[i], EventCount: 1, ExpectedOffset: protocol.NoExpectedOffset, Data: block(e)})
				case 4, 5:
					chunks.partBytes = int64(rng.Intn(2) * 40) // chunks with marks and without
					chunks.tier(t, c, names[i], int64(rng.Intn(400)))
				case 6:
					if info, err := c.Info(names[i]); err == nil && rng.Intn(4) == 0 {
						c.Truncate(names[i], info.StartOffset+rng.Int63n(info.Length-info.StartOffset+1))
					}
				case 7:
					if rng.Intn(10) == 0 {
						c.Seal(names[i])
					}
				}
			}
			c.mu.Lock()
			var sum int64
			for _, s := range c.mu.st.byID {
				sum += s.length - s.tieredEnd()
			}
			if sum != c.mu.st.untiered {
				t.Errorf("untiered count %d, segments hold %d", c.mu.st.untiered, sum)
			}
			c.mu.Unlock()
			live := durableState(c)
			reads := map[string][]byte{}
			for _, n := range names {
				reads[n] = readBytes(t, c, n)
			}
			c.mu.Lock()
			c.mu.failed = fmt.Errorf("test: skip the closing checkpoint")
			c.mu.Unlock()
			c.Close()
			c2 := open(t, Config{Dir: dir, Chunks: chunks, Cache: cache.New(1)})
			if got := durableState(c2); !reflect.DeepEqual(got, live) {
				t.Fatalf("state from checkpoint + replay differs from the live state\n got %+v\nwant %+v", got, live)
			}
			for _, n := range names {
				if got := readBytes(t, c2, n); !bytes.Equal(got, reads[n]) {
					t.Fatalf("%s reads back differently after the restart", n)
				}
			}
		})
	}
}

// raceSource tiers the segment, checkpoints and trims the log the first
// time the container asks it for a block: what the storage writer could do
// between a read finding a block in the log and loading it.
type raceSource struct {
	inner BlockSource
	done  atomic.Bool
	do    func()
}

func (r *raceSource) LoadBlock(addr wal.Addr, dataOff int32, length int64) ([]byte, error) {
	if r.done.CompareAndSwap(false, true) {
		r.do() // tiering loads blocks through here too
	}
	return r.inner.LoadBlock(addr, dataOff, length)
}

// TestReadFindsABlockTieredUnderIt: a read whose block went to tier 2 (and
// whose log file was removed) while it was being read reads it from the
// chunk instead of failing.
func TestReadFindsABlockTieredUnderIt(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, WALFileSize: 4096, CheckpointBytes: -1, Cache: cache.New(1)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	var want []byte
	for i := range 100 {
		e := fmt.Sprintf("event-%03d-%s", i, bytes.Repeat([]byte("p"), 40))
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	c.source = &raceSource{inner: c.source, do: func() {
		for {
			if _, n := chunks.tier(t, c, name, 1000); n == 0 {
				break
			}
		}
		appendEvents(t, c, name, "w", 1000, "x")
		c.Checkpoint()
		appendEvents(t, c, name, "w", 1001, "y")
		if err := c.Checkpoint(); err != nil {
			t.Error(err)
		}
	}}
	r, err := c.Read(t.Context(), name, 0, len(want))
	if err != nil {
		t.Fatalf("read across a tiering and a trim: %v", err)
	}
	if got := bytes.Join(r.Data, nil); !bytes.Equal(got, want) {
		t.Fatal("read back different bytes")
	}
}

// TestReadAheadLoadsTheNextChunks: reading a chunk (without marks: one
// part) loads the next one in the background when the cache can hold
// four; the next read finds it cached.
func TestReadAheadLoadsTheNextChunks(t *testing.T) {
	chunks := newMemChunks()
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(64 << 10)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	for i := range 80 {
		appendEvents(t, c, name, "w", int64(i+1), fmt.Sprintf("event-%02d", i))
	}
	var bounds []int64
	for {
		off, n := chunks.tier(t, c, name, 200)
		if n == 0 {
			break
		}
		bounds = append(bounds, off+n)
	}
	if len(bounds) < 3 {
		t.Fatalf("%d chunks; the test needs 3", len(bounds))
	}
	c.cache = cache.New(64 << 10) // evict what tiering cached: only loads count from here
	if _, err := c.Read(t.Context(), name, 0, int(bounds[0])); err != nil {
		t.Fatal(err)
	}
	settleReadAhead(c)
	if got := chunks.loadCount(); got != 2 {
		t.Fatalf("%d chunk loads after reading the first chunk, want 2 (it and the next, read ahead)", got)
	}
	if _, err := c.Read(t.Context(), name, bounds[0], int(bounds[1]-bounds[0])); err != nil {
		t.Fatal(err)
	}
	settleReadAhead(c)
	if got := chunks.loadCount(); got != 3 {
		t.Fatalf("%d chunk loads after reading the second, want 3 (it came from the cache; the third read ahead)", got)
	}
}

// settleReadAhead waits until no read-ahead is in flight.
func settleReadAhead(c *Container) {
	for range readAheadSlots {
		c.readAhead <- struct{}{}
	}
	for range readAheadSlots {
		<-c.readAhead
	}
}

func (m *memChunks) loadCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads
}

// TestReadAheadCrossesIntoTheNextChunk: with marks, a read loads its part
// and, once that is loaded, the next part of the chunk (readahead.go); a
// read that reaches a chunk's last part loads the next chunk's first part
// instead. Every part after the first is so read ahead.
func TestReadAheadCrossesIntoTheNextChunk(t *testing.T) {
	chunks := newMemChunks()
	chunks.partBytes = 50
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(64 << 10)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	for i := range 80 {
		appendEvents(t, c, name, "w", int64(i+1), fmt.Sprintf("event-%02d", i))
	}
	for {
		if _, n := chunks.tier(t, c, name, 180); n == 0 {
			break
		}
	}
	c.cache = cache.New(64 << 10)
	c.mu.Lock()
	s := c.mu.st.byName[name]
	all, _, _ := s.partsFrom(0, s.length)
	chunkList := append([]chunk(nil), s.chunks...)
	c.mu.Unlock()
	if len(chunkList) < 3 || chunkList[0].numParts() < 3 {
		t.Fatalf("%d chunks of %d parts; the test needs 3 of 3 or more", len(chunkList), chunkList[0].numParts())
	}
	crossed := 0
	for i, p := range all {
		chunks.mu.Lock()
		chunks.parts = nil
		chunks.mu.Unlock()
		if r, err := c.Read(t.Context(), name, p.Offset, 1); err != nil || r.Len() != 1 {
			t.Fatalf("Read(%d): %d bytes, %v", p.Offset, r.Len(), err)
		}
		settleReadAhead(c)
		chunks.mu.Lock()
		loaded := chunks.parts
		chunks.mu.Unlock()
		var want []ChunkPart
		if i == 0 { // not read ahead: loaded by the read
			want = append(want, p.ChunkPart)
		}
		if i+1 < len(all) {
			want = append(want, all[i+1].ChunkPart)
			if all[i+1].chunk != p.chunk {
				crossed++
			}
		}
		sort.Slice(loaded, func(a, b int) bool { return loaded[a].Offset < loaded[b].Offset })
		if !reflect.DeepEqual(loaded, want) && !(len(loaded) == 0 && len(want) == 0) {
			t.Fatalf("read of part %d (%+v): loaded %+v, want %+v", i, p.ChunkPart, loaded, want)
		}
	}
	if crossed < 2 {
		t.Fatalf("crossed %d chunk boundaries; the test needs 2", crossed)
	}
}

// TestHeldPartsKeepTheirBytes: a read result's chunk parts stay as they
// were while it is held, however many parts are loaded, evicted and their
// memory reused meanwhile; once results are released, loads reuse pooled
// memory instead of allocating.
func TestHeldPartsKeepTheirBytes(t *testing.T) {
	chunks := newMemChunks()
	chunks.partBytes = 100
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(300)}) // about two parts
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	var want []byte
	for i := range 200 {
		e := fmt.Sprintf("event-%03d", i)
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	chunks.tier(t, c, name, 1<<20)
	c.cache = cache.New(300)
	held, err := c.Read(t.Context(), name, 0, 50)
	if err != nil || held.held == nil {
		t.Fatalf("first read: %v, holds %v", err, held.held)
	}
	made := c.parts.made.Load()
	for off := int64(50); off < int64(len(want)); {
		r, err := c.Read(t.Context(), name, off, 120)
		if err != nil || !bytes.Equal(bytes.Join(r.Data, nil), want[off:off+int64(r.Len())]) {
			t.Fatalf("Read(%d): %v or other bytes", off, err)
		}
		off += int64(r.Len())
		r.Release()
		r.Release() // twice is harmless
	}
	if got := bytes.Join(held.Data, nil); !bytes.Equal(got, want[:50]) {
		t.Fatalf("a held result changed under its reader: %q, want %q", got, want[:50])
	}
	loads := len(chunks.parts)
	if n := c.parts.made.Load() - made; n > DefaultPartPoolBuffers+2 || loads < 10 {
		t.Fatalf("%d buffers made for %d part loads; released results should let loads reuse them", n, loads)
	}
	held.Release()
}

// TestConcurrentReadersOfParts: readers at random offsets of a tiered
// segment, with a cache of a few parts (so parts are loaded, shared,
// evicted and their buffers reused all the time) and the read-ahead on,
// each check their bytes before releasing them.
func TestConcurrentReadersOfParts(t *testing.T) {
	chunks := newMemChunks()
	chunks.partBytes = 300
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(5 * (320 + 96))})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	var want []byte
	for i := range 600 {
		e := fmt.Sprintf("event-%04d-%s", i, strings.Repeat("x", i%40))
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	for {
		if _, n := chunks.tier(t, c, name, 1500); n == 0 {
			break
		}
	}
	c.cache = cache.New(5 * (320 + 96))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for range 300 {
				off := rng.Int63n(int64(len(want)))
				r, err := c.Read(t.Context(), name, off, 1+rng.Intn(900))
				if err != nil {
					errs <- err
					return
				}
				got := bytes.Join(r.Data, nil)
				if !bytes.Equal(got, want[off:off+int64(len(got))]) || len(got) == 0 {
					errs <- fmt.Errorf("reader %d: %d bytes at %d differ from what was written", g, len(got), off)
					return
				}
				if rng.Intn(10) > 0 { // some results are never released
					r.Release()
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.parts.made.Load() >= int64(chunks.loadCount()) {
		t.Fatalf("%d buffers made for %d loads: none was reused", c.parts.made.Load(), chunks.loadCount())
	}
}

// TestUntieredAgeSurvivesARestart: the age of untiered data, which the
// tier-2 lag bound counts from, is not reset by a restart: a block from
// the checkpoint keeps its time, a block replayed from the log counts as
// old as the checkpoint (earlier than it was logged, never later).
func TestUntieredAgeSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	chunks := newMemChunks()
	c := open(t, Config{Dir: dir, Chunks: chunks, CheckpointBytes: -1})
	name := protocol.SegmentName("sc", "st", 0, 0)
	c.Create(name, nil)
	appendEvents(t, c, name, "w", 1, "first")
	ts, _ := c.TierState(name)
	first := ts.Oldest
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	beforeSecond := time.Now()
	appendEvents(t, c, name, "w", 2, "second")
	crashed := t.TempDir() // a kill: the files as they are, no closing checkpoint
	copyDir(t, dir, crashed)

	c = open(t, Config{Dir: crashed, Chunks: chunks, CheckpointBytes: -1})
	if ts, _ := c.TierState(name); !ts.Oldest.Equal(first) {
		t.Fatalf("after a restart the oldest untiered block is from %v, want %v (when it was logged)", ts.Oldest, first)
	}
	chunks.tier(t, c, name, int64(len(block("first")))) // the first block goes
	ts, _ = c.TierState(name)
	if ts.Oldest.Before(first) || ts.Oldest.After(beforeSecond) {
		t.Fatalf("the replayed block counts from %v; want between %v and %v", ts.Oldest, first, beforeSecond)
	}
}
