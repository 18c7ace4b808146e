package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/protocol/api"
)

// reactionTimeout bounds Scale's wait, from the rise, for the first
// acknowledgement from a new segment.
const reactionTimeout = 2 * time.Minute

// ratePoll is how often Scale asks the node for the segment's rates.
const ratePoll = 10 * time.Millisecond

// validateMore checks the fields of the many-streams, scale and server
// measures.
func (c Config) validateMore() error {
	switch {
	case c.Streams < 0 || c.Streams > 10000:
		return invalidf("--streams %d: want 1 to 10000", c.Streams)
	case c.Streams > 1 && c.Stream != "":
		return invalidf("--streams applies to the streams bench creates, not to an existing --stream")
	case c.Clients < 0:
		return invalidf("--clients %d: want at least 1 (0: one per writer)", c.Clients)
	case c.ScaleAt < 0:
		return invalidf("--scale-at %v: want more than 0", c.ScaleAt)
	case c.ScaleAt > 0 && c.Mode != Write:
		return invalidf("--scale-at applies to bench write")
	case c.ScaleAt > 0 && c.Duration > 0 && c.ScaleAt >= c.Duration:
		return invalidf("--scale-at %v: want it within --duration %v", c.ScaleAt, c.Duration)
	case c.ServerPID < 0:
		return invalidf("--server-pid %d: want a process id", c.ServerPID)
	case c.Mode != Scale && (c.Target != 0 || c.Warmup != 0):
		return invalidf("--target and --warmup apply to bench scale")
	}
	if c.Mode == Scale {
		switch {
		case c.Target <= 0:
			return invalidf("--target %v: bench scale needs the stream's target rate in events/s per segment", c.Target)
		case c.Rate <= c.Target:
			return invalidf("--rate %v: bench scale writes above --target %v; want more", c.Rate, c.Target)
		case c.Stream != "" || c.Streams > 1:
			return invalidf("bench scale creates its own stream of one segment: no --stream or --streams")
		case c.Count > 0 || c.Duration > 0:
			return invalidf("bench scale writes until the first split serves writes: no --count or --duration")
		case c.Warmup < 0:
			return invalidf("--warmup %v: want more than 0", c.Warmup)
		}
	}
	return nil
}

// ScaleReport is the acknowledgement latency of a run's writes during a
// scale against the same run's other writes. "During" is from the first
// segment sealed (a writer saw it) to ScaleSettle after the first
// acknowledgement from a new segment; times are from the run's start.
type ScaleReport struct {
	AskedMS  float64 `json:"askedMs,omitempty"` // --scale-at: the scale asked for
	CallMS   float64 `json:"callMs,omitempty"`  // --scale-at: the scale request's round trip (the workflow)
	SealedMS float64 `json:"sealedMs"`          // a writer saw its segment sealed
	ServedMS float64 `json:"servedMs"`          // the first acknowledgement from a new segment
	// EventsDuring were written during the scale; Outside the others
	// (Scale: those at the same rate, after the rise).
	EventsDuring  int       `json:"eventsDuring"`
	During        LatencyMS `json:"duringMs"`
	EventsOutside int       `json:"eventsOutside"`
	Outside       LatencyMS `json:"outsideMs"`
}

// ReactionReport is bench scale's: the time from the node's measured rate
// crossing the target to the new epoch serving writes, and its parts.
type ReactionReport struct {
	Target float64 `json:"target"` // events/s per segment
	// Detect: from the rise of the rate to the node's shortest-window
	// rate above the target (as GetSegmentRates showed it, polled every
	// 10 ms).
	DetectMS float64 `json:"detectMs"`
	// Decide: from there to a writer seeing the segment sealed: the
	// controller's next poll, its decision, the workflow's intent,
	// createSegments and sealSegments.
	DecideMS float64 `json:"decideMs"`
	// Publish: from the seal to the new epoch's creation time in the
	// stream's history (publishEpoch; ms resolution).
	PublishMS float64 `json:"publishMs"`
	// Serve: from the publication to the first acknowledgement from a
	// new segment (the writer's successor lookup, connection, moved
	// events).
	ServeMS float64 `json:"serveMs"`
	// Total: from the crossing to the first acknowledgement from a new
	// segment (Decide + Publish + Serve).
	TotalMS float64 `json:"totalMs"`
	Reason  string  `json:"reason"` // the epoch's reason
}

