package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// groupEvent is an event some reader of a group returned, numbered in the
// order the readers returned them.
type groupEvent struct {
	reader string
	seq    int
	Event
}

// collector runs group readers in goroutines and gathers their events.
type collector struct {
	t    *testing.T
	mu   sync.Mutex
	evs  []groupEvent
	errs []error
	wg   sync.WaitGroup
}

// run reads with gr until ctx is done or the group ends.
func (c *collector) run(ctx context.Context, gr *GroupReader) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			ev, err := gr.ReadNext(ctx)
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, ErrEndOfStream) && !errors.Is(err, ErrClosed) {
					c.mu.Lock()
					c.errs = append(c.errs, err)
					c.mu.Unlock()
				}
				return
			}
			if ev.IsCheckpoint() {
				continue // checkpoint events: group_checkpoint_test.go
			}
			c.mu.Lock()
			c.evs = append(c.evs, groupEvent{reader: gr.ID(), seq: len(c.evs), Event: ev})
			c.mu.Unlock()
		}
	}()
}

func (c *collector) events() []groupEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) > 0 {
		c.t.Fatalf("reader failed: %v", c.errs)
	}
	return append([]groupEvent(nil), c.evs...)
}

// waitFor polls cond (bounded) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not synchronisation
	}
}

// distinct returns the events by (segment, offset), and the duplicates.
func distinct(evs []groupEvent) (map[string]groupEvent, []groupEvent) {
	seen := map[string]groupEvent{}
	var dups []groupEvent
	for _, e := range evs {
		k := fmt.Sprintf("%s@%d", e.Segment, e.Offset)
		if _, ok := seen[k]; ok {
			dups = append(dups, e)
			continue
		}
		seen[k] = e
	}
	return seen, dups
}

func joinTest(t *testing.T, c *Client, group, id string, opts ...GroupOption) *GroupReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gr, err := c.JoinReaderGroup(ctx, "sc", group, id, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gr.Close(context.Background()) })
	return gr
}

func groupState(t *testing.T, g *ReaderGroup) *GroupState {
	t.Helper()
	s, _, _, err := g.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func held(s *GroupState, id string) int {
	if m := s.Readers[id]; m != nil {
		return len(m.Segments)
	}
	return -1
}

// fourSegments starts a deployment with stream sc/gs of 4 segments.
func fourSegments(t *testing.T) (*clienttest.Deployment, *Client, []string) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "gs", 4)
	segs := []string{segName("gs", 0, 0), segName("gs", 1, 0), segName("gs", 2, 0), segName("gs", 3, 0)}
	return d, newTestClient(t, d), segs
}

func TestGroupTwoReadersShareSegments(t *testing.T) {
	d, c, segs := fourSegments(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "g", "gs")
	if err != nil {
		t.Fatal(err)
	}
	fast := WithCommitInterval(20 * time.Millisecond)
	a := joinTest(t, c, "g", "a", fast)
	if s := groupState(t, g); held(s, "a") != 4 {
		t.Fatalf("a alone holds %d segments, want 4", held(s, "a"))
	}
	b := joinTest(t, c, "g", "b", fast)
	col := &collector{t: t}
	col.run(ctx, a)
	col.run(ctx, b)
	waitFor(t, "a and b to hold 2 segments each", func() bool {
		s := groupState(t, g)
		return held(s, "a") == 2 && held(s, "b") == 2
	})
	s := groupState(t, g)
	owner := map[string]string{}
	for id, m := range s.Readers {
		for seg := range m.Segments {
			owner[seg] = id
		}
	}
	ap := newAppender(t, d)
	for i := range 50 {
		for k, seg := range segs {
			ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, i))
		}
	}
	waitFor(t, "200 events", func() bool { return len(col.events()) >= 200 })
	evs := col.events()
	seen, dups := distinct(evs)
	if len(dups) > 0 || len(seen) != 200 {
		t.Fatalf("%d distinct events, duplicates %v", len(seen), dups)
	}
	for _, e := range evs {
		if owner[e.Segment] != e.reader {
			t.Fatalf("event of %s read by %s, but %s holds it", e.Segment, e.reader, owner[e.Segment])
		}
	}
	var ds []string
	for _, e := range evs {
		ds = append(ds, string(e.Data))
	}
	if n := keyOrder(t, ds); len(n) != 4 || n["a"] != 50 || n["d"] != 50 {
		t.Fatalf("counts %v", n)
	}

	// b leaves: a takes its segments at b's exact positions.
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a to hold all 4", func() bool { return held(groupState(t, g), "a") == 4 })
	for k, seg := range segs {
		ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, 50))
	}
	waitFor(t, "204 events", func() bool { return len(col.events()) >= 204 })
	if seen, dups := distinct(col.events()); len(dups) > 0 || len(seen) != 204 {
		t.Fatalf("after b left: %d distinct, duplicates %v", len(seen), dups)
	}
}

