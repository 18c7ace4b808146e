package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// written is an event the test appended: its data, segment and offset.
type written struct {
	data string
	seg  string
	off  int64
}

// TestGroupCheckpointEventsWhileWriting: three readers of four segments
// read while a writer keeps appending; a checkpoint is delivered to each
// reader as an event, and the events each reader returned before its
// checkpoint event are exactly those before the checkpoint's cut (those
// after, after it). A second checkpoint, taken with every reader waiting
// at the tail, completes too. The group, reset to the first checkpoint,
// reads again exactly the events after it, each once.
func TestGroupCheckpointEventsWhileWriting(t *testing.T) {
	d, c, segs := fourSegments(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "cg", "gs")
	if err != nil {
		t.Fatal(err)
	}
	fast := []GroupOption{WithCommitInterval(20 * time.Millisecond), WithGroupReaderOptions(withTailWait(200 * time.Millisecond))}
	run := newGroupRun(t)
	var readers []*GroupReader
	for _, id := range []string{"a", "b", "c"} {
		gr := joinTest(t, c, "cg", id, fast...)
		readers = append(readers, gr)
		run.run(ctx, gr)
	}

	// The writer appends to the four segments in turn until stopped.
	ap := newAppender(t, d)
	var wmu sync.Mutex
	var all []written
	stop := make(chan struct{})
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			seg := segs[i%4]
			e := fmt.Sprintf("%c/%d", 'a'+i%4, i/4)
			off := ap.add(seg, e)
			wmu.Lock()
			all = append(all, written{e, seg, off})
			wmu.Unlock()
		}
	}()
	waitFor(t, "100 events read", func() bool { evs, _ := run.events(); return len(evs) >= 100 })
	cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
	defer ccancel()
	cut, err := g.InitiateCheckpoint(cctx, "cp1")
	ccancel()
	if err != nil {
		t.Fatal(err)
	}
	wmu.Lock()
	n := len(all)
	wmu.Unlock()
	waitFor(t, "50 more events written", func() bool {
		wmu.Lock()
		defer wmu.Unlock()
		return len(all) >= n+50
	})
	close(stop)
	<-wdone
	if len(cut) != 4 {
		t.Fatalf("checkpoint cut %v", cut)
	}
	if kept, err := g.Checkpoint(ctx, "cp1"); err != nil || !maps.Equal(kept, cut) {
		t.Fatalf("Checkpoint(cp1) = %v, %v; want %v", kept, err, cut)
	}
	if _, err := g.Checkpoint(ctx, "nope"); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("Checkpoint(nope): %v", err)
	}
	waitFor(t, "every event read", func() bool { evs, _ := run.events(); return len(evs) >= len(all) })

	// Every reader waits at the tail: cp2 still completes.
	cctx, ccancel = context.WithTimeout(ctx, 20*time.Second)
	defer ccancel()
	cut2, err := g.InitiateCheckpoint(cctx, "cp2")
	if err != nil {
		t.Fatal(err)
	}
	for s, off := range cut2 {
		if w := segEnd(all, s); off != w {
			t.Fatalf("cp2 at the tail: %s at %d, want its end %d (cut %v)", s, off, w, cut2)
		}
	}

	evs, ckpts := run.events()
	if _, dups := distinct(evs); len(dups) > 0 || len(evs) != len(all) {
		t.Fatalf("read %d events (%d twice), want %d", len(evs), len(dups), len(all))
	}
	// Each reader returned cp1 once, then cp2; before its cp1 event only
	// events before the cut, after it only events after the cut.
	seen := map[string][]string{}
	for _, e := range ckpts {
		seen[e.reader] = append(seen[e.reader], e.Checkpoint)
		if e.Checkpoint == "cp1" {
			for s, off := range e.Position.Cut() {
				if cut[s] != off {
					t.Fatalf("reader %s's checkpoint event at %v, not within the cut %v", e.reader, e.Position.Cut(), cut)
				}
			}
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		if fmt.Sprint(seen[id]) != "[cp1 cp2]" {
			t.Fatalf("reader %s returned checkpoint events %v, want [cp1 cp2]", id, seen[id])
		}
	}
	cp1At := map[string]int{}
	for _, e := range ckpts {
		if e.Checkpoint == "cp1" {
			cp1At[e.reader] = e.seq
		}
	}
	before := 0
	for _, e := range evs {
		inCut := e.Offset < cut[e.Segment]
		if inCut != (e.seq < cp1At[e.reader]) {
			t.Fatalf("reader %s returned %q (%s at %d) %s its cp1 event, but the cut %v puts it %s",
				e.reader, e.Data, e.Segment, e.Offset, map[bool]string{true: "before", false: "after"}[e.seq < cp1At[e.reader]],
				cut, map[bool]string{true: "before", false: "after"}[inCut])
		}
		if inCut {
			before++
		}
	}
	var after []written
	for _, w := range all {
		if w.off >= cut[w.seg] {
			after = append(after, w)
		}
	}
	if before+len(after) != len(all) || before == 0 || len(after) == 0 {
		t.Fatalf("%d events before cp1 and %d after, of %d", before, len(after), len(all))
	}

	// Restore: the readers leave, the stream is sealed, the group goes
	// back to cp1, and two new readers read exactly what follows it.
	for _, gr := range readers {
		if err := gr.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Controller.SealStream(ctx, "sc", "gs"); err != nil {
		t.Fatal(err)
	}
	if err := g.ResetToCheckpoint(ctx, "nope"); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("ResetToCheckpoint(nope): %v", err)
	}
	if err := g.ResetToCheckpoint(ctx, "cp1"); err != nil {
		t.Fatal(err)
	}
	again := newGroupRun(t)
	for _, id := range []string{"d", "e"} {
		again.run(ctx, joinTest(t, c, "cg", id, fast...))
	}
	waitFor(t, "both new readers to end", func() bool { return len(again.ended()) == 2 })
	for id, err := range again.ended() {
		if !errors.Is(err, ErrEndOfStream) {
			t.Fatalf("reader %s ended with %v", id, err)
		}
	}
	evs, _ = again.events()
	if _, dups := distinct(evs); len(dups) > 0 {
		t.Fatalf("read twice after the reset: %v", dups)
	}
	want := map[string]bool{}
	for _, w := range after {
		want[fmt.Sprintf("%s@%d", w.seg, w.off)] = true
	}
	got := map[string]bool{}
	for _, e := range evs {
		got[fmt.Sprintf("%s@%d", e.Segment, e.Offset)] = true
	}
	if !maps.Equal(got, want) {
		t.Fatalf("after the reset read %d events, want the %d after cp1", len(got), len(want))
	}
}

