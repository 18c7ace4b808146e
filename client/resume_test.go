package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// appLog is an application's input log for a sequenced writer: event seq
// is "key:n", the n-th event of its key, so that checkPerKey can tell
// loss, duplication and reordering apart.
type appLog struct {
	keys   []string
	events []logEvent
}

type logEvent struct {
	key  string
	data []byte
}

// newAppLog returns n events spread round-robin over keys.
func newAppLog(keys []string, n int) *appLog {
	l := &appLog{keys: keys}
	count := map[string]int{}
	for i := range n {
		k := keys[i%len(keys)]
		l.events = append(l.events, logEvent{key: k, data: fmt.Appendf(nil, "%s:%d", k, count[k])})
		count[k]++
	}
	return l
}

// want returns the events per key of the whole log.
func (l *appLog) want() map[string]int {
	m := map[string]int{}
	for _, e := range l.events {
		m[e.key]++
	}
	return m
}

// write writes events [from, to) of the log with WriteSeq and returns
// how many were skipped as stored.
func (l *appLog) write(ctx context.Context, t *testing.T, w *client.Writer, from, to int) (dups int) {
	t.Helper()
	for seq := from; seq < to; seq++ {
		e := l.events[seq]
		a, err := w.WriteSeq(ctx, e.key, int64(seq), e.data)
		if err != nil {
			t.Fatalf("WriteSeq %d: %v", seq, err)
		}
		if a.Duplicate() {
			dups++
		}
	}
	return dups
}

// keysIn returns n keys whose hashes fall in [lo, hi).
func keysIn(lo, hi float64, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := fmt.Sprintf("key%d", i)
		if h := protocol.KeyHash(k); lo <= h && h < hi {
			keys = append(keys, k)
		}
	}
	return keys
}

func sequenced(t *testing.T, c *client.Client, ctx context.Context, id string) *client.Writer {
	t.Helper()
	w, err := c.NewWriter(ctx, "s", "x", client.WithWriterID(id), client.WithSequenced(),
		client.WithMaxBatch(4<<10), client.WithMaxInflight(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// abandon stops w without waiting for its events: some may be stored,
// some not, like a process that dies.
func abandon(t *testing.T, w *client.Writer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("close: %v", err)
	}
}

// streamX is a deployment with the stream s/x of n segments, a client of
// it and a test context.
func streamX(t *testing.T, n int) (*clienttest.Deployment, *client.Client, context.Context) {
	t.Helper()
	d := clienttest.Start(t)
	d.CreateStream("s", "x", n)
	return d, newClient(t, d), testCtx(t)
}

// TestSequencedWriterResumes: a sequenced writer writes half its log and
// confirms it, writes more and is stopped without waiting; a new writer
// with the same id resends the whole log: the stream holds every event
// once, in per-key order, and the resent confirmed events were skipped.
func TestSequencedWriterResumes(t *testing.T) {
	d, c, ctx := streamX(t, 2)
	log := newAppLog(keysIn(0, 1, 10), 2000)

	w1 := sequenced(t, c, ctx, "app")
	if got := w1.Stored(); got != protocol.NoEventNumber {
		t.Fatalf("a first life's Stored = %d, want NoEventNumber", got)
	}
	log.write(ctx, t, w1, 0, 1000)
	if err := w1.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	log.write(ctx, t, w1, 1000, 1500)
	abandon(t, w1)

	w2 := sequenced(t, c, ctx, "app")
	if got := w2.Stored(); got < 999 {
		t.Fatalf("Stored after the first life = %d, want at least 999 (confirmed)", got)
	}
	dups := log.write(ctx, t, w2, 0, len(log.events))
	if dups < 1000 {
		t.Fatalf("%d resent events skipped, want at least the 1000 confirmed", dups)
	}
	if err := w2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, segmentNames(t, d, "s", "x"), log.want())

	// A third life resending everything sends nothing.
	w3 := sequenced(t, c, ctx, "app")
	if dups := log.write(ctx, t, w3, 0, len(log.events)); dups != len(log.events) {
		t.Fatalf("third life: %d of %d skipped, want all", dups, len(log.events))
	}
	if err := w3.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, segmentNames(t, d, "s", "x"), log.want())
}