// sample is one acknowledged write: when it was written and its latency.
type sample struct{ t0, d time.Duration }

// scaleWatch follows a scale through the writers' segment states and
// acknowledgements. Times are time.Since(base).
type scaleWatch struct {
	base time.Time
	old  map[string]bool // the segments before the scale
	mu   struct {
		sync.Mutex
		sealed, connected, served time.Duration
		samples                   []sample
	}
}

func newScaleWatch(base time.Time, segs []api.SegmentRange) *scaleWatch {
	w := &scaleWatch{base: base, old: map[string]bool{}}
	for _, s := range segs {
		w.old[s.Segment] = true
	}
	return w
}

// state is the writers' client.WithStateFunc.
func (w *scaleWatch) state(sc client.StateChange) {
	now := time.Since(w.base)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case sc.State == client.StateSealed && w.mu.sealed == 0:
		w.mu.sealed = now
	case sc.State == client.StateConnected && !w.old[sc.Segment] && w.mu.connected == 0:
		w.mu.connected = now
	}
}

// ack records one acknowledged write.
func (w *scaleWatch) ack(t0, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.samples = append(w.mu.samples, sample{t0, d})
	if w.mu.connected > 0 && w.mu.served == 0 && t0+d >= w.mu.connected {
		w.mu.served = t0 + d
	}
}

func (w *scaleWatch) servedAt() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.served
}

// report splits the samples written from `from` on into those during the
// scale and the others.
func (w *scaleWatch) report(from time.Duration) (*ScaleReport, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.sealed == 0 || w.mu.served == 0 {
		return nil, fmt.Errorf("no scale seen by the writers (sealed at %v, first acknowledgement from a new segment at %v)", w.mu.sealed, w.mu.served)
	}
	end := w.mu.served + ScaleSettle
	var during, outside []time.Duration
	for _, s := range w.mu.samples {
		switch {
		case s.t0 < from:
		case s.t0 >= w.mu.sealed && s.t0 <= end:
			during = append(during, s.d)
		default:
			outside = append(outside, s.d)
		}
	}
	if len(during) == 0 || len(outside) == 0 {
		return nil, fmt.Errorf("%d writes during the scale and %d outside: want some of both (a longer run)", len(during), len(outside))
	}
	return &ScaleReport{SealedMS: millis(w.mu.sealed), ServedMS: millis(w.mu.served),
		EventsDuring: len(during), During: latencyMillis(latency.Sort(during)),
		EventsOutside: len(outside), Outside: latencyMillis(latency.Sort(outside))}, nil
}

// splitAll asks for every active segment of s to be split in two, and
// returns the request's round trip.
func splitAll(ctx context.Context, ctl *ctlclient.Client, s stream) (time.Duration, error) {
	segs, err := ctl.CurrentSegments(ctx, s.scope, s.name)
	if err != nil {
		return 0, err
	}
	var req api.ScaleRequest
	for _, sg := range segs {
		mid := sg.KeyLow + (sg.KeyHigh-sg.KeyLow)/2
		req.SealedSegments = append(req.SealedSegments, sg.Number)
		req.NewRanges = append(req.NewRanges, api.KeyRange{Low: sg.KeyLow, High: mid}, api.KeyRange{Low: mid, High: sg.KeyHigh})
	}
	t0 := time.Now()
	if _, err := ctl.Scale(ctx, s.scope, s.name, req); err != nil {
		return 0, fmt.Errorf("--scale-at: scale %s: %w", s, err)
	}
	return time.Since(t0), nil
}

