package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/segclient"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// appender appends events straight into chosen segments (segclient), so
// the tests decide which segment holds what.
type appender struct {
	t    *testing.T
	conn *segclient.Conn
	next map[string]int64 // segment -> next event number
}

func newAppender(t *testing.T, d *clienttest.Deployment) *appender {
	return &appender{t: t, conn: d.Dial(), next: map[string]int64{}}
}

// add appends events to segment, one block; it returns the offset where
// the first begins.
func (a *appender) add(segment string, events ...string) int64 {
	a.t.Helper()
	ctx := context.Background()
	wid := "test-" + segment
	if _, ok := a.next[segment]; !ok {
		if _, err := a.conn.SetupAppend(ctx, wid, segment); err != nil {
			a.t.Fatalf("setup %s: %v", segment, err)
		}
	}
	var block []byte
	for _, e := range events {
		block = protocol.AppendEvent(block, []byte(e))
	}
	a.next[segment] += int64(len(events))
	r, err := a.conn.Append(ctx, wid, a.next[segment], int32(len(events)), block, protocol.NoExpectedOffset)
	if err != nil {
		a.t.Fatalf("append %s: %v", segment, err)
	}
	return r.CurrentOffset - int64(len(block))
}

func newTestClient(t *testing.T, d *clienttest.Deployment) *Client {
	t.Helper()
	c, err := New(context.Background(), "", WithController(d.Controller))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newTestReader(t *testing.T, c *Client, stream string, opts ...ReaderOption) *Reader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.NewReader(ctx, "sc", stream, append([]ReaderOption{withTailWait(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readN reads n events (10 s at most).
func readN(t *testing.T, r *Reader, n int) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []Event
	for len(out) < n {
		ev, err := r.ReadNext(ctx)
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(out), n, err)
		}
		out = append(out, ev)
	}
	return out
}

// expectNothing checks that no event arrives within a short wait.
func expectNothing(t *testing.T, r *Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if ev, err := r.ReadNext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadNext = %q, %v; want nothing", ev.Data, err)
	}
}

func data(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Data)
	}
	return out
}

func segName(stream string, n, epoch int64) string {
	return protocol.SegmentName("sc", stream, n, epoch)
}

// keyOrder checks that the events of each key ("key/i") come in order of
// i, and returns how many of each key there were.
func keyOrder(t *testing.T, evs []string) map[string]int {
	t.Helper()
	next := map[string]int{}
	for _, e := range evs {
		var key string
		var i int
		if _, err := fmt.Sscanf(e, "%1s/%d", &key, &i); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		if i != next[key] {
			t.Fatalf("key %s: event %d after %d events in %v", key, i, next[key], evs)
		}
		next[key]++
	}
	return next
}

func TestReaderReadsEverythingAndWaitsAtTail(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "st", 3)
	a := newAppender(t, d)
	for i := range 20 {
		for s, key := range []string{"a", "b", "c"} {
			a.add(segName("st", int64(s), 0), fmt.Sprintf("%s/%d", key, i))
		}
	}
	c := newTestClient(t, d)
	r := newTestReader(t, c, "st", WithReadBuffer(64)) // small reads: partial events get completed
	evs := readN(t, r, 60)
	if n := keyOrder(t, data(evs)); n["a"] != 20 || n["b"] != 20 || n["c"] != 20 {
		t.Fatalf("counts %v", n)
	}
	for _, e := range evs {
		want := map[string]string{"a": segName("st", 0, 0), "b": segName("st", 1, 0), "c": segName("st", 2, 0)}[string(e.Data[:1])]
		if e.Segment != want {
			t.Fatalf("event %q from %s, want %s", e.Data, e.Segment, want)
		}
	}

	// At the tail: ReadNext waits (several long polls) and returns what is
	// appended afterwards.
	expectNothing(t, r)
	got := make(chan Event, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ev, err := r.ReadNext(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- ev
	}()
	off := a.add(segName("st", 1, 0), "b/20")
	ev := <-got
	if string(ev.Data) != "b/20" || ev.Offset != off || ev.Segment != segName("st", 1, 0) {
		t.Fatalf("tail event %q at %s@%d, want b/20 at %d", ev.Data, ev.Segment, ev.Offset, off)
	}
	if p := r.Position(); p[segName("st", 1, 0)] != off+4+4 || !maps3(p, ev.Position.Cut()) {
		t.Fatalf("position %v, event position %v", p, ev.Position.Cut())
	}
}

