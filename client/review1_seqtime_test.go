package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol"
)

// TestReviewNoteTimeAfterDuplicates: a sequenced writer's first life
// stores ten events (event times 100..109) and dies without noting a
// time. Its second life resends them: all ten are acknowledged at once as
// duplicates. It then notes time 1000. NoteTime's contract is that every
// event written before the call lies before the position it reports, so
// the watermark's cut must lie at or after the ten stored events; else a
// reader standing at the cut is told (Lower 1000) that every event up to
// time 1000 was read, with the ten events of time 100..109 still ahead.
func TestReviewNoteTimeAfterDuplicates(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Minute))
	d.CreateStream("sc", "sq", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	newSeq := func() *client.Writer {
		w, err := c.NewWriter(ctx, "sc", "sq", client.WithWriterID("sw"), client.WithSequenced())
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	const n = 10
	ev := func(i int) []byte { return fmt.Appendf(nil, "t=%d", 100+i) }
	w1 := newSeq()
	for i := range n {
		if _, err := w1.WriteSeq(ctx, "k", int64(i), ev(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	abandon(t, w1)

	w2 := newSeq()
	t.Cleanup(func() { abandon(t, w2) })
	for i := range n {
		a, err := w2.WriteSeq(ctx, "k", int64(i), ev(i))
		if err != nil {
			t.Fatal(err)
		}
		if !a.Duplicate() {
			t.Fatalf("seq %d not a duplicate", i)
		}
	}
	if err := w2.NoteTime(ctx, ms(1000)); err != nil {
		t.Fatal(err)
	}
	if err := d.Service.WatermarkStep(ctx); err != nil {
		t.Fatal(err)
	}
	w := wmWaitLower(t, d, "sq", 1000)
	var total int64
	for _, off := range w.Cut {
		total += off
	}
	stored := int64(n * (protocol.EventHeaderSize + len(ev(0))))
	if total < stored {
		t.Fatalf("watermark lower 1000 at cut %v (%d bytes), before the %d bytes of events with times 100..109 written before NoteTime", w.Cut, total, stored)
	}
}
