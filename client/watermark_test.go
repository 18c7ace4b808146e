package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// ms is event time t ms after the Unix epoch.
func ms(t int64) time.Time { return time.UnixMilli(t) }

// wmLatest returns the stream's newest watermark (ok false if none).
func wmLatest(t *testing.T, d *clienttest.Deployment, stream string) (api.Watermark, bool) {
	t.Helper()
	ws, err := d.Controller.Watermarks(context.Background(), "sc", stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		return api.Watermark{}, false
	}
	return ws[len(ws)-1], true
}

// wmWaitLower waits until the newest watermark's lower time is lower.
func wmWaitLower(t *testing.T, d *clienttest.Deployment, stream string, lower int64) api.Watermark {
	t.Helper()
	var w api.Watermark
	waitFor(t, fmt.Sprintf("a watermark with lower time %d", lower), func() bool {
		var ok bool
		w, ok = wmLatest(t, d, stream)
		return ok && w.LowerTime == lower
	})
	return w
}

func wmWriter(t *testing.T, c *client.Client, stream, id string) *client.Writer {
	t.Helper()
	w, err := c.NewWriter(testCtx(t), "sc", stream, client.WithWriterID(id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

func wmWrite(t *testing.T, w *client.Writer, key string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := w.Write(testCtx(t), key, []byte(fmt.Sprintf("%s:%d", key, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func wmNote(t *testing.T, w *client.Writer, at int64) {
	t.Helper()
	if err := w.NoteTime(testCtx(t), ms(at)); err != nil {
		t.Fatalf("NoteTime(%d): %v", at, err)
	}
}

// TestWatermarksFollowTwoWriters: two writers note times; the watermark
// is their least and greatest time at a cut past both writers' events,
// and a reader's time window follows its position: upper bound only
// before the cut, lower bound once it has read up to it.
//
// The controller's loop is off: a step between the two writers' first
// notes would rightly make a watermark of the first writer alone, so the
// test runs the steps (WatermarkStep, the loop's body) itself.
func TestWatermarksFollowTwoWriters(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Minute))
	step := func() {
		t.Helper()
		if err := d.Service.WatermarkStep(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	d.CreateStream("sc", "wm", 2)
	c := newClient(t, d)
	a, b := wmWriter(t, c, "wm", "wa"), wmWriter(t, c, "wm", "wb")

	wmWrite(t, a, "ka", 20)
	wmWrite(t, b, "kb", 30)
	wmNote(t, a, 1000)
	wmNote(t, b, 2000)
	step()
	w := wmWaitLower(t, d, "wm", 1000)
	if w.UpperTime != 2000 || w.Seq != 1 {
		t.Fatalf("watermark %+v: want seq 1, upper 2000", w)
	}
	var total int64
	for _, off := range w.Cut {
		total += off
	}
	if want := int64(50 * protocol.EventHeaderSize); total < want {
		t.Fatalf("cut %v holds %d bytes, less than the %d written before the notes", w.Cut, total, want)
	}

	r, err := c.NewReader(testCtx(t), "sc", "wm", client.WithWatermarkPoll(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	waitFor(t, "the reader's upper bound at the head", func() bool { return r.CurrentTimeWindow().UpperKnown() })
	if tw := r.CurrentTimeWindow(); tw.LowerKnown() || !tw.Upper.Equal(ms(2000)) {
		t.Fatalf("window at the head %+v: want no lower bound, upper 2000", tw)
	}
	for i := 0; i < 50; i++ {
		if _, err := r.ReadNext(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the reader's lower bound after reading everything", func() bool { return r.CurrentTimeWindow().LowerKnown() })
	// At the cut exactly: both bounds are the watermark's.
	if tw := r.CurrentTimeWindow(); !tw.Lower.Equal(ms(1000)) || !tw.Upper.Equal(ms(2000)) {
		t.Fatalf("window at the cut %+v: want [1000, 2000]", tw)
	}

	// Time moves on: both writers note later times.
	wmWrite(t, a, "ka", 5)
	wmNote(t, a, 3000)
	wmNote(t, b, 4000)
	step()
	wmWaitLower(t, d, "wm", 3000)
	for i := 0; i < 5; i++ {
		if _, err := r.ReadNext(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the reader's lower bound 3000", func() bool { return r.CurrentTimeWindow().Lower.Equal(ms(3000)) })

	// A reader group's reader sees the same.
	g, err := c.NewReaderGroup(testCtx(t), "sc", "wmg", "wm")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete(context.Background())
	gr, err := c.JoinReaderGroup(testCtx(t), "sc", "wmg", "r1", client.WithGroupReaderOptions(client.WithWatermarkPoll(10*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close(context.Background())
	for i := 0; i < 55; i++ {
		if _, err := gr.ReadNext(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the group reader's lower bound 3000", func() bool { return gr.CurrentTimeWindow().Lower.Equal(ms(3000)) })
}

// TestWatermarkWriterTimeout: a writer that goes silent holds time back
// only until it times out; its report is forgotten and time advances
// with the others.
func TestWatermarkWriterTimeout(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(10*time.Millisecond, 300*time.Millisecond))
	d.CreateStream("sc", "wt", 1)
	c := newClient(t, d)
	a, b := wmWriter(t, c, "wt", "wa"), wmWriter(t, c, "wt", "wb")
	wmNote(t, a, 1000)
	wmNote(t, b, 1000)
	wmWaitLower(t, d, "wt", 1000)

	// b goes silent at 1000; a keeps noting 5000 until the watermark
	// gets there, which it can only once b has timed out.
	waitFor(t, "time to advance past the silent writer", func() bool {
		wmNote(t, a, 5000)
		w, _ := wmLatest(t, d, "wt")
		return w.LowerTime == 5000
	})
	if w, _ := wmLatest(t, d, "wt"); w.UpperTime != 5000 {
		t.Fatalf("watermark %+v: want upper 5000 (b's 1000 must not count)", w)
	}
	// (That a writer timed out counts again when it reports again is
	// checked with a controlled clock: controller/watermarks_test.go.)
}

// TestWatermarksMonotonicThroughScaleAndChurn: writers come and go
// (Close tells the controller; the timeout is a minute, so only that
// lets time advance) and the stream scales between their reports; every
// watermark is at or after the one before.
func TestWatermarksMonotonicThroughScaleAndChurn(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(10*time.Millisecond, time.Minute))
	d.CreateStream("sc", "wc", 2)
	c := newClient(t, d)
	w1, w2 := wmWriter(t, c, "wc", "w1"), wmWriter(t, c, "wc", "w2")
	wmWrite(t, w1, "k1", 10)
	wmWrite(t, w2, "k2", 10)
	wmNote(t, w1, 100)
	wmNote(t, w2, 110)
	wmWaitLower(t, d, "wc", 100)

	// Split segment 0 in two.
	if _, err := d.Controller.Scale(testCtx(t), "sc", "wc", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	wmWrite(t, w1, "k1", 10)
	wmNote(t, w1, 200) // w1 has seen the split; w2 has not written since
	wmNote(t, w2, 210)
	wmWaitLower(t, d, "wc", 200)

	// w3 arrives, w1 leaves.
	w3 := wmWriter(t, c, "wc", "w3")
	wmWrite(t, w3, "k3", 10)
	wmNote(t, w3, 300)
	if err := w1.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wmWrite(t, w2, "k2", 10)
	wmNote(t, w2, 320)
	wmWaitLower(t, d, "wc", 300)

	// Merge everything back into one segment; w2 and w3 go on.
	d.AllowMerge("sc", "wc")
	segs, err := d.Controller.CurrentSegments(testCtx(t), "sc", "wc")
	if err != nil {
		t.Fatal(err)
	}
	var nums []int64
	for _, s := range segs {
		nums = append(nums, s.Number)
	}
	if _, err := d.Controller.Scale(testCtx(t), "sc", "wc", api.ScaleRequest{SealedSegments: nums,
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	wmWrite(t, w3, "k3", 10)
	wmNote(t, w3, 400)
	wmWrite(t, w2, "k2", 10)
	wmNote(t, w2, 410)
	wmWaitLower(t, d, "wc", 400)

	ws, err := d.Controller.Watermarks(testCtx(t), "sc", "wc", 0)
	if err != nil {
		t.Fatal(err)
	}
	maxEpoch := func(cut api.StreamCut) int64 {
		e := int64(-1)
		for s := range cut {
			q, err := protocol.ParseSegmentName(s)
			if err != nil {
				t.Fatal(err)
			}
			e = max(e, q.Epoch)
		}
		return e
	}
	for i := 1; i < len(ws); i++ {
		p, n := ws[i-1], ws[i]
		if n.Seq <= p.Seq || n.LowerTime <= p.LowerTime || n.UpperTime < p.UpperTime || maxEpoch(n.Cut) < maxEpoch(p.Cut) {
			t.Fatalf("watermark %+v moved back from %+v", n, p)
		}
		for s, off := range p.Cut {
			if noff, ok := n.Cut[s]; ok && noff < off {
				t.Fatalf("watermark %d: segment %s went back from %d to %d", n.Seq, s, off, noff)
			}
		}
	}
	last := ws[len(ws)-1]
	if len(last.Cut) != 1 || maxEpoch(last.Cut) != 2 {
		t.Fatalf("last watermark's cut %v: want the merged segment of epoch 2", last.Cut)
	}
}

// TestTxnCommitAtReportsTime: a transaction committed with a time counts
// as its writer's note, at the end of what it committed.
func TestTxnCommitAtReportsTime(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(10*time.Millisecond, time.Minute))
	d.CreateStream("sc", "wx", 2)
	c := newClient(t, d)
	w := wmWriter(t, c, "wx", "tw")
	txn, err := w.BeginTxn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := txn.Write(testCtx(t), fmt.Sprintf("k%d", i), []byte("event")); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.CommitAt(testCtx(t), ms(7000)); err != nil {
		t.Fatal(err)
	}
	wm := wmWaitLower(t, d, "wx", 7000)
	var total int64
	for _, off := range wm.Cut {
		total += off
	}
	if want := int64(20 * (protocol.EventHeaderSize + 5)); total != want {
		t.Fatalf("cut %v holds %d bytes, want the transaction's %d", wm.Cut, total, want)
	}
	r, err := c.NewReader(testCtx(t), "sc", "wx", client.WithWatermarkPoll(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < 20; i++ {
		if _, err := r.ReadNext(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the reader's lower bound 7000", func() bool { return r.CurrentTimeWindow().Lower.Equal(ms(7000)) })

	// A transaction not committed has no time to report.
	open, err := w.BeginTxn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Abort(context.Background())
	err = d.Controller.NoteWriterTime(testCtx(t), "sc", "wx", "tw", api.WriterTime{Time: 8000, Txn: open.ID()})
	if !errors.Is(err, ctlclient.ErrConflict) {
		t.Fatalf("time of an open transaction: err = %v, want ErrConflict", err)
	}
}

// TestNoteWriterTimeRefusesBadReports: bad reports get one clear error
// and change nothing.
func TestNoteWriterTimeRefusesBadReports(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(-1, time.Minute))
	d.CreateStream("sc", "wb", 1)
	ctx := testCtx(t)
	seg := protocol.SegmentName("sc", "wb", 0, 0)
	for _, tc := range []struct {
		name, stream, writer string
		wt                   api.WriterTime
		want                 error
	}{
		{"negative time", "wb", "w", api.WriterTime{Time: -1}, ctlclient.ErrInvalid},
		{"position and transaction", "wb", "w", api.WriterTime{Time: 1, Txn: "x", Position: api.StreamCut{seg: 1}}, ctlclient.ErrInvalid},
		{"segment of another stream", "wb", "w", api.WriterTime{Time: 1, Position: api.StreamCut{protocol.SegmentName("sc", "other", 0, 0): 1}}, ctlclient.ErrInvalid},
		{"segment that does not exist", "wb", "w", api.WriterTime{Time: 1, Position: api.StreamCut{protocol.SegmentName("sc", "wb", 7, 0): 1}}, ctlclient.ErrInvalid},
		{"unknown stream", "nope", "w", api.WriterTime{Time: 1}, ctlclient.ErrNotFound},
		{"unknown transaction", "wb", "w", api.WriterTime{Time: 1, Txn: "00000000-0000-0000-0000-000000000000"}, ctlclient.ErrNotFound},
	} {
		err := d.Controller.NoteWriterTime(ctx, "sc", tc.stream, tc.writer, tc.wt)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := d.Service.WatermarkStep(ctx); err != nil {
		t.Fatal(err)
	}
	if ws, err := d.Controller.Watermarks(ctx, "sc", "wb", 0); err != nil || len(ws) != 0 {
		t.Fatalf("watermarks after refused reports: %v, %v; want none", ws, err)
	}
	// A writer id with a slash is a path segment like any other.
	if err := d.Controller.NoteWriterTime(ctx, "sc", "wb", "a/b", api.WriterTime{Time: 5, Position: api.StreamCut{seg: 0}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Service.WatermarkStep(ctx); err != nil {
		t.Fatal(err)
	}
	if ws, err := d.Controller.Watermarks(ctx, "sc", "wb", 0); err != nil || len(ws) != 1 || ws[0].LowerTime != 5 {
		t.Fatalf("watermarks: %+v, %v; want one at 5", ws, err)
	}
	if err := d.Controller.RemoveWriter(ctx, "sc", "wb", "a/b"); err != nil {
		t.Fatal(err)
	}
}

// TestNoteTimeAfterNodeRestart: events in flight when the node stops may
// be acknowledged by the reconnect's setup, which says no offset; the
// position NoteTime reports still covers every event written before it.
func TestNoteTimeAfterNodeRestart(t *testing.T) {
	d := clienttest.Start(t, clienttest.WithWatermarks(10*time.Millisecond, time.Minute))
	d.CreateStream("sc", "wr", 1)
	c := newClient(t, d)
	w, err := c.NewWriter(testCtx(t), "sc", "wr", client.WithWriterID("wr"), client.WithBackoff(time.Millisecond, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	const n = 2000
	for i := 0; i < n; i++ {
		if i == n/2 {
			d.StopNode()
			d.StartNode()
		}
		if _, err := w.Write(testCtx(t), "k", []byte(fmt.Sprintf("e%04d", i))); err != nil {
			t.Fatal(err)
		}
	}
	wmNote(t, w, 1234)
	wm := wmWaitLower(t, d, "wr", 1234)
	if off, want := wm.Cut[protocol.SegmentName("sc", "wr", 0, 0)], int64(n*(protocol.EventHeaderSize+5)); off != want {
		t.Fatalf("cut %v: offset %d, want the %d bytes of the %d events written before NoteTime", wm.Cut, off, want, n)
	}
}