func maps3(a, b api.StreamCut) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A split then a merge while the reader reads: each key's events come in
// write order, none lost or twice, and no successor's event comes before
// its predecessors' last.
func TestReaderFollowsSplitAndMerge(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "sp", 1)
	a := newAppender(t, d)
	ctx := context.Background()
	s0 := segName("sp", 0, 0)
	for i := range 10 {
		a.add(s0, fmt.Sprintf("x/%d", i), fmt.Sprintf("y/%d", i))
	}
	c := newTestClient(t, d)
	r := newTestReader(t, c, "sp")
	evs := readN(t, r, 5)

	if _, err := d.Controller.Scale(ctx, "sc", "sp", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s1, s2 := segName("sp", 1, 1), segName("sp", 2, 1)
	for i := 10; i < 20; i++ {
		a.add(s1, fmt.Sprintf("x/%d", i))
		a.add(s2, fmt.Sprintf("y/%d", i))
	}
	// s1 gets more: the reader ends s2 first and must wait for s1.
	for i := 20; i < 30; i++ {
		a.add(s1, fmt.Sprintf("x/%d", i))
	}
	evs = append(evs, readN(t, r, 15)...)
	if _, err := d.Controller.Scale(ctx, "sc", "sp", api.ScaleRequest{SealedSegments: []int64{1, 2},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s3 := segName("sp", 3, 2)
	for i := 20; i < 25; i++ {
		a.add(s3, fmt.Sprintf("y/%d", i))
	}
	for i := 30; i < 35; i++ {
		a.add(s3, fmt.Sprintf("x/%d", i))
	}
	evs = append(evs, readN(t, r, 20+20+10+10-20)...)
	expectNothing(t, r)
	if n := keyOrder(t, data(evs)); n["x"] != 35 || n["y"] != 25 {
		t.Fatalf("counts %v", n)
	}
	// Successors after all their predecessors' events.
	last := map[string]int{}
	first := map[string]int{}
	for i, e := range evs {
		last[e.Segment] = i
		if _, ok := first[e.Segment]; !ok {
			first[e.Segment] = i
		}
	}
	if first[s1] < last[s0] || first[s2] < last[s0] || first[s3] < last[s1] || first[s3] < last[s2] {
		t.Fatalf("successor read before a predecessor's end: first %v last %v", first, last)
	}
	if p := r.Position(); len(p) != 1 || p[s3] == 0 {
		t.Fatalf("position %v", p)
	}

	// A reader restarted from every event's position reads exactly the
	// events after it.
	for _, k := range []int{0, 4, 9, 19, 24, 29, 30, 39, 59} {
		cut := evs[k].Position.Cut()
		r2 := newTestReader(t, c, "sp", FromCut(cut))
		rest := readN(t, r2, len(evs)-k-1)
		if !slices.Equal(sorted(data(rest)), sorted(data(evs[k+1:]))) {
			t.Fatalf("from %v: got %v, want %v", cut, data(rest), data(evs[k+1:]))
		}
		keyOrderFrom(t, data(evs[:k+1]), data(rest))
		expectNothing(t, r2)
		r2.Close()
	}
}

// keyOrderFrom checks that rest continues each key of before in order.
func keyOrderFrom(t *testing.T, before, rest []string) {
	t.Helper()
	keyOrder(t, append(slices.Clone(before), rest...))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestReaderPositionRoundTrip(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "pr", 2)
	a := newAppender(t, d)
	for i := range 50 {
		a.add(segName("pr", int64(i%2), 0), fmt.Sprintf("%c/%d", 'a'+i%2, i/2))
	}
	c := newTestClient(t, d)
	r := newTestReader(t, c, "pr")
	first := readN(t, r, 25)
	pos := r.Position()
	if !maps3(pos, first[24].Position.Cut()) {
		t.Fatalf("Position %v != last event's %v", pos, first[24].Position.Cut())
	}
	// Through the text form, as the CLI passes it.
	parsed, err := api.ParseStreamCut(pos.String())
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r2 := newTestReader(t, c, "pr", FromCut(parsed))
	rest := readN(t, r2, 25)
	expectNothing(t, r2)
	all := append(data(first), data(rest)...)
	if n := keyOrder(t, all); n["a"] != 25 || n["b"] != 25 {
		t.Fatalf("counts %v in %v", n, all)
	}
}

func TestReaderFromTail(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "ta", 2)
	a := newAppender(t, d)
	a.add(segName("ta", 0, 0), "old/0", "old/1")
	a.add(segName("ta", 1, 0), "old/2")
	c := newTestClient(t, d)
	r := newTestReader(t, c, "ta", FromTail())
	expectNothing(t, r)
	a.add(segName("ta", 1, 0), "new/0")
	a.add(segName("ta", 0, 0), "new/1")
	if got := sorted(data(readN(t, r, 2))); !slices.Equal(got, []string{"new/0", "new/1"}) {
		t.Fatalf("got %v", got)
	}
}

func TestReaderTruncatedPastIt(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "tr", 1)
	a := newAppender(t, d)
	ctx := context.Background()
	s0 := segName("tr", 0, 0)
	var offs []int64
	for i := range 10 {
		offs = append(offs, a.add(s0, fmt.Sprintf("x/%d", i)))
	}
	c := newTestClient(t, d)

	// Truncated inside the segment the reader stands in.
	if err := d.Controller.TruncateStream(ctx, "sc", "tr", api.StreamCut{s0: offs[6]}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []Truncation
	onTrunc := WithTruncationFunc(func(tr Truncation) { mu.Lock(); seen = append(seen, tr); mu.Unlock() })
	r := newTestReader(t, c, "tr", FromCut(api.StreamCut{s0: offs[2]}), onTrunc)
	if got := data(readN(t, r, 4)); !slices.Equal(got, []string{"x/6", "x/7", "x/8", "x/9"}) {
		t.Fatalf("got %v", got)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0].Segment != s0 || seen[0].Offset != offs[2] || !maps3(seen[0].Head, api.StreamCut{s0: offs[6]}) {
		t.Fatalf("truncations %+v", seen)
	}
	seen = nil
	mu.Unlock()

	// Truncated past the whole segment: it is deleted, the reader goes to
	// the head cut's successors.
	if _, err := d.Controller.Scale(ctx, "sc", "tr", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s1, s2 := segName("tr", 1, 1), segName("tr", 2, 1)
	a.add(s1, "x/10", "x/11")
	o2 := a.add(s2, "y/0", "y/1")
	cut := api.StreamCut{s1: 0, s2: o2 + 4 + 3}
	if err := d.Controller.TruncateStream(ctx, "sc", "tr", cut); err != nil {
		t.Fatal(err)
	}
	r2 := newTestReader(t, c, "tr", FromCut(api.StreamCut{s0: offs[6]}), onTrunc)
	if got := sorted(data(readN(t, r2, 3))); !slices.Equal(got, []string{"x/10", "x/11", "y/1"}) {
		t.Fatalf("got %v", got)
	}
	expectNothing(t, r2)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Segment != s0 || !maps3(seen[0].Head, cut) {
		t.Fatalf("truncations %+v", seen)
	}
	if p := r2.Position(); len(p) != 2 || p[s1] == 0 || p[s2] == 0 {
		t.Fatalf("position %v", p)
	}
}

func TestReaderEndOfSealedStream(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "se", 2)
	a := newAppender(t, d)
	a.add(segName("se", 0, 0), "a/0")
	a.add(segName("se", 1, 0), "b/0")
	if err := d.Controller.SealStream(context.Background(), "sc", "se"); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, d)
	r := newTestReader(t, c, "se")
	readN(t, r, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.ReadNext(ctx); !errors.Is(err, ErrEndOfStream) {
		t.Fatalf("ReadNext at the end = %v, want ErrEndOfStream", err)
	}
}

func TestReaderCloseEndsReadNext(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "cl", 1)
	c := newTestClient(t, d)
	r := newTestReader(t, c, "cl")
	errc := make(chan error, 1)
	go func() {
		_, err := r.ReadNext(context.Background())
		errc <- err
	}()
	r.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadNext after Close = %v", err)
	}
}

