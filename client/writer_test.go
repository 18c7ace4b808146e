package client_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

func newClient(t *testing.T, d *clienttest.Deployment) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), d.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkPerKey reads the given segments in order (predecessors before
// successors) and checks that, per key, the events "key:seq" are exactly
// 0..want[key]-1 in order. It returns the events per segment.
func checkPerKey(t *testing.T, d *clienttest.Deployment, segments []string, want map[string]int) {
	t.Helper()
	conn := d.Dial()
	next := map[string]int{}
	for _, seg := range segments {
		for _, ev := range d.ReadAll(conn, seg) {
			key, seqText, ok := strings.Cut(string(ev), ":")
			seq, err := strconv.Atoi(seqText)
			if !ok || err != nil {
				t.Fatalf("segment %s: bad event %q", seg, ev)
			}
			if seq != next[key] {
				t.Fatalf("segment %s: key %s: event %d where %d was due (lost, duplicated or reordered)", seg, key, seq, next[key])
			}
			next[key]++
		}
	}
	for key, n := range want {
		if next[key] != n {
			t.Errorf("key %s: read %d events, wrote %d", key, next[key], n)
		}
	}
	if len(next) != len(want) {
		t.Errorf("read %d keys, wrote %d", len(next), len(want))
	}
}

func segmentNames(t *testing.T, d *clienttest.Deployment, scope, stream string) []string {
	t.Helper()
	segs, err := d.Controller.CurrentSegments(context.Background(), scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range segs {
		names = append(names, s.Segment)
	}
	return names
}

func TestWriterManyWritersManyKeys(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 4)
	c := newClient(t, d)
	ctx := testCtx(t)
	const writers, keys, perKey = 4, 50, 40
	want := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		for k := range keys {
			want[fmt.Sprintf("w%d-k%d", i, k)] = perKey
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := c.NewWriter(ctx, "s", "x", client.WithMaxBatch(4<<10))
			if err != nil {
				errs <- err
				return
			}
			var acks []*client.Ack
			for seq := range perKey {
				for k := range keys {
					key := fmt.Sprintf("w%d-k%d", i, k)
					a, err := w.Write(ctx, key, fmt.Appendf(nil, "%s:%d", key, seq))
					if err != nil {
						errs <- err
						return
					}
					acks = append(acks, a)
				}
			}
			if err := w.Close(ctx); err != nil {
				errs <- err
				return
			}
			for _, a := range acks {
				if err := a.Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	segs := segmentNames(t, d, "s", "x")
	checkPerKey(t, d, segs, want)
	// Each key lives in the segment whose range holds its hash.
	ranges, _ := d.Controller.CurrentSegments(ctx, "s", "x")
	conn := d.Dial()
	for _, r := range ranges {
		for _, ev := range d.ReadAll(conn, r.Segment) {
			key, _, _ := strings.Cut(string(ev), ":")
			if h := protocol.KeyHash(key); h < r.KeyLow || h >= r.KeyHigh {
				t.Fatalf("key %s (hash %v) in %s [%v,%v)", key, h, r.Segment, r.KeyLow, r.KeyHigh)
			}
		}
	}
}

// writeLoop writes "key:seq" round the keys until stop is closed, and
// returns how many events it wrote per key.
func writeLoop(ctx context.Context, t *testing.T, w *client.Writer, keys int, written *atomic.Int64, stop <-chan struct{}) (map[string]int, error) {
	counts := map[string]int{}
	for {
		for k := range keys {
			select {
			case <-stop:
				return counts, nil
			default:
			}
			key := fmt.Sprintf("k%d", k)
			if _, err := w.Write(ctx, key, fmt.Appendf(nil, "%s:%d", key, counts[key])); err != nil {
				return counts, err
			}
			counts[key]++
			written.Add(1)
		}
	}
}

// waitFor polls cond every few milliseconds for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // bounded polling of a condition
	}
}

func TestWriterAcrossScale(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 2)
	c := newClient(t, d)
	ctx := testCtx(t)
	var sealed atomic.Int64
	w, err := c.NewWriter(ctx, "s", "x", client.WithMaxBatch(8<<10), client.WithMaxInflight(64<<10),
		client.WithStateFunc(func(sc client.StateChange) {
			if sc.State == client.StateSealed {
				sealed.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	stop := make(chan struct{})
	type result struct {
		counts map[string]int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		counts, err := writeLoop(ctx, t, w, 30, &written, stop)
		done <- result{counts, err}
	}()
	progress := func(n int64) {
		at := written.Load()
		waitFor(t, "the writer to write", func() bool { return written.Load() >= at+n })
	}
	progress(2000)
	info := d.Dial()
	hasData := func(seg string) func() bool {
		return func() bool {
			i, err := info.GetSegmentInfo(ctx, seg)
			return err == nil && i.Length > 0
		}
	}
	// Both first segments must hold acknowledged events before the split,
	// or all of segment 0's events could rightly move to its successors.
	waitFor(t, "events in both first segments", func() bool {
		return hasData(protocol.SegmentName("s", "x", 0, 0))() && hasData(protocol.SegmentName("s", "x", 1, 0))()
	})
	// Split segment 0 ([0, 0.5)) in two.
	split, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	progress(2000)
	waitFor(t, "events in both halves of the split", func() bool { return hasData(split[0].Segment)() && hasData(split[1].Segment)() })
	// Merge [0.25, 0.5) with segment 1 ([0.5, 1)).
	merged, err := d.Controller.Scale(ctx, "s", "x", api.ScaleRequest{SealedSegments: []int64{split[1].Number, 1},
		NewRanges: []api.KeyRange{{Low: 0.25, High: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	progress(2000)
	waitFor(t, "events in the merged segment", hasData(merged[0].Segment))
	close(stop)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Predecessors first, then successors.
	order := []string{
		protocol.SegmentName("s", "x", 0, 0), protocol.SegmentName("s", "x", 1, 0),
		split[0].Segment, split[1].Segment, merged[0].Segment,
	}
	checkPerKey(t, d, order, r.counts)
	// The writer did meet the seals: 0 by the split, then both merged.
	if n := sealed.Load(); n < 3 {
		t.Errorf("the writer saw %d sealed segments, want 3", n)
	}
	conn := d.Dial()
	for _, seg := range order {
		if len(d.ReadAll(conn, seg)) == 0 {
			t.Errorf("segment %s is empty: the test did not write across the scale", seg)
		}
	}
}

func TestWriterReconnect(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 2)
	c := newClient(t, d)
	ctx := testCtx(t)
	var disconnected, reconnected atomic.Int64
	w, err := c.NewWriter(ctx, "s", "x", client.WithBackoff(time.Millisecond, 50*time.Millisecond),
		client.WithStateFunc(func(sc client.StateChange) {
			switch sc.State {
			case client.StateDisconnected:
				disconnected.Add(1)
			case client.StateConnected:
				if disconnected.Load() > 0 {
					reconnected.Add(1)
				}
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	stop := make(chan struct{})
	type result struct {
		counts map[string]int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		counts, err := writeLoop(ctx, t, w, 20, &written, stop)
		done <- result{counts, err}
	}()
	waitFor(t, "writes", func() bool { return written.Load() > 3000 })
	d.StopNode()
	waitFor(t, "the writer to see the node go", func() bool { return disconnected.Load() > 0 })
	d.StartNode()
	waitFor(t, "the writer to reconnect", func() bool { return reconnected.Load() > 0 })
	at := written.Load()
	waitFor(t, "writes after the restart", func() bool { return written.Load() > at+3000 })
	close(stop)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkPerKey(t, d, segmentNames(t, d, "s", "x"), r.counts)
}

func TestWriterEventTooLarge(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	a, err := w.Write(ctx, "k", make([]byte, protocol.MaxEventSize+1))
	if !errors.Is(err, protocol.ErrEventTooLarge) || a != nil {
		t.Fatalf("Write of 8 MiB + 1: %v, %v; want ErrEventTooLarge", a, err)
	}
	a, err = w.Write(ctx, "k", []byte("k:0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Exactly 8 MiB is allowed.
	if a, err = w.Write(ctx, "big", make([]byte, protocol.MaxEventSize)); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	conn := d.Dial()
	evs := d.ReadAll(conn, protocol.SegmentName("s", "x", 0, 0))
	if len(evs) != 2 || string(evs[0]) != "k:0" || len(evs[1]) != protocol.MaxEventSize {
		t.Fatalf("segment holds %d events", len(evs))
	}
}

func TestNewWriterUnknownStream(t *testing.T) {
	d := clienttest.Start(t)
	c := newClient(t, d)
	if _, err := c.NewWriter(testCtx(t), "nope", "x"); err == nil {
		t.Fatal("NewWriter of a missing stream succeeded")
	}
}

// TestWriterBlockBoundaries writes events of mixed sizes, some over
// MaxBatch, so that blocks fill, overflow and grow, and checks that the
// segment holds each event once, whole and in order.
func TestWriterBlockBoundaries(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "x", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "x", client.WithMaxBatch(4<<10), client.WithMaxInflight(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 100, 4092, 4096, 10000, 3000, 0, 70000, 17}
	var want [][]byte
	var acks []*client.Ack
	for i := 0; i < 600; i++ {
		ev := []byte(fmt.Sprintf("%d:", i))
		for len(ev) < sizes[i%len(sizes)] {
			ev = append(ev, byte('a'+i%26))
		}
		want = append(want, ev)
		a, err := w.Write(ctx, "", ev)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a)
	}
	for i, a := range acks {
		if err := a.Wait(ctx); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := d.ReadAll(d.Dial(), protocol.SegmentName("s", "x", 0, 0))
	if len(got) != len(want) {
		t.Fatalf("segment holds %d events, wrote %d", len(got), len(want))
	}
	for i := range want {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("event %d: got %d bytes %.20q, want %d bytes %.20q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// TestFlushReportsEarlierFailures: Flush returns the failure of an event
// written before it was called even when that event had already failed
// when Flush was called (the segment was deleted under the writer), and
// so does a Write to the failed segment afterwards. It used to look only
// at events still unsettled, and return nil.
func TestFlushReportsEarlierFailures(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("s", "gone", 1)
	c := newClient(t, d)
	ctx := testCtx(t)
	w, err := c.NewWriter(ctx, "s", "gone")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	a, err := w.Write(ctx, "k", []byte("stored"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush after every event was stored: %v", err)
	}
	conn := d.Dial()
	if err := conn.DeleteSegment(ctx, protocol.SegmentName("s", "gone", 0, 0)); err != nil {
		t.Fatal(err)
	}
	b, err := w.Write(ctx, "k", []byte("lost"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(ctx); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("event written to a deleted segment: %v, want ErrNoSuchSegment", err)
	}
	if err := w.Flush(ctx); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("Flush after an event failed: %v, want its ErrNoSuchSegment", err)
	}
	if _, err := w.Write(ctx, "k", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("Flush after a write to the failed segment: %v, want ErrNoSuchSegment", err)
	}
}
