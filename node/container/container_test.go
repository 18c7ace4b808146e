package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/node/wal"
	"github.com/sluice-streams/sluice/protocol"
)

var seg = protocol.SegmentName("sc", "st", 0, 0)

func open(t *testing.T, cfg Config) *Container {
	t.Helper()
	c, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func block(events ...string) []byte {
	var b []byte
	for _, e := range events {
		b = protocol.AppendEvent(b, []byte(e))
	}
	return b
}

func appendEvents(t *testing.T, c *Container, name, writer string, eventNumber int64, events ...string) AppendResult {
	t.Helper()
	r, err := c.Append(Append{Segment: name, Writer: writer, EventNumber: eventNumber, EventCount: int32(len(events)),
		ExpectedOffset: protocol.NoExpectedOffset, Data: block(events...)})
	if err != nil {
		t.Fatalf("Append %v: %v", events, err)
	}
	return r
}

// readAll reads a segment from offset to its durable end, as events.
func readAll(t *testing.T, c *Container, name string, offset int64) []string {
	t.Helper()
	var data []byte
	for {
		r, err := c.Read(context.Background(), name, offset, 1000)
		if err != nil {
			t.Fatalf("Read %s@%d: %v", name, offset, err)
		}
		for _, d := range r.Data {
			data = append(data, d...)
		}
		offset += int64(r.Len())
		if r.AtTail || r.EndOfSegment {
			break
		}
	}
	var events []string
	for len(data) > 0 {
		e, rest, err := protocol.NextEvent(data)
		if err != nil {
			t.Fatalf("parse events: %v", err)
		}
		events = append(events, string(e))
		data = rest
	}
	return events
}

func expectErr(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v, want %v", err, sentinel)
	}
}

func TestSegmentLifecycle(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	expectErr(t, c.Create("bad name", nil), protocol.ErrInvalidArgument)
	if err := c.Create(seg, nil); err != nil {
		t.Fatal(err)
	}
	expectErr(t, c.Create(seg, nil), protocol.ErrSegmentExists)
	r := appendEvents(t, c, seg, "w1", 1, "a", "bb")
	if r.Offset != int64(len(block("a", "bb"))) || r.Duplicate {
		t.Fatalf("append result %+v", r)
	}
	appendEvents(t, c, seg, "w2", 10, "ccc")
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "a,bb,ccc" {
		t.Fatalf("read %v", got)
	}
	info, err := c.Info(seg)
	if err != nil || info.Length != 18 || info.Sealed || info.StartOffset != 0 {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	length, err := c.Seal(seg)
	if err != nil || length != 18 {
		t.Fatalf("Seal = %d, %v", length, err)
	}
	if again, err := c.Seal(seg); err != nil || again != 18 {
		t.Fatalf("second Seal = %d, %v", again, err)
	}
	_, err = c.Append(Append{Segment: seg, Writer: "w1", EventNumber: 2, EventCount: 1, ExpectedOffset: -1, Data: block("x")})
	expectErr(t, err, protocol.ErrSegmentSealed)
	rr, err := c.Read(context.Background(), seg, 18, 100)
	if err != nil || !rr.EndOfSegment || rr.Len() != 0 {
		t.Fatalf("read at end of sealed segment = %+v, %v", rr, err)
	}
	rr, err = c.Read(context.Background(), seg, 11, 100)
	if err != nil || !rr.EndOfSegment || rr.Len() != 7 {
		t.Fatalf("read to end of sealed segment = %+v, %v", rr, err)
	}
	if start, err := c.Truncate(seg, 11); err != nil || start != 11 {
		t.Fatalf("Truncate = %d, %v", start, err)
	}
	_, err = c.Read(context.Background(), seg, 0, 100)
	expectErr(t, err, protocol.ErrSegmentTruncated)
	if got := readAll(t, c, seg, 11); strings.Join(got, ",") != "ccc" {
		t.Fatalf("read after truncate %v", got)
	}
	_, err = c.Truncate(seg, 19)
	expectErr(t, err, protocol.ErrInvalidArgument)
	if err := c.Delete(seg); err != nil {
		t.Fatal(err)
	}
	_, err = c.Info(seg)
	expectErr(t, err, protocol.ErrNoSuchSegment)
	expectErr(t, c.Delete(seg), protocol.ErrNoSuchSegment)
}

func TestBadBlocks(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	c.Create(seg, nil)
	for _, tc := range []struct {
		name string
		a    Append
		want error
	}{
		{"count mismatch", Append{Segment: seg, Writer: "w", EventNumber: 1, EventCount: 2, Data: block("a")}, protocol.ErrInvalidArgument},
		{"torn event", Append{Segment: seg, Writer: "w", EventNumber: 1, EventCount: 1, Data: block("abc")[:5]}, protocol.ErrInvalidArgument},
		{"empty", Append{Segment: seg, Writer: "w", EventNumber: 1, EventCount: 0}, protocol.ErrInvalidArgument},
		{"event too large", Append{Segment: seg, Writer: "w", EventNumber: 1, EventCount: 1, Data: []byte{0x00, 0x80, 0x00, 0x01}}, protocol.ErrEventTooLarge},
		{"unknown segment", Append{Segment: seg + "x", Writer: "w", EventNumber: 1, EventCount: 1, Data: block("a")}, protocol.ErrNoSuchSegment},
	} {
		tc.a.ExpectedOffset = protocol.NoExpectedOffset
		_, err := c.Append(tc.a)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if info, _ := c.Info(seg); info.Length != 0 {
		t.Fatalf("bad blocks changed the segment: %+v", info)
	}
}

func TestWriterIdempotenceSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir})
	c.Create(seg, nil)
	if last, err := c.SetupAppend(seg, "w"); err != nil || last != protocol.NoEventNumber {
		t.Fatalf("SetupAppend of a new writer = %d, %v", last, err)
	}
	appendEvents(t, c, seg, "w", 2, "e1", "e2")
	appendEvents(t, c, seg, "w", 3, "e3")
	r := appendEvents(t, c, seg, "w", 2, "e1", "e2") // resend
	if !r.Duplicate || r.PreviousEventNumber != 3 {
		t.Fatalf("resend result %+v", r)
	}
	c.Close()

	c = open(t, Config{Dir: dir})
	if last, err := c.SetupAppend(seg, "w"); err != nil || last != 3 {
		t.Fatalf("SetupAppend after restart = %d, %v", last, err)
	}
	if r := appendEvents(t, c, seg, "w", 3, "e3"); !r.Duplicate {
		t.Fatalf("resend after restart applied again: %+v", r)
	}
	appendEvents(t, c, seg, "w", 4, "e4")
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "e1,e2,e3,e4" {
		t.Fatalf("read %v", got)
	}
}