// reaction is bench scale: a quarter of the target for Warmup, then Rate
// until a new segment has acknowledged writes and ScaleSettle more.
func (b *bench) reaction(ctx context.Context, r *Report) error {
	cl, err := client.New(ctx, b.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	segs, err := b.ctl.CurrentSegments(ctx, b.stream.scope, b.stream.name)
	if err != nil {
		return err
	}
	if len(segs) != 1 {
		return fmt.Errorf("the new stream has %d segments, want 1", len(segs))
	}
	seg := segs[0].Segment
	l := newLoad(b.expected())
	w := newScaleWatch(l.base, segs)
	b.watch = w
	b.pace.Store(int64(interval(b.Target/4, b.Writers)))
	b.prog.start(&l.events, &l.bytes, l.ackHist)
	defer b.prog.stop()

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	werr := make(chan error, 1)
	go func() {
		_, _, err := b.runWriters(wctx, l, false)
		werr <- err
	}()
	// The warm-up: load shaping, not synchronisation.
	select {
	case <-time.After(b.Warmup):
	case err := <-werr:
		return fmt.Errorf("warm-up: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	rise := time.Since(l.base)
	b.pace.Store(int64(interval(b.Rate, b.Writers)))
	var crossed time.Duration
	tick := time.NewTicker(ratePoll)
	defer tick.Stop()
	deadline := rise + reactionTimeout
	for w.servedAt() == 0 {
		select {
		case err := <-werr:
			return fmt.Errorf("writers: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		now := time.Since(l.base)
		if now > deadline {
			return fmt.Errorf("no new segment served writes within %v of the rise to %v events/s (is auto-scaling on? `sluice standalone` and `sluice controller` without --no-autoscale)", reactionTimeout, b.Rate)
		}
		if crossed == 0 {
			if rate, err := segmentRate(ctx, cl, seg); err == nil && rate > b.Target {
				crossed = time.Since(l.base)
			}
		}
	}
	settle := time.NewTimer(ScaleSettle + time.Second)
	select {
	case <-settle.C:
	case <-ctx.Done():
		settle.Stop()
	}
	stop()
	if err := <-werr; err != nil {
		return fmt.Errorf("writers: %w", err)
	}
	sr, err := w.report(rise)
	if err != nil {
		return err
	}
	eps, err := b.ctl.Epochs(ctx, b.stream.scope, b.stream.name)
	if err != nil {
		return err
	}
	if len(eps) < 2 {
		return fmt.Errorf("the stream has %d epochs after its first split", len(eps))
	}
	published := time.UnixMilli(eps[1].CreationTime).Sub(l.base)
	sealed, served := time.Duration(sr.SealedMS*float64(time.Millisecond)), time.Duration(sr.ServedMS*float64(time.Millisecond))
	if crossed == 0 || crossed > sealed {
		// The poll missed it (a fold lands between two polls and the scale
		// is faster): count from the seal.
		crossed = sealed
	}
	r.Scale = sr
	r.Reaction = &ReactionReport{Target: b.Target, DetectMS: millis(crossed - rise), DecideMS: millis(sealed - crossed),
		PublishMS: millis(published - sealed), ServeMS: millis(served - published), TotalMS: millis(served - crossed), Reason: eps[1].Reason}
	n := l.events.Load()
	r.fill(n, b.EventSize, time.Since(l.base), l.acks.Snapshot())
	return nil
}

// segmentRate is the node's shortest-window event rate of seg.
func segmentRate(ctx context.Context, cl *client.Client, seg string) (float64, error) {
	conn, err := cl.SegmentConn(ctx, seg)
	if err != nil {
		return 0, err
	}
	rs, err := conn.GetSegmentRates(ctx, []string{seg})
	if err != nil {
		return 0, err
	}
	if len(rs.Rates) != 1 || rs.Rates[0].Missing || len(rs.Rates[0].Events) == 0 {
		return 0, fmt.Errorf("no rates of %s", seg)
	}
	return rs.Rates[0].Events[0], nil
}

// scaleAt waits ScaleAt from the run's start (load shaping, not
// synchronisation), then splits every segment of the run's first stream;
// it notes when and how long in r.Scale.
func (b *bench) scaleAt(ctx context.Context, r *Report) error {
	t := time.NewTimer(b.ScaleAt - time.Since(b.watch.base))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return fmt.Errorf("--scale-at %v: the run ended first", b.ScaleAt)
	}
	asked := time.Since(b.watch.base)
	took, err := splitAll(ctx, b.ctl, b.stream)
	if err != nil {
		return err
	}
	r.Scale = &ScaleReport{AskedMS: millis(asked), CallMS: millis(took)}
	return nil
}