func TestNewReaderRefusesBadCuts(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "bc", 2)
	d.CreateStream("sc", "other", 1)
	c := newTestClient(t, d)
	ctx := context.Background()
	for _, cut := range []api.StreamCut{
		{},
		{segName("other", 0, 0): 0},
		{segName("bc", 0, 0): 0}, // does not cover the key space
		{segName("bc", 0, 0): -1, segName("bc", 1, 0): 0},
	} {
		if r, err := c.NewReader(ctx, "sc", "bc", FromCut(cut)); err == nil {
			r.Close()
			t.Errorf("cut %v accepted", cut)
		}
	}
	if _, err := c.NewReader(ctx, "sc", "missing"); err == nil {
		t.Error("reader of a missing stream")
	}
}

// The node stops and starts again while a reader waits at the tail: the
// reader reconnects and returns what is appended afterwards.
func TestReaderReconnects(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "rc", 1)
	s0 := segName("rc", 0, 0)
	a := newAppender(t, d)
	a.add(s0, "x/0")
	c := newTestClient(t, d)
	r := newTestReader(t, c, "rc")
	readN(t, r, 1)
	expectNothing(t, r) // a tail read is in flight now
	d.StopNode()
	expectNothing(t, r) // failing and retrying inside, with backoff
	d.StartNode()
	a2 := newAppender(t, d)
	a2.next[s0] = 1
	if _, err := a2.conn.SetupAppend(context.Background(), "test-"+s0, s0); err != nil {
		t.Fatal(err)
	}
	a2.add(s0, "x/1")
	if got := data(readN(t, r, 1)); !slices.Equal(got, []string{"x/1"}) {
		t.Fatalf("got %v", got)
	}
}
