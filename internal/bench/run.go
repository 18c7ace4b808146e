package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/protocol/api"
)

// drainTimeout is how long readers may go without an event once the
// writers are done before the run fails as incomplete.
const drainTimeout = 30 * time.Second

// Run runs the benchmark c describes against the controller at
// c.Controller and returns its report. Cancelling ctx ends the writers
// early: a Write run then reports what was done, Read and E2E runs fail.
// Errors of Validate are returned as they are; the others start with
// "bench <mode>" (and the stream, for errors of the run itself). A stream
// or reader group the run created is deleted before Run returns, also
// when it fails (unless Keep). When only that deletion fails, Run returns
// the complete report with the error, so the numbers are not lost.
func Run(ctx context.Context, c Config) (_ *Report, err error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	ctl := ctlclient.NewClient(c.Controller)
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	herr := ctl.Health(hctx)
	cancel()
	if herr != nil {
		return nil, fmt.Errorf("bench %s: %w", c.Mode, herr)
	}
	ss, err := prepareAll(ctx, ctl, c)
	defer func() {
		for _, s := range ss {
			if cerr := cleanup(ctl, c, s); cerr != nil && err == nil {
				err = fmt.Errorf("bench %s: %w", c.Mode, cerr)
			}
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", c.Mode, err)
	}
	s := ss[0]

	r := &Report{Mode: c.Mode, Stream: s.String(), Writers: c.Writers, EventSize: int(c.EventSize), Rate: c.Rate}
	if len(ss) > 1 {
		r.Streams = len(ss)
	}
	for _, s := range ss {
		if info, err := ctl.CurrentSegments(ctx, s.scope, s.name); err == nil {
			r.Segments += len(info)
		}
	}
	if c.Mode == Read || c.Mode == E2E {
		r.Readers = c.Readers
	}
	var disk diskLimits
	var load groupLoad
	if c.Rate > 0 {
		load = groupLoad{size: int(c.EventSize), rate: c.Rate, dur: c.DiskProbeGroup}
	}
	if c.DiskDir != "" {
		if err := disk.probe(c.DiskDir, c.DiskProbeBytes, c.DiskProbeSyncs, load); err != nil {
			return nil, fmt.Errorf("bench %s: --measure-disk: %w", c.Mode, err)
		}
	}
	b := &bench{Config: c, stream: s, streams: ss, ctl: ctl, prog: newProgress(c.Progress)}
	if c.SlowLog != nil {
		b.slow = newSlowLog(c.SlowLog, c.SlowOver)
	}
	b.pace.Store(int64(interval(c.Rate, c.Writers)))
	switch c.Mode {
	case Write:
		err = b.write(ctx, r)
	case Read:
		err = b.read(ctx, r)
	case E2E:
		err = b.e2e(ctx, r)
	case Scale:
		err = b.reaction(ctx, r)
	}
	if ferr := b.slow.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("bench %s %s: %w", c.Mode, s, err)
	}
	if c.DiskDir != "" {
		if err := disk.probe(c.DiskDir, c.DiskProbeBytes, c.DiskProbeSyncs, load); err != nil {
			return nil, fmt.Errorf("bench %s: --measure-disk: %w", c.Mode, err)
		}
		disk.addTo(r)
	}
	if c.ServerPID > 0 || c.ServerPprof != "" {
		if r.Server, err = serverMemory(ctx, c.ServerPID, c.ServerPprof); err != nil {
			return nil, fmt.Errorf("bench %s: %w", c.Mode, err)
		}
	}
	return r, nil
}

// stream is the stream a run uses, and whether the run made it.
type stream struct {
	scope, name string
	created     bool
}

func (s stream) String() string { return s.scope + "/" + s.name }