func TestGroupReaderKilledSegmentsTakenFromLastCommit(t *testing.T) {
	d, c, segs := fourSegments(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "g", "gs")
	if err != nil {
		t.Fatal(err)
	}
	// a commits rarely, so that it reads events after its last commit.
	// The session timeout leaves a heartbeat of a's 1.7 s to be late on a
	// busy machine before a is expired while still alive.
	timeout := WithSessionTimeout(2 * time.Second)
	a := joinTest(t, c, "g", "a", WithCommitInterval(300*time.Millisecond), timeout)
	b := joinTest(t, c, "g", "b", WithCommitInterval(20*time.Millisecond), timeout)
	waitFor(t, "a and b to hold 2 segments each", func() bool {
		s := groupState(t, g)
		return held(s, "a") == 2 && held(s, "b") == 2
	})
	ap := newAppender(t, d)
	for i := range 30 {
		for k, seg := range segs {
			ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, i))
		}
	}
	// a reads 40 of its 60 events, in two rounds with a commit between.
	var aEvs []Event
	readA := func(n int) {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		for range n {
			ev, err := a.ReadNext(rctx)
			if err != nil {
				t.Fatal(err)
			}
			aEvs = append(aEvs, ev)
		}
	}
	readA(20)
	committed := func() int64 {
		var sum int64
		for _, off := range groupState(t, g).Readers["a"].Segments {
			sum += off
		}
		return sum
	}
	waitFor(t, "a to commit", func() bool { return committed() > 0 })
	readA(20)
	// a's last commit lies between what the state shows now and a's read
	// position: a heartbeat in flight when a is killed may still land
	// (its request is cancelled, but the controller may have taken it).
	shown := groupState(t, g).Readers["a"].Segments
	if shown == nil {
		t.Fatal("a expired while alive")
	}
	read := a.Position()
	a.stop() // killed: no leave, no more heartbeats

	col := &collector{t: t}
	for _, e := range aEvs {
		col.evs = append(col.evs, groupEvent{reader: "a", seq: len(col.evs), Event: e})
	}
	col.run(ctx, b)
	waitFor(t, "every event", func() bool { seen, _ := distinct(col.events()); return len(seen) == 120 })
	waitFor(t, "a expired", func() bool { _, ok := groupState(t, g).Readers["a"]; return !ok })
	// b took each of a's segments at a's last commit: where b's events
	// in it begin, or a's read position if b read none there (a had read
	// and committed all of it; an earlier commit would have left b some).
	last := api.StreamCut{}
	for _, e := range col.events() {
		if _, ok := shown[e.Segment]; ok && e.reader == "b" {
			if off, ok := last[e.Segment]; !ok || e.Offset < off {
				last[e.Segment] = e.Offset
			}
		}
	}
	for seg, off := range shown {
		if _, ok := last[seg]; !ok {
			last[seg] = read[seg]
		}
		if l := last[seg]; l < off || l > read[seg] {
			t.Fatalf("b took %s at %d, want a commit of a's in [%d, %d]", seg, l, off, read[seg])
		}
	}
	var want []string // a's events after its last commit: read again by b
	for _, e := range aEvs {
		if off, ok := last[e.Segment]; ok && e.Offset >= off {
			want = append(want, fmt.Sprintf("%s@%d", e.Segment, e.Offset))
		}
	}
	_, dups := distinct(col.events())
	var got []string
	for _, e := range dups {
		got = append(got, fmt.Sprintf("%s@%d", e.Segment, e.Offset))
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read twice %v, want exactly a's events after its last commit %v", got, want)
	}
	if len(want) == 0 {
		t.Log("a committed everything it read before it was killed: no duplicates")
	}
}