func TestConditionalAppend(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	c.Create(seg, nil)
	one := block("one")
	if _, err := c.Append(Append{Segment: seg, EventCount: 1, ExpectedOffset: 0, Data: one}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Append(Append{Segment: seg, EventCount: 1, ExpectedOffset: 0, Data: block("two")})
	expectErr(t, err, protocol.ErrConditionalCheckFailed)
	if _, err := c.Append(Append{Segment: seg, EventCount: 1, ExpectedOffset: int64(len(one)), Data: block("two")}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "one,two" {
		t.Fatalf("read %v", got)
	}
}

func TestAttributesCompareAndSet(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir})
	c.Create(seg, map[string]int64{"init": 7})
	u := func(key string, kind protocol.UpdateKind, value, expected int64) protocol.AttributeUpdate {
		return protocol.AttributeUpdate{Key: key, Kind: kind, Value: value, Expected: expected}
	}
	if err := c.UpdateAttributes(seg, []protocol.AttributeUpdate{u("k", protocol.ReplaceIfEquals, 1, protocol.NoValue)}); err != nil {
		t.Fatal(err)
	}
	expectErr(t, c.UpdateAttributes(seg, []protocol.AttributeUpdate{u("k", protocol.ReplaceIfEquals, 2, protocol.NoValue)}), protocol.ErrAttributeConflict)
	if err := c.UpdateAttributes(seg, []protocol.AttributeUpdate{u("k", protocol.ReplaceIfEquals, 2, 1)}); err != nil {
		t.Fatal(err)
	}
	// All or nothing: the second update fails, so "other" must not be set.
	expectErr(t, c.UpdateAttributes(seg, []protocol.AttributeUpdate{
		u("other", protocol.Replace, 5, 0), u("k", protocol.ReplaceIfGreater, 1, 0)}), protocol.ErrAttributeConflict)
	if err := c.UpdateAttributes(seg, []protocol.AttributeUpdate{u("k", protocol.ReplaceIfGreater, 9, 0), u("init", protocol.Remove, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"k": 9}
	check := func(c *Container) {
		t.Helper()
		got, err := c.GetAttributes(seg, nil)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("attributes = %v, %v; want %v", got, err, want)
		}
	}
	check(c)
	c.Close()
	check(open(t, Config{Dir: dir}))
}

func TestMergeTransactionSegment(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir})
	txn := protocol.TransactionSegmentName(seg, "6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	c.Create(seg, nil)
	c.Create(txn, nil)
	appendEvents(t, c, seg, "w", 1, "p1")
	appendEvents(t, c, txn, "t", 1, "t1", "t2")
	_, err := c.Merge(seg, txn)
	expectErr(t, err, protocol.ErrSegmentNotSealed)
	c.Seal(txn)
	length, err := c.Merge(seg, txn)
	if err != nil || length != int64(len(block("p1", "t1", "t2"))) {
		t.Fatalf("Merge = %d, %v", length, err)
	}
	_, err = c.Info(txn)
	expectErr(t, err, protocol.ErrNoSuchSegment)
	appendEvents(t, c, seg, "w", 2, "p2")
	want := "p1,t1,t2,p2"
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != want {
		t.Fatalf("read %v", got)
	}
	c.Close()
	// After a restart that replays the merge record (no checkpoint), and
	// after one that loads it from a checkpoint.
	for i := 0; i < 2; i++ {
		c = open(t, Config{Dir: dir, Cache: cache.New(1)})
		if got := readAll(t, c, seg, 0); strings.Join(got, ",") != want {
			t.Fatalf("restart %d: read %v", i, got)
		}
		c.Close()
	}
}