// prepare returns the stream of the run: c.Stream, which must exist, or a
// new one in Scope (created if needed).
func prepare(ctx context.Context, ctl *ctlclient.Client, c Config) (stream, error) {
	if c.Stream != "" {
		scope, name, ok := strings.Cut(c.Stream, "/")
		if !ok || scope == "" || name == "" || strings.Contains(name, "/") {
			return stream{}, fmt.Errorf("--stream %q is not SCOPE/STREAM", c.Stream)
		}
		info, err := ctl.GetStream(ctx, scope, name)
		if err != nil {
			return stream{}, fmt.Errorf("--stream: %w", err)
		}
		if info.Sealed {
			return stream{}, fmt.Errorf("--stream %s: the stream is sealed", c.Stream)
		}
		return stream{scope: scope, name: name}, nil
	}
	var id [4]byte
	rand.Read(id[:])
	s := stream{scope: Scope, name: "bench-" + hex.EncodeToString(id[:]), created: true}
	if err := ctl.CreateScope(ctx, s.scope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return stream{}, fmt.Errorf("create scope %s: %w", s.scope, err)
	}
	policy := api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(c.Segments)}
	if c.Mode == Scale {
		policy = api.ScalingPolicy{Type: api.ByRateInEventsPerSec, TargetRate: int64(c.Target), ScaleFactor: 2, MinSegments: 1}
	}
	_, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: s.scope, StreamName: s.name, ScalingPolicy: policy})
	if err != nil {
		return stream{}, fmt.Errorf("create stream %s: %w", s, err)
	}
	return s, nil
}

// prepareAll returns the run's streams: prepare's, and Streams-1 more
// new ones. It returns those made so far with an error.
func prepareAll(ctx context.Context, ctl *ctlclient.Client, c Config) ([]stream, error) {
	var ss []stream
	for range max(c.Streams, 1) {
		s, err := prepare(ctx, ctl, c)
		if err != nil {
			return ss, err
		}
		ss = append(ss, s)
	}
	return ss, nil
}

// cleanup seals and deletes a stream the run created, unless c.Keep.
func cleanup(ctl *ctlclient.Client, c Config, s stream) error {
	if !s.created || c.Keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ctl.SealStream(ctx, s.scope, s.name); err != nil {
		return fmt.Errorf("seal %s: %w", s, err)
	}
	if err := ctl.DeleteStream(ctx, s.scope, s.name); err != nil {
		return fmt.Errorf("delete %s: %w", s, err)
	}
	return nil
}

// bench is one run under way.
type bench struct {
	Config
	stream  stream   // streams[0]
	streams []stream // writer i writes to streams[i%len(streams)]
	ctl     *ctlclient.Client
	prog    *progress
	// pace is the time between two events of one writer (0: unpaced);
	// Scale changes it during the run.
	pace atomic.Int64
	// watch, if set, follows a scale: the writers' states and every
	// acknowledgement.
	watch *scaleWatch
	// slow is Config.SlowLog's writer, if set.
	slow *slowLog
}

// load is what the writers of a run share: the counters the progress line
// reads and the recorder of acknowledgement latencies.
type load struct {
	base    time.Time // the run's clock: event timestamps are time.Since(base)
	events  atomic.Int64
	bytes   atomic.Int64
	acks    *latency.Recorder
	ackHist *histogram
	// start is time.Since(base) when the writers start writing (set by
	// runWriters); tl, if set, gets every acknowledged event's start
	// (from then) and latency.
	start atomic.Int64
	tl    *timeline
	// late, with a rate, gets how late each paced Write call was against
	// its schedule (the writer's timer and the scheduler's doing): the
	// benchmark's own share of a run's timing.
	late *latency.Recorder
	// wake gets how long after each Ack settled its waiting goroutine
	// saw it (Report.AckWake).
	wake *latency.Recorder
	// slow, if set, gets every event slower than Config.SlowOver.
	slow *slowLog
}

func newLoad(capacity int) *load {
	return &load{base: time.Now(), acks: latency.NewRecorder(capacity), ackHist: &histogram{}, late: latency.NewRecorder(capacity),
		wake: latency.NewRecorder(capacity)}
}

