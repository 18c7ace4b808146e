package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// sliceStream writes stream sc/bs: two segments in epoch 0 (keys x and
// y), then a split of segment 0 into 2 (key x goes on) and 3 (key w),
// while segment 1 (key y) goes on. It reads the whole stream once with a
// plain reader and returns the events in the order read; each event's
// Position is the cut just after it.
func sliceStream(t *testing.T) (*clienttest.Deployment, *Client, []Event) {
	t.Helper()
	d := clienttest.Start(t)
	d.CreateStream("sc", "bs", 2)
	a := newAppender(t, d)
	s0, s1 := segName("bs", 0, 0), segName("bs", 1, 0)
	for i := range 10 {
		a.add(s0, fmt.Sprintf("x/%d", i))
		a.add(s1, fmt.Sprintf("y/%d", i))
	}
	if _, err := d.Controller.Scale(context.Background(), "sc", "bs", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.25}, {Low: 0.25, High: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	s2, s3 := segName("bs", 2, 1), segName("bs", 3, 1)
	for i := 10; i < 20; i++ {
		a.add(s2, fmt.Sprintf("x/%d", i))
		a.add(s1, fmt.Sprintf("y/%d", i))
		a.add(s3, fmt.Sprintf("w/%d", i-10))
	}
	c := newTestClient(t, d)
	all := readN(t, newTestReader(t, c, "bs"), 50)
	return d, c, all
}

// sliceCuts picks a start cut in epoch 0 (after the third event of key x,
// segment 0 still being read) and an end cut in epoch 1 (after x/15:
// segments 1, 2 and 3, with events of 1 and 2 after it), and returns
// their indexes in all.
func sliceCuts(t *testing.T, all []Event) (k, j int) {
	t.Helper()
	k, j = -1, -1
	for i, e := range all {
		switch string(e.Data) {
		case "x/2":
			k = i
		case "x/15":
			j = i
		}
	}
	start, end := all[k].Position.Cut(), all[j].Position.Cut()
	if _, ok := start[segName("bs", 0, 0)]; !ok || k >= j {
		t.Fatalf("start cut %v (index %d) is not in epoch 0 before the end (index %d)", start, k, j)
	}
	for _, s := range []string{segName("bs", 1, 0), segName("bs", 2, 1), segName("bs", 3, 1)} {
		if _, ok := end[s]; !ok {
			t.Fatalf("end cut %v lacks %s", end, s)
		}
	}
	return k, j
}

// TestReaderBoundedSliceAcrossScale: a reader from a cut in epoch 0 to a
// cut in epoch 1 returns exactly the events between them, in order per
// key, then ErrEndOfSlice, also after more events are written; its
// position is then the end cut.
func TestReaderBoundedSliceAcrossScale(t *testing.T) {
	d, c, all := sliceStream(t)
	k, j := sliceCuts(t, all)
	start, end := all[k].Position.Cut(), all[j].Position.Cut()

	r := newTestReader(t, c, "bs", FromCut(start), ToCut(end))
	got, err := readToEnd(r.ReadNext)
	if !errors.Is(err, ErrEndOfSlice) || !errors.Is(err, ErrEndOfStream) {
		t.Fatalf("after %d events: %v, want ErrEndOfSlice", len(got), err)
	}
	want := data(all[k+1 : j+1])
	if !slices.Equal(sorted(data(got)), sorted(want)) {
		t.Fatalf("slice read %v, want %v", data(got), want)
	}
	keyOrderFrom(t, data(all[:k+1]), data(got))
	if p := r.Position(); !maps.Equal(p, end) {
		t.Fatalf("position at the end %v, want the end cut %v", p, end)
	}
	// More events after the end cut change nothing.
	a := newAppender(t, d)
	a.add(segName("bs", 1, 0), "y/20")
	a.add(segName("bs", 2, 1), "x/20")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ev, err := r.ReadNext(ctx); !errors.Is(err, ErrEndOfSlice) {
		t.Fatalf("after the end: %q, %v", ev.Data, err)
	}

	// The whole stream up to the end cut, from the head.
	r = newTestReader(t, c, "bs", ToCut(end))
	got, err = readToEnd(r.ReadNext)
	if !errors.Is(err, ErrEndOfSlice) || !slices.Equal(sorted(data(got)), sorted(data(all[:j+1]))) {
		t.Fatalf("head to end: %v, %v", data(got), err)
	}
	// An empty slice: start = end.
	r = newTestReader(t, c, "bs", FromCut(end), ToCut(end))
	if got, err = readToEnd(r.ReadNext); !errors.Is(err, ErrEndOfSlice) || len(got) != 0 {
		t.Fatalf("empty slice: %v, %v", data(got), err)
	}
}

// TestReaderBoundedSliceBadEnds: an end cut before the start, of another
// stream, or not consistent is refused by NewReader with one error; an
// end offset inside an event fails ReadNext there (wrapping
// protocol.ErrNotEventBoundary), after the events before it.
func TestReaderBoundedSliceBadEnds(t *testing.T) {
	d, c, all := sliceStream(t)
	k, j := sliceCuts(t, all)
	start, end := all[k].Position.Cut(), all[j].Position.Cut()
	d.CreateStream("sc", "other", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, tc := range map[string]struct{ from, to api.StreamCut }{
		"end before start":  {end, start},
		"another stream":    {start, api.StreamCut{segName("other", 0, 0): 0}},
		"not consistent":    {start, api.StreamCut{segName("bs", 2, 1): 0}},
		"empty":             {start, api.StreamCut{}},
		"epoch 0 over both": {start, api.StreamCut{segName("bs", 0, 0): 0, segName("bs", 1, 0): 0, segName("bs", 2, 1): 0}},
	} {
		r, err := c.NewReader(ctx, "sc", "bs", FromCut(tc.from), ToCut(tc.to))
		if err == nil {
			r.Close()
			t.Fatalf("%s: NewReader from %v to %v succeeded", name, tc.from, tc.to)
		}
		t.Logf("%s: %v", name, err)
	}

	// An end offset one byte into x/15, the last event before the end
	// cut, in segment 2.
	s2 := segName("bs", 2, 1)
	inside := all[j]
	if inside.Segment != s2 {
		t.Fatalf("x/15 is in %s", inside.Segment)
	}
	bad := maps.Clone(end)
	bad[s2] = inside.Offset + 1
	r := newTestReader(t, c, "bs", FromCut(start), ToCut(bad))
	got, err := readToEnd(r.ReadNext)
	if !errors.Is(err, protocol.ErrNotEventBoundary) {
		t.Fatalf("end inside an event: after %v: %v", data(got), err)
	}
	for _, e := range got {
		if e.Segment == s2 && e.Offset >= inside.Offset {
			t.Fatalf("returned %q at %d, at or after the bad end offset's event", e.Data, e.Offset)
		}
	}
	// The error stays: the reader does not skip past it.
	if _, err := r.ReadNext(ctx); !errors.Is(err, protocol.ErrNotEventBoundary) {
		t.Fatalf("second call: %v", err)
	}
}

// readToEnd calls next until it fails (10 s at most) and returns the
// events and the error.
func readToEnd(next func(context.Context) (Event, error)) ([]Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []Event
	for {
		ev, err := next(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// groupRun reads with group readers in goroutines, each until its
// ReadNext fails, recording every event (checkpoint events too) in one
// sequence.
type groupRun struct {
	t    *testing.T
	mu   sync.Mutex
	evs  []groupEvent
	ends map[string]error
	wg   sync.WaitGroup
}

func newGroupRun(t *testing.T) *groupRun {
	g := &groupRun{t: t, ends: map[string]error{}}
	t.Cleanup(g.wg.Wait)
	return g
}

func (g *groupRun) run(ctx context.Context, gr *GroupReader) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			ev, err := gr.ReadNext(ctx)
			g.mu.Lock()
			if err != nil {
				g.ends[gr.ID()] = err
				g.mu.Unlock()
				return
			}
			g.evs = append(g.evs, groupEvent{reader: gr.ID(), seq: len(g.evs), Event: ev})
			g.mu.Unlock()
		}
	}()
}

// events returns the data events and the checkpoint events so far.
func (g *groupRun) events() (evs, ckpts []groupEvent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.evs {
		if e.IsCheckpoint() {
			ckpts = append(ckpts, e)
		} else {
			evs = append(evs, e)
		}
	}
	return evs, ckpts
}

func (g *groupRun) ended() map[string]error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.ends)
}