// TestTornMergeLeavesBothSegments cuts the merge record in half, as a
// crash in the middle of writing it would: both segments must be back as
// they were, and the merge can be done again.
func TestTornMergeLeavesBothSegments(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, CheckpointBytes: -1})
	txn := protocol.TransactionSegmentName(seg, "6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	c.Create(seg, nil)
	c.Create(txn, nil)
	appendEvents(t, c, txn, "t", 1, "t1")
	c.Seal(txn)
	// Simulate the crash: copy the directory as it is now plus a torn
	// merge record, without the checkpoint Close would write.
	if _, err := c.Merge(seg, txn); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	copyDir(t, filepath.Join(dir, "wal"), filepath.Join(crashed, "wal"))
	last := lastLogFile(t, filepath.Join(crashed, "wal"))
	st, _ := os.Stat(last)
	os.Truncate(last, st.Size()-3)

	c2 := open(t, Config{Dir: crashed})
	info, err := c2.Info(txn)
	if err != nil || !info.Sealed || info.Length != int64(len(block("t1"))) {
		t.Fatalf("transaction segment after a torn merge: %+v, %v", info, err)
	}
	if info, _ := c2.Info(seg); info.Length != 0 {
		t.Fatalf("parent after a torn merge: %+v", info)
	}
	if _, err := c2.Merge(seg, txn); err != nil {
		t.Fatalf("merge again: %v", err)
	}
	if got := readAll(t, c2, seg, 0); strings.Join(got, ",") != "t1" {
		t.Fatalf("read %v", got)
	}
}

// copyDir copies the tree under from to to, as it is on disk now: what a
// kill would leave.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func lastLogFile(t *testing.T, dir string) string {
	t.Helper()
	names, _ := vfs.Default.List(dir)
	var last string
	for _, n := range names {
		if strings.HasSuffix(n, ".wal") {
			last = n
		}
	}
	return filepath.Join(dir, last)
}