// runWriters runs b.Writers writers until Count events are written or
// Duration is over (or ctx is done), each with its own Client, and waits
// until every event is acknowledged. It returns the events written and the
// time from the first Write to the last acknowledgement. With stamp, each
// event starts with its timestamp (E2E).
func (b *bench) runWriters(ctx context.Context, l *load, stamp bool) (int64, time.Duration, error) {
	type writer struct {
		cl *client.Client
		w  *client.Writer
	}
	ws := make([]writer, b.Writers)
	clients := make([]*client.Client, b.Writers)
	if b.Clients > 0 {
		clients = clients[:min(b.Clients, b.Writers)]
	}
	defer func() {
		for _, w := range ws {
			if w.w != nil {
				w.w.Close(context.Background())
			}
		}
		for _, cl := range clients {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	var opts []client.WriterOption
	if b.watch != nil {
		opts = append(opts, client.WithStateFunc(b.watch.state))
	}
	for i := range ws {
		cl := clients[i%len(clients)]
		if cl == nil {
			var err error
			if cl, err = client.New(ctx, b.Controller); err != nil {
				return 0, 0, err
			}
			clients[i%len(clients)] = cl
		}
		ws[i].cl = cl
		s := b.streams[i%len(b.streams)]
		w, err := cl.NewWriter(ctx, s.scope, s.name, opts...)
		if err != nil {
			return 0, 0, fmt.Errorf("writer: %w", err)
		}
		ws[i].w = w
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if b.Duration > 0 {
		var dc context.CancelFunc
		wctx, dc = context.WithTimeout(ctx, b.Duration)
		defer dc()
	}
	l.start.Store(int64(time.Since(l.base)))
	start := time.Now()
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
		written  atomic.Int64
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	for i, w := range ws {
		n := share(b.Count, len(ws), i) // 0: until Duration
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := b.writeLoop(wctx, w.w, l, n, stamp)
			written.Add(k)
			if err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	errMu.Lock()
	defer errMu.Unlock()
	return written.Load(), elapsed, firstErr
}

// fineWait is, with FinePacing, the longest wait between two events of a
// writer made on the fine timer (latency.Pacer) rather than a timer of
// the runtime, which cancelling the run interrupts.
const fineWait = 2 * time.Millisecond

// writeLoop writes n events (0: until ctx is done) through w, one every
// b.pace (0: as fast as Write returns), and records each one's latency
// from the Write call to the Writer settling its acknowledgement
// (client.Ack.Settled). Acknowledgements are waited for in write order by
// one goroutine, which records how late it saw each (load.wake); the
// latency does not depend on that order. It returns the events
// acknowledged.
func (b *bench) writeLoop(ctx context.Context, w *client.Writer, l *load, n int64, stamp bool) (int64, error) {
	type pending struct {
		ack *client.Ack
		t0  time.Duration
	}
	queue := make(chan pending, 1<<14)
	var acked int64
	var ackErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		size := b.EventSize
		for p := range queue {
			<-p.ack.Done()
			if err := p.ack.Err(); err != nil {
				if ackErr == nil {
					ackErr = fmt.Errorf("event not acknowledged: %w", err)
				}
				continue
			}
			// The latency ends when the Writer settled the Ack, not
			// when this goroutine woke up to see it: that wake-up is
			// the benchmark's (and any waiter's) own, reported apart.
			now := time.Since(l.base)
			settled := now
			if at := p.ack.Settled(); !at.IsZero() {
				settled = min(at.Sub(l.base), now)
			}
			d := settled - p.t0
			l.slow.record("ack", l, p.t0, d)
			l.wake.Record(now - settled)
			l.acks.Record(d)
			l.ackHist.record(d)
			if l.tl != nil {
				l.tl.record(p.t0-time.Duration(l.start.Load()), d)
			}
			if b.watch != nil {
				b.watch.ack(p.t0, d)
			}
			l.events.Add(1)
			l.bytes.Add(size)
			acked++
		}
	}()

	event := make([]byte, b.EventSize)
	for i := range event {
		event[i] = byte('a' + i%26)
	}
	var err error
	var pacer *latency.Pacer
	if b.FinePacing {
		pacer = latency.NewPacer()
		defer pacer.Close()
	}
	next := time.Since(l.base)
	for i := int64(0); n == 0 || i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		due := time.Duration(-1)
		if interval := time.Duration(b.pace.Load()); interval > 0 {
			due = next
			if wait := next - time.Since(l.base); wait > 0 && (pacer == nil || wait > fineWait) {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				if ctx.Err() != nil {
					break
				}
			} else if wait > 0 {
				// FinePacing: short waits on the fine timer; a timer
				// of the runtime would make them about a millisecond,
				// and the events would leave in bursts.
				if err = pacer.Until(l.base.Add(next)); err != nil {
					break
				}
			}
			next += interval
		}
		t0 := time.Since(l.base)
		if due >= 0 {
			l.late.Record(t0 - due)
		}
		if stamp {
			binary.BigEndian.PutUint64(event, uint64(t0))
		}
		ack, werr := w.Write(ctx, "", event)
		if werr != nil {
			if ctx.Err() == nil {
				err = werr
			}
			break
		}
		queue <- pending{ack, t0}
	}
	close(queue)
	<-done
	if err == nil {
		err = ackErr
	}
	return acked, err
}

// write times writers alone.
func (b *bench) write(ctx context.Context, r *Report) error {
	var err error
	if r.Burst, err = b.burst(ctx); err != nil {
		return err
	}
	l := newLoad(b.expected())
	l.tl = newTimeline(b.expected())
	l.slow = b.slow
	var scaled chan error
	if b.ScaleAt > 0 {
		segs, err := b.ctl.CurrentSegments(ctx, b.stream.scope, b.stream.name)
		if err != nil {
			return err
		}
		b.watch = newScaleWatch(l.base, segs)
		scaled = make(chan error, 1)
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { scaled <- b.scaleAt(sctx, r) }()
	}
	b.prog.start(&l.events, &l.bytes, l.ackHist)
	dc, err := startCanary(b.Config, l.base)
	if err != nil {
		return err
	}
	tp := startTierPoller(ctx, b.ctl, l.base, b.TierPoll)
	cs := startCPUSampler(l.base, hostCPUInterval)
	n, elapsed, err := b.runWriters(ctx, l, false)
	tiers, cpus := tp.stop(), cs.stop()
	disk, derr := dc.stop()
	b.prog.stop()
	if err = errors.Join(err, derr); err != nil {
		return err
	}
	b.fillTimeline(r, l.tl, tiers, cpus, disk, time.Duration(l.start.Load()))
	r.pacing(l)
	if scaled != nil {
		if err := <-scaled; err != nil {
			return err
		}
		sr, err := b.watch.report(0)
		if err != nil {
			return fmt.Errorf("--scale-at %v: %w", b.ScaleAt, err)
		}
		sr.AskedMS, sr.CallMS = r.Scale.AskedMS, r.Scale.CallMS
		r.Scale = sr
	}
	r.fill(n, b.EventSize, elapsed, l.acks.Snapshot())
	return nil
}

// read writes the fill (untimed, with a progress line of its own), then
// times b.Readers readers of a new reader group reading exactly those
// events from where the stream ended before the fill.
func (b *bench) read(ctx context.Context, r *Report) error {
	cl, err := client.New(ctx, b.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Where the stream ends now: the read starts there, so an existing
	// stream's older events are not counted.
	tail, err := cl.NewReader(ctx, b.stream.scope, b.stream.name, client.FromTail())
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	from := tail.Position()
	tail.Close()

	fill := newLoad(b.expected())
	b.prog.label = "fill: "
	b.prog.start(&fill.events, &fill.bytes, fill.ackHist)
	n, _, err := b.runWriters(ctx, fill, false)
	b.prog.stop()
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("fill: %w", ctx.Err())
	}
	var cr *cold
	if b.Cold {
		if cr, err = b.coldPrepare(ctx); err != nil {
			return err
		}
		defer cr.close()
	}

	bg, err := joinGroup(ctx, cl, b.stream, b.Readers, client.FromCut(from))
	if err != nil {
		return err
	}
	defer bg.close()
	rec := latency.NewRecorder(int(n))
	hist := &histogram{}
	var events, bytes, lastRead atomic.Int64
	b.prog.label = "read: "
	b.prog.start(&events, &bytes, hist)
	defer b.prog.stop()
	start := time.Now()
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	readErr := bg.run(rctx, func(ev client.Event, took time.Duration) error {
		rec.Record(took)
		hist.record(took)
		bytes.Add(int64(len(ev.Data)))
		events.Add(1)
		storeMax(&lastRead, int64(time.Since(start)))
		return nil
	})
	if err := waitRead(ctx, rcancel, readErr, &events, n); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	elapsed := time.Duration(lastRead.Load())
	b.prog.stop()
	r.fill(n, bytes.Load()/max(n, 1), elapsed, rec.Snapshot())
	r.Bytes = bytes.Load()
	if cr != nil {
		return cr.finish(r, b.stream)
	}
	return nil
}

// e2e runs the writers and b.Readers readers of a new reader group at
// once; an event's latency runs from just before its Write call to
// ReadNext returning it.
func (b *bench) e2e(ctx context.Context, r *Report) error {
	cl, err := client.New(ctx, b.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	bg, err := joinGroup(ctx, cl, b.stream, b.Readers, client.FromTail())
	if err != nil {
		return err
	}
	defer bg.close()

	if r.Burst, err = b.burst(ctx); err != nil {
		return err
	}
	l := newLoad(b.expected())
	l.slow = b.slow
	e2e := latency.NewRecorder(b.expected())
	tl := newTimeline(b.expected())
	hist := &histogram{}
	var events, bytes atomic.Int64
	lastRead := atomic.Int64{} // time.Since(l.base) of the last event read

	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	readErr := bg.run(rctx, func(ev client.Event, _ time.Duration) error {
		now := time.Since(l.base)
		if len(ev.Data) < StampSize {
			return fmt.Errorf("event of %d bytes at %s offset %d has no timestamp", len(ev.Data), ev.Segment, ev.Offset)
		}
		stamp := time.Duration(binary.BigEndian.Uint64(ev.Data))
		d := now - stamp
		l.slow.record("e2e", l, stamp, d)
		e2e.Record(d)
		tl.record(stamp-time.Duration(l.start.Load()), d)
		hist.record(d)
		bytes.Add(int64(len(ev.Data)))
		events.Add(1)
		storeMax(&lastRead, int64(now))
		return nil
	})

	b.prog.start(&events, &bytes, hist)
	defer b.prog.stop()
	start := time.Since(l.base)
	dc, err := startCanary(b.Config, l.base)
	if err != nil {
		return err
	}
	tp := startTierPoller(ctx, b.ctl, l.base, b.TierPoll)
	cs := startCPUSampler(l.base, hostCPUInterval)
	n, _, werr := b.runWriters(ctx, l, true)
	if werr != nil {
		tp.stop()
		cs.stop()
		dc.stop()
		return werr
	}
	err = waitRead(ctx, rcancel, readErr, &events, n)
	tiers, cpus := tp.stop(), cs.stop()
	disk, derr := dc.stop()
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if derr != nil {
		return derr
	}
	b.fillTimeline(r, tl, tiers, cpus, disk, time.Duration(l.start.Load()))
	r.pacing(l)
	elapsed := time.Duration(lastRead.Load()) - start
	b.prog.stop()
	r.fill(events.Load(), b.EventSize, elapsed, e2e.Snapshot())
	ws := latencyMillis(l.acks.Snapshot())
	r.WriteLatency = &ws
	return nil
}

// waitRead waits until the readers have read n events, then stops them
// (stop, then their error on readErr). It fails if a reader fails, or they
// read nothing for drainTimeout, or ctx is done.
func waitRead(ctx context.Context, stop context.CancelFunc, readErr <-chan error, events *atomic.Int64, n int64) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	last, lastChange := events.Load(), time.Now()
	for {
		select {
		case err := <-readErr:
			return err
		case <-ctx.Done():
			stop()
			<-readErr
			return fmt.Errorf("%d of %d events: %w", events.Load(), n, ctx.Err())
		case now := <-tick.C:
			e := events.Load()
			switch {
			case e >= n:
				stop()
				<-readErr // context.Canceled: it was waiting for more
				return nil
			case e != last:
				last, lastChange = e, now
			case now.Sub(lastChange) > drainTimeout:
				stop()
				<-readErr
				return fmt.Errorf("the readers read %d of %d events, and none for %v", e, n, drainTimeout)
			}
		}
	}
}

// fillTimeline sets r's per-second rows, windows, tier-2 lag, host CPU
// and disk canary from tl, the tier samples, the CPU samples and the
// canary's syncs (times since the load's base; start is when the writers
// started, the rows' second 0).
func (b *bench) fillTimeline(r *Report, tl *timeline, tiers []tierSample, cpus []cpuSample, disk []canarySync, start time.Duration) {
	for i := range tiers {
		tiers[i].at -= start
	}
	for i := range cpus {
		cpus[i].at -= start
	}
	for i := range disk {
		disk[i].at -= start
	}
	r.PerSecond = tl.rows(tiers)
	foldCPU(r.PerSecond, cpus)
	r.DiskCanary = foldCanary(r.PerSecond, disk)
	r.DiskCanaryGrid = canaryGrid(disk)
	r.HostCPU = hostCPUOf(cpus)
	w := tl.windows(WindowSplit)
	r.Windows = &w
	if tiers != nil {
		r.TierLag = tierLag(tiers, b.TierMaxLag)
	}
}

// pacing sets r.PacingLate from l.late, if the run was paced, and
// r.AckWake from l.wake.
func (r *Report) pacing(l *load) {
	if l.late.Len() > 0 {
		p := latencyMillis(l.late.Snapshot())
		r.PacingLate = &p
	}
	if l.wake.Len() > 0 {
		w := latencyMillis(l.wake.Snapshot())
		r.AckWake = &w
	}
}
