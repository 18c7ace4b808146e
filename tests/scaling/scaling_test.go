package scaling

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// sluiceBin is the binary under test, built once by TestMain.
var sluiceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "scaling", &sluiceBin)
}

const (
	scope       = "sc"
	stream      = "elastic"
	target      = 100 // events/s per segment
	scaleFactor = 2
	minSegments = 2
	maxSegments = 6
	hotRate     = 500 // events/s of the hot writer while hot
	quietRate   = 10  // events/s of every writer otherwise
)

// keysIn returns n routing keys "prefix<i>" whose hash is in [lo, hi).
func keysIn(prefix string, n int, lo, hi float64) []string {
	var ks []string
	for i := 0; len(ks) < n; i++ {
		k := prefix + strconv.Itoa(i)
		if h := protocol.KeyHash(k); h >= lo && h < hi {
			ks = append(ks, k)
		}
	}
	return ks
}

// ledger is what the writers had acknowledged: each key's events are
// "key:n" with n counting from 0, whoever writes the key.
type ledger struct {
	mu    sync.Mutex
	next  map[string]int // key -> next n to write
	acked map[string]int // key -> events acknowledged
	total int
}

// writer writes its keys in turn at rate events/s (changeable), each
// round's events acknowledged before the next round, and notes the time
// of each round's acknowledgement while noting is on.
type writer struct {
	t      *testing.T
	name   string
	w      *client.Writer
	keys   []string
	l      *ledger
	rate   atomic.Int64
	noting atomic.Bool
	// lastNoted is the last event time (ms) the controller accepted.
	lastNoted atomic.Int64
	stop      chan struct{}
	done      chan struct{}
	err       error
}

func startWriter(t *testing.T, ctx context.Context, cl *client.Client, name string, keys []string, l *ledger, rate int64) *writer {
	t.Helper()
	w, err := cl.NewWriter(ctx, scope, stream, client.WithWriterID(name))
	if err != nil {
		t.Fatal(err)
	}
	wr := &writer{t: t, name: name, w: w, keys: keys, l: l, stop: make(chan struct{}), done: make(chan struct{})}
	wr.rate.Store(rate)
	wr.noting.Store(true)
	go wr.run(ctx)
	return wr
}

func (wr *writer) run(ctx context.Context) {
	defer close(wr.done)
	const round = 20 * time.Millisecond
	tick := time.NewTicker(round)
	defer tick.Stop()
	var owed float64 // events due but not yet written
	lastNote, last := time.Time{}, time.Now()
	for i := 0; ; {
		select {
		case <-wr.stop:
			return
		case <-ctx.Done():
			wr.err = ctx.Err()
			return
		case now := <-tick.C:
			// By the time elapsed: a busy machine drops ticks.
			owed += float64(wr.rate.Load()) * now.Sub(last).Seconds()
			last = now
		}
		var acks []*client.Ack
		var sent []string
		for ; owed >= 1; owed-- {
			k := wr.keys[i%len(wr.keys)]
			i++
			wr.l.mu.Lock()
			n := wr.l.next[k]
			wr.l.next[k] = n + 1
			wr.l.mu.Unlock()
			a, err := wr.w.Write(ctx, k, fmt.Appendf(nil, "%s:%d", k, n))
			if err != nil {
				wr.err = fmt.Errorf("writer %s: write %s:%d: %w", wr.name, k, n, err)
				return
			}
			acks = append(acks, a)
			sent = append(sent, k)
		}
		for j, a := range acks {
			if err := a.Wait(ctx); err != nil {
				wr.err = fmt.Errorf("writer %s: ack of an event of %s: %w", wr.name, sent[j], err)
				return
			}
		}
		wr.l.mu.Lock()
		for _, k := range sent {
			wr.l.acked[k]++
			wr.l.total++
		}
		wr.l.mu.Unlock()
		if wr.noting.Load() && time.Since(lastNote) >= 100*time.Millisecond {
			now := time.Now()
			if err := wr.w.NoteTime(ctx, now); err != nil {
				wr.err = fmt.Errorf("writer %s: note time: %w", wr.name, err)
				return
			}
			lastNote = now
			wr.lastNoted.Store(now.UnixMilli())
		}
	}
}

// close stops the writer and closes it (which removes it from the
// watermarks); it fails the test if the writer failed.
func (wr *writer) close(ctx context.Context) {
	wr.t.Helper()
	close(wr.stop)
	<-wr.done
	if wr.err != nil {
		wr.t.Fatal(wr.err)
	}
	if err := wr.w.Close(ctx); err != nil {
		wr.t.Fatalf("writer %s: close: %v", wr.name, err)
	}
}

// readEvent is one event a reader of the group returned.
type readEvent struct {
	key string
	n   int
}