func TestGroupAcrossScaleSuccessorsAfterPredecessors(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "sp", 1)
	c := newTestClient(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.NewReaderGroup(ctx, "sc", "g", "sp"); err != nil {
		t.Fatal(err)
	}
	fast := WithCommitInterval(20 * time.Millisecond)
	a := joinTest(t, c, "g", "a", fast)
	b := joinTest(t, c, "g", "b", fast)
	ap := newAppender(t, d)
	s0 := segName("sp", 0, 0)
	for i := range 10 {
		ap.add(s0, fmt.Sprintf("x/%d", i), fmt.Sprintf("y/%d", i))
	}
	if _, err := d.Controller.Scale(ctx, "sc", "sp", api.ScaleRequest{SealedSegments: []int64{0},
		NewRanges: []api.KeyRange{{Low: 0, High: 0.5}, {Low: 0.5, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s1, s2 := segName("sp", 1, 1), segName("sp", 2, 1)
	for i := 10; i < 20; i++ {
		ap.add(s1, fmt.Sprintf("x/%d", i))
		ap.add(s2, fmt.Sprintf("y/%d", i))
	}
	for i := 20; i < 30; i++ {
		ap.add(s1, fmt.Sprintf("x/%d", i))
	}
	if _, err := d.Controller.Scale(ctx, "sc", "sp", api.ScaleRequest{SealedSegments: []int64{1, 2},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s3 := segName("sp", 3, 2)
	for i := 20; i < 25; i++ {
		ap.add(s3, fmt.Sprintf("y/%d", i))
	}
	for i := 30; i < 35; i++ {
		ap.add(s3, fmt.Sprintf("x/%d", i))
	}
	if err := d.Controller.SealStream(ctx, "sc", "sp"); err != nil {
		t.Fatal(err)
	}
	col := &collector{t: t}
	col.run(ctx, a)
	col.run(ctx, b)
	col.wg.Wait() // both end with ErrEndOfStream
	evs := col.events()
	var ds []string
	for _, e := range evs {
		ds = append(ds, string(e.Data))
	}
	if n := keyOrder(t, ds); n["x"] != 35 || n["y"] != 25 {
		t.Fatalf("counts %v", n)
	}
	lastOf := map[string]int{}
	firstOf := map[string]int{}
	for _, e := range evs {
		if _, ok := firstOf[e.Segment]; !ok {
			firstOf[e.Segment] = e.seq
		}
		lastOf[e.Segment] = e.seq
	}
	for _, p := range [][2]string{{s0, s1}, {s0, s2}, {s1, s3}, {s2, s3}} {
		if firstOf[p[1]] < lastOf[p[0]] {
			t.Fatalf("%s read (from event %d) before %s was read (its last: %d)", p[1], firstOf[p[1]], p[0], lastOf[p[0]])
		}
	}
}

func TestGroupCheckpointAndNewGroupFromIt(t *testing.T) {
	d, c, segs := fourSegments(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "g", "gs")
	if err != nil {
		t.Fatal(err)
	}
	fast := WithCommitInterval(20 * time.Millisecond)
	a := joinTest(t, c, "g", "a", fast)
	b := joinTest(t, c, "g", "b", fast)
	ap := newAppender(t, d)
	for i := range 10 {
		for k, seg := range segs {
			ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, i))
		}
	}
	col := &collector{t: t}
	col.run(ctx, a)
	col.run(ctx, b)
	waitFor(t, "40 events", func() bool { return len(col.events()) >= 40 })
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	cut, err := g.InitiateCheckpoint(cctx, "cp1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cut) != 4 {
		t.Fatalf("checkpoint cut %v", cut)
	}
	if _, err := g.InitiateCheckpoint(cctx, "cp1"); !errors.Is(err, api.ErrInvalid) {
		t.Fatalf("second checkpoint of the same name: %v", err)
	}
	for i := 10; i < 15; i++ {
		for k, seg := range segs {
			ap.add(seg, fmt.Sprintf("%c/%d", 'a'+k, i))
		}
	}
	// A new group from the checkpoint reads exactly what follows it.
	if _, err := c.NewReaderGroup(ctx, "sc", "g2", "gs", GroupFrom(FromCut(cut))); err != nil {
		t.Fatal(err)
	}
	r := joinTest(t, c, "g2", "r", fast)
	col2 := &collector{t: t}
	col2.run(ctx, r)
	waitFor(t, "20 events", func() bool { return len(col2.events()) >= 20 })
	var ds []string
	for _, e := range col2.events() {
		ds = append(ds, string(e.Data))
	}
	sort.Strings(ds)
	for _, s := range ds {
		var key string
		var i int
		fmt.Sscanf(s, "%1s/%d", &key, &i)
		if i < 10 {
			t.Fatalf("the group from the checkpoint read %q, which lies before it: %v", s, ds)
		}
	}
	if len(ds) != 20 {
		t.Fatalf("read %v", ds)
	}
	// Reset the first group to its checkpoint: it reads the 20 again.
	n := len(col.events())
	if err := g.ResetToCut(ctx, cut); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "20 more events after the reset", func() bool { return len(col.events()) >= n+20 })
}

// TestGroupTruncatedPastReaders truncates the stream past both readers of
// a group into the segment that merged theirs: each meets the truncation
// and reports it to the group, which places the merged segment once, at
// the head cut's offset; neither reader takes it by itself. Together they
// read every event at or after the cut exactly once, and never one
// segment at the same time.
func TestGroupTruncatedPastReaders(t *testing.T) {
	d := clienttest.Start(t)
	d.CreateStream("sc", "gt", 2)
	c := newTestClient(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := c.NewReaderGroup(ctx, "sc", "g", "gt")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	truncs := map[string][]Truncation{}
	onTrunc := func(id string) GroupOption {
		return WithGroupReaderOptions(WithTruncationFunc(func(tr Truncation) {
			mu.Lock()
			truncs[id] = append(truncs[id], tr)
			mu.Unlock()
		}))
	}
	fast := WithCommitInterval(20 * time.Millisecond)
	a := joinTest(t, c, "g", "a", fast, onTrunc("a"))
	b := joinTest(t, c, "g", "b", fast, onTrunc("b"))
	waitFor(t, "a and b to hold 1 segment each", func() bool {
		s := groupState(t, g)
		return held(s, "a") == 1 && held(s, "b") == 1
	})
	ap := newAppender(t, d)
	s0, s1 := segName("gt", 0, 0), segName("gt", 1, 0)
	for i := range 10 {
		ap.add(s0, fmt.Sprintf("x/%d", i))
		ap.add(s1, fmt.Sprintf("y/%d", i))
	}
	// a reads all of its segment, b nothing.
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	for range 10 {
		if _, err := a.ReadNext(rctx); err != nil {
			t.Fatal(err)
		}
	}
	rcancel()
	// s0 and s1 merge into s2 (the stream's minimum lowered to 1 first: no
	// scale goes below it); the stream is truncated inside s2, past both
	// readers: s0 and s1 are deleted.
	d.AllowMerge("sc", "gt")
	if _, err := d.Controller.Scale(ctx, "sc", "gt", api.ScaleRequest{SealedSegments: []int64{0, 1},
		NewRanges: []api.KeyRange{{Low: 0, High: 1}}}); err != nil {
		t.Fatal(err)
	}
	s2 := segName("gt", 2, 1)
	var offs []int64
	for i := range 10 {
		offs = append(offs, ap.add(s2, fmt.Sprintf("z/%d", i)))
	}
	cut := api.StreamCut{s2: offs[4]}
	if err := d.Controller.TruncateStream(ctx, "sc", "gt", cut); err != nil {
		t.Fatal(err)
	}
	col := &collector{t: t}
	col.run(ctx, a)
	col.run(ctx, b)
	for i := 10; i < 15; i++ {
		ap.add(s2, fmt.Sprintf("z/%d", i))
	}
	after := func() []groupEvent {
		var out []groupEvent
		for _, e := range col.events() {
			if e.Segment == s2 {
				out = append(out, e)
			}
		}
		return out
	}
	waitFor(t, "the 11 events at or after the cut", func() bool { seen, _ := distinct(after()); return len(seen) >= 11 })
	// Settled: one reader holds s2 and has committed its end, nobody else
	// holds it or may be given it, so no second reader of s2 is to come.
	info, err := d.Dial().GetSegmentInfo(ctx, s2)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "one reader to hold s2 and commit its end", func() bool {
		st := groupState(t, g)
		holders, done := 0, false
		for _, m := range st.Readers {
			if off, ok := m.Segments[s2]; ok {
				holders++
				done = off == info.Length
			}
		}
		_, unassigned := st.Unassigned[s2]
		return holders == 1 && done && !unassigned
	})
	evs := after()
	seen, dups := distinct(evs)
	if len(dups) > 0 || len(seen) != 11 {
		t.Fatalf("%d distinct events of %s, duplicates %v", len(seen), s2, dups)
	}
	last := int64(-1)
	for _, e := range evs {
		if e.Offset < cut[s2] || e.Offset <= last {
			t.Fatalf("event of %s at %d by %s: below the cut %d or not after %d", s2, e.Offset, e.reader, cut[s2], last)
		}
		last = e.Offset
	}
	for _, e := range col.events() {
		if e.Segment != s2 {
			t.Fatalf("event of deleted segment %s at %d read after the truncation by %s", e.Segment, e.Offset, e.reader)
		}
	}
	// b stood in s1 at 0 and met the truncation; the callback said so.
	mu.Lock()
	bt := truncs["b"]
	mu.Unlock()
	if len(bt) == 0 || bt[0].Segment != s1 || bt[0].Offset != 0 || bt[0].Head[s2] != cut[s2] {
		t.Fatalf("b's truncations %+v", bt)
	}
	// The group holds s2 once, and nothing of s0 and s1.
	s := groupState(t, g)
	n := 0
	for _, m := range s.Readers {
		for seg := range m.Segments {
			if seg != s2 {
				t.Fatalf("state still gives %s: %+v", seg, s)
			}
			n++
		}
	}
	if n+len(s.Unassigned) != 1 || len(s.Ended) != 0 {
		t.Fatalf("state %+v", s)
	}
}

// conflictingStore is a GroupStore holding one group in memory whose
// compare-and-set loses to a competitor's write the first `lose` times:
// the competitor's write lands between the caller's read and its write.
type conflictingStore struct {
	mu      sync.Mutex
	version int64
	state   []byte
	lose    int
	writes  int // attempts
}

func (s *conflictingStore) CreateReaderGroup(context.Context, string, api.ReaderGroupConfig) (api.ReaderGroup, error) {
	return api.ReaderGroup{}, errors.New("not used")
}

func (s *conflictingStore) GetReaderGroup(_ context.Context, _, group string) (api.ReaderGroup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return api.ReaderGroup{GroupName: group, Streams: []string{"sc/st"}, State: s.state, Version: s.version}, nil
}

func (s *conflictingStore) UpdateReaderGroupState(_ context.Context, _, _ string, version int64, state json.RawMessage) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.writes <= s.lose {
		s.version++ // the competitor's heartbeat
	}
	if version != s.version {
		return 0, ctlclient.ErrConflict
	}
	s.version++
	s.state = state
	return s.version, nil
}

func (s *conflictingStore) DeleteReaderGroup(context.Context, string, string) error { return nil }

// TestGroupUpdateRetriesConflictsPromptly: a reader whose compare-and-set
// keeps losing to the others' heartbeats must not wait longer and longer
// between attempts while they go on writing every commit interval, or it
// goes unheard past its session timeout and is expired while alive. Its
// conflicts are retried at once, then after short jittered waits; the
// waits are recorded, not slept.
func TestGroupUpdateRetriesConflictsPromptly(t *testing.T) {
	b, err := json.Marshal(newGroupState(api.StreamCut{"sc/st/0.#epoch.0": 0}))
	if err != nil {
		t.Fatal(err)
	}
	const lose = 12
	st := &conflictingStore{state: b, lose: lose}
	var waits []time.Duration
	g := &ReaderGroup{store: st, scope: "sc", name: "g", sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	if err := g.update(context.Background(), func(s *GroupState) error { s.join("a", 1); return nil }); err != nil {
		t.Fatal(err)
	}
	if st.writes != lose+1 {
		t.Fatalf("%d write attempts, want %d", st.writes, lose+1)
	}
	// Eight conflicts at once, then waits of at most 50 ms: a dozen
	// conflicts in a row cost at most 200 ms of waiting, less than the
	// shortest session timeout anyone should set.
	if len(waits) > lose-8 {
		t.Fatalf("waited %d times over %d conflicts (%v); want the first 8 retried at once", len(waits), lose, waits)
	}
	for _, d := range waits {
		if d > 50*time.Millisecond {
			t.Fatalf("waits %v over %d conflicts; want each at most 50ms", waits, lose)
		}
	}
}
