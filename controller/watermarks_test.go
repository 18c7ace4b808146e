package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// wmService is a Service on e over st (a wrapper of e's store) with no
// background loops and a writer timeout of a minute of e's clock.
func wmService(e *env, st cluster.Store) *Service {
	s := New(st, NewNodeSegments(StaticLocator(e.addr)), Options{Clock: e.clock.now, Logger: quietLog(),
		TxnSweepInterval: -1, RetentionInterval: -1, WatermarkInterval: -1, WriterTimeout: time.Minute})
	e.t.Cleanup(func() { s.Close() })
	return s
}

// wmStream is wmService with the scope sc and its stream st of one
// segment.
func wmStream(e *env, st cluster.Store) (*Service, context.Context) {
	s := wmService(e, st)
	ctx := ctxT(e.t)
	must(e.t, s.CreateScope(ctx, "sc"))
	_, err := s.CreateStream(ctx, fixed("sc", "st", 1))
	must(e.t, err)
	return s, ctx
}

func TestWatermarkStepTimesOutAndDeletes(t *testing.T) {
	e := newEnv(t)
	s, ctx := wmStream(e, e.store)
	seg := protocol.SegmentName("sc", "st", 0, 0)
	note := func(w string, tm, off int64) {
		t.Helper()
		must(t, s.NoteWriterTime(ctx, "sc", "st", w, api.WriterTime{Time: tm, Position: api.StreamCut{seg: off}}))
	}
	lower := func() int64 {
		t.Helper()
		must(t, s.WatermarkStep(ctx))
		ws, err := s.Watermarks(ctx, "sc", "st", 0)
		must(t, err)
		if len(ws) == 0 {
			return -1
		}
		return ws[len(ws)-1].LowerTime
	}

	note("a", 100, 10)
	note("b", 100, 20)
	if got := lower(); got != 100 {
		t.Fatalf("lower = %d, want 100", got)
	}
	// b is silent from now on; a goes on. Nothing moves while b counts.
	e.clock.advance(30 * time.Second)
	note("a", 300, 30)
	if got := lower(); got != 100 {
		t.Fatalf("lower = %d with b not past it, want 100", got)
	}
	// A writer's time never goes back: an older note keeps the newer.
	note("a", 50, 5)
	// b's last report is now over a minute old: it times out.
	e.clock.advance(31 * time.Second)
	if got := lower(); got != 300 {
		t.Fatalf("lower = %d after b timed out, want 300", got)
	}
	ws, err := s.Watermarks(ctx, "sc", "st", 1)
	must(t, err)
	if len(ws) != 1 || ws[0].Seq != 2 || ws[0].Cut[seg] != 30 || ws[0].UpperTime != 300 {
		t.Fatalf("watermarks after 1: %+v, want seq 2 at offset 30, upper 300", ws)
	}
	for k := range dump(t, e.store) {
		if strings.HasPrefix(k, writersKey("sc", "st")+"/") && k != writerKey("sc", "st", "a") {
			t.Fatalf("key %s left after b timed out", k)
		}
	}
	// b reports again: it counts again and holds time at its 400.
	note("b", 400, 30)
	note("a", 900, 40)
	if got := lower(); got != 400 {
		t.Fatalf("lower = %d with b back at 400, want 400", got)
	}
	// a closes (RemoveWriter): b alone moves time.
	must(t, s.RemoveWriter(ctx, "sc", "st", "a"))
	note("b", 500, 30)
	if got := lower(); got != 500 {
		t.Fatalf("lower = %d after a left, want 500", got)
	}

	// Deleting the stream removes the reports and the watermarks. A
	// sealed stream takes no report (nothing more is written to it).
	must(t, s.SealStream(ctx, "sc", "st"))
	wantErr(t, "report on a sealed stream", s.NoteWriterTime(ctx, "sc", "st", "b", api.WriterTime{Time: 600}), ErrConflict)
	must(t, s.DeleteStream(ctx, "sc", "st"))
	for k, v := range dump(t, e.store) {
		if strings.HasPrefix(k, streamKey("sc", "st")) && v != "" {
			t.Fatalf("key %s left after the stream's delete", k)
		}
	}
	_, err = s.Watermarks(ctx, "sc", "st", 0)
	wantErr(t, "watermarks of a deleted stream", err, ErrNotFound)
}

func TestWatermarksBounded(t *testing.T) {
	e := newEnv(t)
	s, ctx := wmStream(e, e.store)
	for i := 1; i <= MaxWatermarks+10; i++ {
		must(t, s.NoteWriterTime(ctx, "sc", "st", "w", api.WriterTime{Time: int64(i)}))
		must(t, s.WatermarkStep(ctx))
	}
	ws, err := s.Watermarks(ctx, "sc", "st", 0)
	must(t, err)
	if len(ws) != MaxWatermarks || ws[0].Seq != 11 || ws[len(ws)-1].LowerTime != MaxWatermarks+10 {
		t.Fatalf("%d watermarks from seq %d: want the newest %d", len(ws), ws[0].Seq, MaxWatermarks)
	}
	must(t, s.RemoveWriter(ctx, "sc", "st", "w"))
	must(t, s.RemoveWriter(ctx, "sc", "st", "w")) // twice: not an error
	wantErr(t, "empty writer id", s.RemoveWriter(ctx, "sc", "st", ""), ErrInvalid)
}