// TestCheckpointBoundsReplayAndCatchUpReadsComeFromTheLog writes enough to
// roll the log and checkpoint, damages a record that lies before the
// checkpoint, and checks that the container still opens (replay starts after
// the checkpoint) while a read of the damaged block, no longer cached, fails
// with a checksum error instead of returning wrong bytes.
func TestCheckpointBoundsReplayAndCatchUpReadsComeFromTheLog(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, WALFileSize: 1024, CheckpointBytes: -1, Cache: cache.New(1)}
	c := open(t, cfg)
	c.Create(seg, nil)
	var want []string
	for i := 0; i < 60; i++ {
		e := fmt.Sprintf("event-%02d-%s", i, strings.Repeat("z", 30))
		appendEvents(t, c, seg, "w", int64(i), e)
		want = append(want, e)
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Catch-up reads through a one-byte cache come from the log.
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("catch-up read %v", got)
	}
	c.Close()
	if ck, _ := listCheckpoints(vfs.Default, dir); len(ck) != 1 {
		t.Fatalf("checkpoints %v", ck)
	}
	first := filepath.Join(dir, "wal", "0000000000000001.wal")
	b, _ := os.ReadFile(first)
	at := bytes.Index(b, []byte(want[0]))
	if at < 0 {
		t.Fatal("first event not in the first log file")
	}
	b[at+3] ^= 1 // inside the first append's data
	os.WriteFile(first, b, 0o644)

	c = open(t, cfg)
	_, err := c.Read(context.Background(), seg, 0, 10)
	expectErr(t, err, wal.ErrCorrupt)
	if got := readAll(t, c, seg, int64(len(block(want[0])))); strings.Join(got, ",") != strings.Join(want[1:], ",") {
		t.Fatalf("read after the damaged block: %v", got)
	}
}

func TestDamagedNewestCheckpointFallsBack(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, CheckpointBytes: -1})
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w", 1, "a")
	c.Checkpoint()
	appendEvents(t, c, seg, "w", 2, "b")
	c.Close() // second checkpoint
	lsns, _ := listCheckpoints(vfs.Default, dir)
	if len(lsns) != 2 {
		t.Fatalf("checkpoints %v", lsns)
	}
	newest := filepath.Join(dir, ckptName(lsns[0]))
	b, _ := os.ReadFile(newest)
	b[len(b)-1] ^= 0xff
	os.WriteFile(newest, b, 0o644)
	c = open(t, Config{Dir: dir})
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "a,b" {
		t.Fatalf("read %v", got)
	}
}

func TestCorruptLogRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	c := open(t, Config{Dir: dir, CheckpointBytes: -1})
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w", 1, "a")
	appendEvents(t, c, seg, "w", 2, "b")
	c.mu.Lock()
	c.mu.failed = errors.New("skip the closing checkpoint")
	c.mu.Unlock()
	c.Close()
	name := filepath.Join(dir, "wal", "0000000000000001.wal")
	b, _ := os.ReadFile(name)
	b[wal.FileHeaderSize+3] ^= 1 // the create record's checksum, with valid records after it
	os.WriteFile(name, b, 0o644)
	_, err := Open(Config{Dir: dir})
	if !errors.Is(err, wal.ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), fmt.Sprint("offset ", wal.FileHeaderSize)) {
		t.Fatalf("Open of a corrupt log = %v", err)
	}
}

// TestReadsSeeOnlyDurableData holds the log's fsync: an append is applied
// (the next conditional append sees it) but not visible to readers or Info
// until its fsync returns; a tail read parked meanwhile wakes up with it.
func TestReadsSeeOnlyDurableData(t *testing.T) {
	efs := vfstest.New(vfs.Default)
	c := open(t, Config{Dir: t.TempDir(), FS: efs})
	c.Create(seg, nil)
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpSync && strings.HasSuffix(path, ".wal") {
			once.Do(func() { close(held); <-release })
		}
		return nil
	})
	p, err := c.AppendAsync(Append{Segment: seg, Writer: "w", EventNumber: 1, EventCount: 1, ExpectedOffset: -1, Data: block("hello")})
	if err != nil {
		t.Fatal(err)
	}
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	r, err := c.Read(ctx, seg, 0, 100)
	cancel()
	if err != nil || r.Len() != 0 || !r.AtTail {
		t.Fatalf("read of non-durable data = %+v, %v", r, err)
	}
	if info, _ := c.Info(seg); info.Length != 0 {
		t.Fatalf("Info shows non-durable length %d", info.Length)
	}
	got := make(chan ReadResult, 1)
	go func() {
		r, _ := c.Read(context.Background(), seg, 0, 100)
		got <- r
	}()
	waitFor(t, func() bool { // the read is parked on the segment
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.st.byName[seg].changed != nil
	})
	close(release)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.Len() != len(block("hello")) {
			t.Fatalf("woken read = %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parked read did not wake up")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLogFailureIsStickyAndRecoverable(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	c, err := Open(Config{Dir: dir, FS: efs})
	if err != nil {
		t.Fatal(err)
	}
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w", 1, "kept")
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpSync && strings.HasSuffix(path, ".wal") {
			return vfstest.ErrInjected
		}
		return nil
	})
	_, err = c.Append(Append{Segment: seg, Writer: "w", EventNumber: 2, EventCount: 1, ExpectedOffset: -1, Data: block("lost")})
	expectErr(t, err, protocol.ErrContainerUnavailable)
	efs.SetInjector(nil)
	expectErr(t, c.Create(protocol.SegmentName("sc", "st", 1, 0), nil), protocol.ErrContainerUnavailable)
	expectErr(t, c.Err(), vfstest.ErrInjected)
	c.Close()
	c = open(t, Config{Dir: dir})
	got := readAll(t, c, seg, 0)
	if len(got) < 1 || got[0] != "kept" {
		t.Fatalf("after recovery: %v", got)
	}
}

func TestConcurrentWritersAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, WALFileSize: 16 << 10, CheckpointBytes: 8 << 10}
	const writers, rounds, perRound = 4, 3, 50
	for round := 0; round < rounds; round++ {
		c := open(t, cfg)
		if round == 0 {
			c.Create(seg, nil)
		}
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < perRound; i++ {
					n := int64(round*perRound + i)
					if _, err := c.Append(Append{Segment: seg, Writer: fmt.Sprint("w", w), EventNumber: n, EventCount: 1,
						ExpectedOffset: -1, Data: block(fmt.Sprintf("%d:%d", w, n))}); err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		c.Close()
	}
	c := open(t, cfg)
	next := make([]int64, writers)
	for _, e := range readAll(t, c, seg, 0) {
		var w int
		var n int64
		fmt.Sscanf(e, "%d:%d", &w, &n)
		if n != next[w] {
			t.Fatalf("writer %d: event %d where %d was expected", w, n, next[w])
		}
		next[w]++
	}
	for w, n := range next {
		if n != rounds*perRound {
			t.Fatalf("writer %d: %d events, want %d", w, n, rounds*perRound)
		}
	}
}

// TestAttributesCannotForgeWriterEventNumbers: a client attribute named
// like a writer must not change what counts as a resend of that writer.
func TestAttributesCannotForgeWriterEventNumbers(t *testing.T) {
	c := open(t, Config{Dir: t.TempDir()})
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w1", 1, "a")
	if err := c.UpdateAttributes(seg, []protocol.AttributeUpdate{{Key: "w1", Kind: protocol.Replace, Value: 100}}); err != nil {
		t.Fatal(err)
	}
	if r := appendEvents(t, c, seg, "w1", 2, "b"); r.Duplicate {
		t.Fatal("an attribute update made a new block look like a resend")
	}
	if last, _ := c.SetupAppend(seg, "w1"); last != 2 {
		t.Fatalf("SetupAppend = %d, want 2", last)
	}
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "a,b" {
		t.Fatalf("read %v", got)
	}
}

// TestCheckpointFailureLosesNothing: a checkpoint that cannot be written
// is reported, the container goes on, and a restart replays the log.
func TestCheckpointFailureLosesNothing(t *testing.T) {
	dir := t.TempDir()
	efs := vfstest.New(vfs.Default)
	c := open(t, Config{Dir: dir, FS: efs, CheckpointBytes: -1})
	c.Create(seg, nil)
	appendEvents(t, c, seg, "w", 1, "before")
	efs.SetInjector(func(op vfstest.Op, path string) error {
		if op == vfstest.OpRename && strings.Contains(path, ckptPrefix) {
			return vfstest.ErrInjected
		}
		return nil
	})
	if err := c.Checkpoint(); !errors.Is(err, vfstest.ErrInjected) {
		t.Fatalf("Checkpoint = %v, want the injected failure", err)
	}
	appendEvents(t, c, seg, "w", 2, "after")
	c.Close() // its checkpoint fails too
	if ck, _ := listCheckpoints(vfs.Default, dir); len(ck) != 0 {
		t.Fatalf("a failed checkpoint left %v", ck)
	}
	c = open(t, Config{Dir: dir})
	if got := readAll(t, c, seg, 0); strings.Join(got, ",") != "before,after" {
		t.Fatalf("read %v", got)
	}
}

// TestOpenCloseLeavesNoGoroutines: every goroutine a container starts
// (checkpointer, log flusher, spare preparer) is stopped by Close.
func TestOpenCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		dir := t.TempDir()
		c, err := Open(Config{Dir: dir, WALFileSize: 64 << 10, WALPreallocate: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Create(seg, nil)
		appendEvents(t, c, seg, "w", 1, "x")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before })
}