// group is the reader group's readers, each in its own goroutine, adding
// what they read to one list in the order ReadNext returned it.
type group struct {
	mu     sync.Mutex
	events []readEvent
	errs   []error
	wg     sync.WaitGroup
}

func (g *group) read(ctx context.Context, gr *client.GroupReader) {
	defer g.wg.Done()
	for {
		ev, err := gr.ReadNext(ctx)
		if err != nil {
			if ctx.Err() == nil {
				g.mu.Lock()
				g.errs = append(g.errs, fmt.Errorf("reader %s: %w", gr.ID(), err))
				g.mu.Unlock()
			}
			return
		}
		if ev.Checkpoint != "" {
			continue
		}
		k, ns, ok := strings.Cut(string(ev.Data), ":")
		n, err := strconv.Atoi(ns)
		g.mu.Lock()
		if !ok || err != nil {
			g.errs = append(g.errs, fmt.Errorf("reader %s: event %q is not key:n", gr.ID(), ev.Data))
		} else {
			g.events = append(g.events, readEvent{k, n})
		}
		g.mu.Unlock()
	}
}

func (g *group) count() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.events), errors.Join(g.errs...)
}

// watermarks follows the stream's watermarks through the REST API.
type watermarks struct {
	mu  sync.Mutex
	all []api.Watermark
	err error
}

func (wm *watermarks) follow(ctx context.Context, ctl *ctlclient.Client, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var after int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l, err := ctl.Watermarks(ctx, scope, stream, after)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			wm.mu.Lock()
			wm.err = err
			wm.mu.Unlock()
			return
		}
		if len(l) > 0 {
			after = l[len(l)-1].Seq
		}
		wm.mu.Lock()
		wm.all = append(wm.all, l...)
		wm.mu.Unlock()
	}
}

// lowerAbove returns whether a watermark's lower time is above ms.
func (wm *watermarks) lowerAbove(ms int64) bool {
	wm.mu.Lock()
	defer wm.mu.Unlock()
	return len(wm.all) > 0 && wm.all[len(wm.all)-1].LowerTime > ms
}

func TestAutoScaleEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Second)
	defer cancel()
	sa := proctest.Start(t, sluiceBin, "standalone", nil, "--log-level", "warn", "standalone",
		"--data", filepath.Join(t.TempDir(), "data"), "--controller-addr", "127.0.0.1:0", "--node-addr", "127.0.0.1:0",
		"--no-hdfs-head", "--no-nfs-head", "--no-s3-head",
		"--rate-windows", "1s,2s,3s,4s", "--autoscale-interval", "200ms", "--autoscale-cooldown", "2s",
		"--autoscale-max-segments", strconv.Itoa(maxSegments), "--writer-timeout", "3s")
	ctlURL := "http://" + sa.Line(t, "controller listening on ", 30*time.Second)
	ctl := ctlclient.NewClient(ctlURL)
	if err := ctl.CreateScope(ctx, scope); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: target, ScaleFactor: scaleFactor, MinSegments: minSegments}}); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, ctlURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Three readers of one group, from the stream's head.
	if _, err := cl.NewReaderGroup(ctx, scope, "rg", stream); err != nil {
		t.Fatal(err)
	}
	rctx, rstop := context.WithCancel(ctx)
	defer rstop()
	g := &group{}
	var readers []*client.GroupReader
	for i := range 3 {
		gr, err := cl.JoinReaderGroup(ctx, scope, "rg", fmt.Sprintf("r%d", i), client.WithCommitInterval(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, gr)
		g.wg.Add(1)
		go g.read(rctx, gr)
	}
	wm := &watermarks{}
	wmDone := make(chan struct{})
	go wm.follow(rctx, ctl, wmDone)

	// The hot writer on the lower half of the key space, one on the upper
	// half (replaced by a new writer id later), and one that goes silent.
	l := &ledger{next: map[string]int{}, acked: map[string]int{}}
	hot := startWriter(t, ctx, cl, "hot", keysIn("h", 16, 0, 0.5), l, quietRate)
	upper := keysIn("u", 8, 0.5, 1)
	cold := startWriter(t, ctx, cl, "cold-1", upper, l, quietRate)
	silent := startWriter(t, ctx, cl, "silent", keysIn("s", 2, 0, 1), l, quietRate)

	// Every writer has noted a time: the first watermark.
	proctest.WaitFor(t, "a first watermark", 20*time.Second, func() (bool, string) {
		return wm.lowerAbove(0), "none yet"
	})

	// Rising: the hot writer at hotRate until two automatic splits.
	hot.rate.Store(hotRate)
	autoSplits := func() (int, int, string) {
		eps, err := ctl.Epochs(ctx, scope, stream)
		if err != nil {
			return 0, 0, err.Error()
		}
		splits, merges := 0, 0
		for i := 1; i < len(eps); i++ {
			if eps[i].Trigger != api.TriggerAuto {
				continue
			}
			if len(eps[i].Segments) > len(eps[i-1].Segments) {
				splits++
			} else {
				merges++
			}
		}
		return splits, merges, fmt.Sprintf("%d epochs, %d splits, %d merges", len(eps), splits, merges)
	}
	var silentAt int64
	proctest.WaitFor(t, "two automatic splits", 30*time.Second, func() (bool, string) {
		s, _, why := autoSplits()
		if s >= 1 && silentAt == 0 {
			// Churn after the first split: the upper writer closes and a
			// new writer id takes its keys over; the silent writer stops
			// noting event time.
			cold.close(ctx)
			cold = startWriter(t, ctx, cl, "cold-2", upper, l, quietRate)
			silent.noting.Store(false)
			silentAt = silent.lastNoted.Load()
		}
		return s >= 2, why
	})
	// Falling: back to the quiet rate until the stream is at minSegments.
	hot.rate.Store(quietRate)
	proctest.WaitFor(t, "merges back to minSegments", 50*time.Second, func() (bool, string) {
		segs, err := ctl.CurrentSegments(ctx, scope, stream)
		if err != nil {
			return false, err.Error()
		}
		_, m, why := autoSplits()
		return len(segs) == minSegments && m >= 1, fmt.Sprintf("%d active segments; %s", len(segs), why)
	})
	// The silent writer was timed out: time went on past its last note.
	proctest.WaitFor(t, "watermarks past the silent writer's last time", 20*time.Second, func() (bool, string) {
		return wm.lowerAbove(silent.lastNoted.Load()), fmt.Sprintf("silent writer's last time %d", silent.lastNoted.Load())
	})
	if silentAt == 0 {
		t.Fatal("the churn never ran")
	}

	for _, w := range []*writer{hot, cold, silent} {
		w.close(ctx)
	}
	l.mu.Lock()
	total := l.total
	acked := copyCounts(l.acked)
	l.mu.Unlock()
	proctest.WaitFor(t, "every acknowledged event read", 30*time.Second, func() (bool, string) {
		n, err := g.count()
		if err != nil {
			t.Fatal(err)
		}
		return n >= total, fmt.Sprintf("%d of %d read", n, total)
	})
	rstop()
	g.wg.Wait()
	<-wmDone
	for _, gr := range readers {
		gr.Close(context.Background())
	}

	checkEvents(t, g.events, acked, total)
	eps, err := ctl.Epochs(ctx, scope, stream)
	if err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, eps)
	wm.mu.Lock()
	defer wm.mu.Unlock()
	if wm.err != nil {
		t.Fatalf("following the watermarks: %v", wm.err)
	}
	n := checkWatermarks(t, wm.all)
	t.Logf("%d events, %d epochs, %d watermarks with segments of %d epochs", total, len(eps), len(wm.all), n)
}