// TestGroupBoundedSliceAcrossScale: a group of three readers from a cut
// in epoch 0 to a cut in epoch 1 (GroupTo) reads exactly the events
// between them, each once, in order per key, and every reader ends with
// ErrEndOfSlice.
func TestGroupBoundedSliceAcrossScale(t *testing.T) {
	_, c, all := sliceStream(t)
	k, j := sliceCuts(t, all)
	start, end := all[k].Position.Cut(), all[j].Position.Cut()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.NewReaderGroup(ctx, "sc", "bg", "bs", GroupFrom(FromCut(start)), GroupTo(end)); err != nil {
		t.Fatal(err)
	}
	fast := []GroupOption{WithCommitInterval(20 * time.Millisecond), WithGroupReaderOptions(withTailWait(200 * time.Millisecond))}
	run := newGroupRun(t)
	for _, id := range []string{"a", "b", "c"} {
		run.run(ctx, joinTest(t, c, "bg", id, fast...))
	}
	waitFor(t, "three readers to end", func() bool { return len(run.ended()) == 3 })
	for id, err := range run.ended() {
		if !errors.Is(err, ErrEndOfSlice) {
			t.Fatalf("reader %s ended with %v, want ErrEndOfSlice", id, err)
		}
	}
	evs, _ := run.events()
	if _, dups := distinct(evs); len(dups) > 0 {
		t.Fatalf("read twice: %v", dups)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Data))
	}
	if want := data(all[k+1 : j+1]); !slices.Equal(sorted(got), sorted(want)) {
		t.Fatalf("group read %v, want %v", got, want)
	}
	keyOrderFrom(t, data(all[:k+1]), got) // evs are in the order returned
	if s := groupState(t, &ReaderGroup{c: c, store: c.ctl.(GroupStore), scope: "sc", name: "bg"}); !maps.Equal(s.Position(), end) || !maps.Equal(s.EndCut, end) {
		t.Fatalf("group position %v, end cut %v; want both %v", s.Position(), s.EndCut, end)
	}
	// A group with an end cut before its start is refused.
	if _, err := c.NewReaderGroup(ctx, "sc", "bad", "bs", GroupFrom(FromCut(end)), GroupTo(start)); err == nil {
		t.Fatal("group from the end cut to the start cut created")
	}
}