// TestSequencedWriterResumesAcrossScales: lives of a writer separated by a
// split and a merge, each stopped without waiting, the last resending the
// whole log: every event once, in per-key order, over all the segments.
func TestSequencedWriterResumesAcrossScales(t *testing.T) {
	d, c, ctx := streamX(t, 2)
	log := newAppLog(keysIn(0, 1, 16), 3000)

	w := sequenced(t, c, ctx, "app")
	log.write(ctx, t, w, 0, 500)
	if err := w.Flush(ctx); err != nil { // confirmed: 0..499
		t.Fatal(err)
	}
	log.write(ctx, t, w, 500, 1000)
	abandon(t, w)
	split, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	w = sequenced(t, c, ctx, "app")
	log.write(ctx, t, w, 400, 2000) // resends from before its last confirmed point
	abandon(t, w)
	merged, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{split[1].Number, 1},
		NewRanges: []api.KeyRange{{Low: 0.25, High: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	w = sequenced(t, c, ctx, "app")
	log.write(ctx, t, w, 0, len(log.events))
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	order := []string{
		protocol.SegmentName("s", "x", 0, 0), protocol.SegmentName("s", "x", 1, 0),
		split[0].Segment, split[1].Segment, merged[0].Segment,
	}
	checkPerKey(t, d, order, log.want())
}

// TestSequencedWriterMergeWithEventsOnBothSides: the stream is merged
// behind a writer's back, then the writer writes keys of both
// predecessors alternately, so that both hold events when they find
// themselves sealed, at different moments: the successor must take them
// in sequence order (a lower number sent after a higher one would be
// dropped by the node as a resend). Then a new life resends everything.
func TestSequencedWriterMergeWithEventsOnBothSides(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 2)
	ctx := testCtx(t)
	left, right := keysIn(0, 0.5, 4), keysIn(0.5, 1, 4)
	var keys []string
	for i := range left {
		keys = append(keys, left[i], right[i])
	}
	log := newAppLog(keys, 4000)

	// Segment 1 learns its successor late: only once the successor holds
	// data, or after a bound when it never does (as it must not, while
	// segment 1 holds events of lower numbers). Without the hold this
	// schedule loses segment 1's events.
	info := d.Dial()
	slow := &lateSuccessors{Client: d.Controller, late: protocol.SegmentName("s", "x", 1, 0), hasData: func(seg string) bool {
		i, err := info.GetSegmentInfo(ctx, seg)
		return err == nil && i.Length > 0
	}}
	c, err := client.New(ctx, "", client.WithController(slow))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := sequenced(t, c, ctx, "app")
	log.write(ctx, t, w, 0, 200)
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d.AllowMerge("s", "x")
	merged, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{0, 1},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	slow.successor.Store(&merged[0].Segment)
	log.write(ctx, t, w, 200, 4000)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	order := []string{protocol.SegmentName("s", "x", 0, 0), protocol.SegmentName("s", "x", 1, 0), merged[0].Segment}
	checkPerKey(t, d, order, log.want())

	w = sequenced(t, c, ctx, "app")
	if dups := log.write(ctx, t, w, 0, len(log.events)); dups != len(log.events) {
		t.Fatalf("resend after a clean close: %d of %d skipped, want all", dups, len(log.events))
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, order, log.want())
}

// TestSequencedWriterBadInput: one clear error per misuse, and the writer
// goes on.
func TestSequencedWriterBadInput(t *testing.T) {
	d, c, ctx := streamX(t, 1)
	if _, err := c.NewWriter(ctx, "s", "x", client.WithSequenced()); !errors.Is(err, client.ErrSequenced) {
		t.Fatalf("sequenced without an id: %v, want ErrSequenced", err)
	}
	plain, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	if _, err := plain.WriteSeq(ctx, "k", 1, []byte("k:0")); !errors.Is(err, client.ErrSequenced) {
		t.Fatalf("WriteSeq on a plain writer: %v, want ErrSequenced", err)
	}
	w := sequenced(t, c, ctx, "app")
	if _, err := w.Write(ctx, "k", []byte("k:0")); !errors.Is(err, client.ErrSequenced) {
		t.Fatalf("Write on a sequenced writer: %v, want ErrSequenced", err)
	}
	if _, err := w.WriteSeq(ctx, "k", -1, []byte("k:0")); !errors.Is(err, client.ErrSequence) {
		t.Fatalf("negative seq: %v, want ErrSequence", err)
	}
	if _, err := w.WriteSeq(ctx, "k", 5, []byte("k:0")); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int64{5, 4} {
		if _, err := w.WriteSeq(ctx, "k", seq, []byte("k:x")); !errors.Is(err, client.ErrSequence) {
			t.Fatalf("seq %d after 5: %v, want ErrSequence", seq, err)
		}
	}
	if _, err := w.WriteSeq(ctx, "k", 9, []byte("k:1")); err != nil {
		t.Fatal(err)
	}
	// An empty key routes by the sequence number, and resumes like any.
	if _, err := w.WriteSeq(ctx, "", 12, []byte("e:0")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w = sequenced(t, c, ctx, "app")
	for _, e := range []struct {
		key  string
		seq  int64
		data string
	}{{"k", 5, "k:0"}, {"k", 9, "k:1"}, {"", 12, "e:0"}} {
		if a, err := w.WriteSeq(ctx, e.key, e.seq, []byte(e.data)); err != nil || !a.Duplicate() {
			t.Fatalf("resend of %d: duplicate %v, %v; want a duplicate", e.seq, a != nil && a.Duplicate(), err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, segmentNames(t, d, "s", "x"), map[string]int{"k": 2, "e": 1})
}

// lateSuccessors answers Successors of segment late only once successor
// holds data (hasData), or after lateBound.
type lateSuccessors struct {
	*ctlclient.Client
	late      string
	successor atomic.Pointer[string]
	hasData   func(segment string) bool
}

const lateBound = 2 * time.Second

func (l *lateSuccessors) Successors(ctx context.Context, segment string) ([]api.Successor, error) {
	if segment == l.late {
		deadline := time.Now().Add(lateBound)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if s := l.successor.Load(); s != nil && l.hasData(*s) {
				break
			}
			time.Sleep(5 * time.Millisecond) // the adversarial schedule's bounded wait
		}
	}
	return l.Client.Successors(ctx, segment)
}

// TestSequencedWriterAfterTruncation: the segment an earlier life wrote
// first is deleted by a truncation; the next life lists it as gone, and
// resending the whole log still writes nothing, since the successors hold
// higher numbers of the same keys.
func TestSequencedWriterAfterTruncation(t *testing.T) {
	d, c, ctx := streamX(t, 1)
	log := newAppLog(keysIn(0, 1, 6), 400)
	w := sequenced(t, c, ctx, "app")
	log.write(ctx, t, w, 0, 200)
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	split, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	log.write(ctx, t, w, 200, 400)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Controller.TruncateStream(ctx, "s", "x", api.StreamCut{split[0].Segment: 0, split[1].Segment: 0}); err != nil {
		t.Fatal(err)
	}
	first := protocol.SegmentName("s", "x", 0, 0)
	waitFor(t, "the first segment deleted", func() bool {
		_, err := d.Dial().GetSegmentInfo(ctx, first)
		return errors.Is(err, protocol.ErrNoSuchSegment)
	})
	w = sequenced(t, c, ctx, "app")
	if gone := w.GoneSegments(); len(gone) != 1 || gone[0] != first {
		t.Fatalf("GoneSegments = %v, want [%s]", gone, first)
	}
	if dups := log.write(ctx, t, w, 0, len(log.events)); dups != len(log.events) {
		t.Fatalf("resend after truncation: %d of %d skipped, want all", dups, len(log.events))
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