// segEnd returns where the last event written to seg ends (0: none).
func segEnd(all []written, seg string) int64 {
	var end int64
	for _, w := range all {
		if w.seg == seg {
			end = w.off + protocol.EventHeaderSize + int64(len(w.data))
		}
	}
	return end
}

// TestGroupCheckpointReaderClosesWhilePending: a reader that never reads
// does not deliver its checkpoint event; when it closes, the checkpoint
// completes, its segments counted at the position it left at, and the
// other reader then reads everything once.
func TestGroupCheckpointReaderClosesWhilePending(t *testing.T) {
	d, c, segs := fourSegments(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "pg", "gs")
	if err != nil {
		t.Fatal(err)
	}
	ap := newAppender(t, d)
	for i := range 5 {
		for k, seg := range segs {
			ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, i))
		}
	}
	fast := []GroupOption{WithCommitInterval(20 * time.Millisecond), WithGroupReaderOptions(withTailWait(200 * time.Millisecond))}
	idle := joinTest(t, c, "pg", "idle", fast...)
	busy := joinTest(t, c, "pg", "busy", fast...)
	waitFor(t, "two segments each", func() bool {
		s := groupState(t, g)
		return held(s, "idle") == 2 && held(s, "busy") == 2
	})
	run := newGroupRun(t)
	run.run(ctx, busy)
	type result struct {
		cut api.StreamCut
		err error
	}
	res := make(chan result, 1)
	go func() {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		cut, err := g.InitiateCheckpoint(cctx, "cp")
		res <- result{cut, err}
	}()
	waitFor(t, "the busy reader's checkpoint event", func() bool { _, ck := run.events(); return len(ck) == 1 })
	waitFor(t, "the checkpoint pending for idle only", func() bool {
		s := groupState(t, g)
		return s.Checkpoint != nil && fmt.Sprint(s.Checkpoint.Pending) == "[idle]"
	})
	if err := idle.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, seg := range segs {
		if _, ok := r.cut[seg]; !ok {
			t.Fatalf("cut %v lacks %s", r.cut, seg)
		}
	}
	waitFor(t, "all 20 events", func() bool { evs, _ := run.events(); return len(evs) >= 20 })
	evs, _ := run.events()
	if _, dups := distinct(evs); len(dups) > 0 || len(evs) != 20 {
		t.Fatalf("read %d events, %d twice", len(evs), len(dups))
	}
}