func copyCounts(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkEvents: every acknowledged event read once, each key's in order.
func checkEvents(t *testing.T, events []readEvent, acked map[string]int, total int) {
	t.Helper()
	next := map[string]int{}
	for i, e := range events {
		if e.n != next[e.key] {
			t.Fatalf("read event %d is %s:%d; want %s:%d (each key's events once, in order)", i, e.key, e.n, e.key, next[e.key])
		}
		next[e.key]++
	}
	if len(events) != total {
		t.Fatalf("read %d events, %d acknowledged", len(events), total)
	}
	for k, n := range acked {
		if next[k] != n {
			t.Fatalf("key %s: read %d events, %d acknowledged", k, next[k], n)
		}
	}
}

// checkEpochs: each epoch covers [0, 1) with at least minSegments and at
// most maxSegments segments; each automatic scale splits one segment into
// scaleFactor equal parts or merges two neighbours; there were at least
// two splits and one merge.
func checkEpochs(t *testing.T, eps []api.EpochInfo) {
	t.Helper()
	splits, merges := 0, 0
	for i, ep := range eps {
		if n := len(ep.Segments); n < minSegments || n > maxSegments {
			t.Fatalf("epoch %d has %d segments: want %d..%d", ep.Epoch, n, minSegments, maxSegments)
		}
		lo := 0.0
		for _, s := range ep.Segments {
			if s.KeyLow != lo {
				t.Fatalf("epoch %d: segment %d starts at %v, want %v (segments %v)", ep.Epoch, s.Number, s.KeyLow, lo, ep.Segments)
			}
			lo = s.KeyHigh
		}
		if lo != 1 {
			t.Fatalf("epoch %d ends at %v: want 1", ep.Epoch, lo)
		}
		if i == 0 {
			continue
		}
		if ep.Trigger != api.TriggerAuto || ep.Reason == "" {
			t.Fatalf("epoch %d: trigger %q reason %q, want an automatic scale with its reason", ep.Epoch, ep.Trigger, ep.Reason)
		}
		gone, added := diff(eps[i-1].Segments, ep.Segments)
		switch {
		case len(gone) == 1 && len(added) == scaleFactor:
			w := (gone[0].KeyHigh - gone[0].KeyLow) / scaleFactor
			for j, s := range added {
				if d := s.KeyHigh - s.KeyLow - w; d > 1e-9 || d < -1e-9 || s.Epoch != ep.Epoch {
					t.Fatalf("epoch %d: split of %v into %v: part %d is not 1/%d of it, created in this epoch", ep.Epoch, gone[0], added, j, scaleFactor)
				}
			}
			if !strings.Contains(ep.Reason, "hot") {
				t.Fatalf("epoch %d: split with reason %q", ep.Epoch, ep.Reason)
			}
			splits++
		case len(gone) == 2 && len(added) == 1:
			if gone[0].KeyHigh != gone[1].KeyLow || added[0].KeyLow != gone[0].KeyLow || added[0].KeyHigh != gone[1].KeyHigh {
				t.Fatalf("epoch %d: merge of %v into %v: not two neighbours into their union", ep.Epoch, gone, added)
			}
			if !strings.Contains(ep.Reason, "cold") {
				t.Fatalf("epoch %d: merge with reason %q", ep.Epoch, ep.Reason)
			}
			merges++
		default:
			t.Fatalf("epoch %d: sealed %v, created %v: neither a split into %d nor a merge of two", ep.Epoch, gone, added, scaleFactor)
		}
	}
	if splits < 2 || merges < 1 {
		t.Fatalf("%d splits and %d merges: want at least 2 and 1", splits, merges)
	}
	if n := len(eps[len(eps)-1].Segments); n != minSegments {
		t.Fatalf("last epoch has %d segments, want %d", n, minSegments)
	}
}

// diff returns the segments of a not in b and of b not in a, by key.
func diff(a, b []api.SegmentRange) (gone, added []api.SegmentRange) {
	in := func(l []api.SegmentRange, s api.SegmentRange) bool {
		return slices.ContainsFunc(l, func(x api.SegmentRange) bool { return x.Segment == s.Segment })
	}
	for _, s := range a {
		if !in(b, s) {
			gone = append(gone, s)
		}
	}
	for _, s := range b {
		if !in(a, s) {
			added = append(added, s)
		}
	}
	return gone, added
}

// checkWatermarks: numbered in order, times never decrease, cuts never go
// back: for two segments of consecutive cuts whose key ranges overlap,
// the same segment's offset does not decrease, and a different one in the
// later cut was created in a later epoch. It returns how many epochs'
// segments the cuts hold (at least 2: the cuts followed a scale).
func checkWatermarks(t *testing.T, wms []api.Watermark) int {
	t.Helper()
	if len(wms) < 2 {
		t.Fatalf("%d watermarks: want several", len(wms))
	}
	epochs := map[int64]bool{}
	for i := 1; i < len(wms); i++ {
		p, n := wms[i-1], wms[i]
		if n.Seq <= p.Seq || n.LowerTime < p.LowerTime || n.UpperTime < p.UpperTime {
			t.Fatalf("watermark %d (lower %d upper %d) after %d (lower %d upper %d): went back", n.Seq, n.LowerTime, n.UpperTime, p.Seq, p.LowerTime, p.UpperTime)
		}
		for _, ps := range p.Segments {
			for _, ns := range n.Segments {
				if ns.KeyHigh <= ps.KeyLow || ps.KeyHigh <= ns.KeyLow {
					continue
				}
				if ns.Segment == ps.Segment {
					if n.Cut[ns.Segment] < p.Cut[ps.Segment] {
						t.Fatalf("watermark %d: %s at %d, at %d in watermark %d", n.Seq, ns.Segment, n.Cut[ns.Segment], p.Cut[ps.Segment], p.Seq)
					}
				} else if ns.Epoch <= ps.Epoch {
					t.Fatalf("watermark %d has %s (epoch %d) where watermark %d had %s (epoch %d): the cut went back", n.Seq, ns.Segment, ns.Epoch, p.Seq, ps.Segment, ps.Epoch)
				}
			}
		}
		for _, s := range n.Segments {
			epochs[s.Epoch] = true
		}
	}
	if len(epochs) < 2 {
		t.Fatalf("the watermarks' cuts hold segments of %d epochs: want them to follow the scales", len(epochs))
	}
	return len(epochs)
}
