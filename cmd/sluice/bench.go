package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/latency"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/protocol/api"
)

// benchOptions are the flags of `sluice bench write|read|e2e`.
type benchOptions struct {
	Stream      string        // --stream SCOPE/STREAM: an existing stream ("" : a new one)
	Segments    int           // --segments: segments of the stream bench creates
	Writers     int           // --writers: client.Writers, each on its own Client
	Readers     int           // --readers: readers of one reader group (read, e2e)
	EventSize   int64         // --event-size: bytes per event
	Rate        float64       // --rate: events/s over all writers (0: unlimited)
	Duration    time.Duration // --duration: how long the writers write
	Count       int64         // --count: how many events the writers write
	Keep        bool          // --keep: do not delete the stream bench created
	MeasureDisk bool          // --measure-disk: probe the disk limits in --disk-dir
	DiskDir     string        // --disk-dir: where to probe (the node's data directory)
}

// Bench defaults.
const (
	benchDefaultDuration = 10 * time.Second
	benchDefaultCount    = 100000 // bench read's fill without --count or --duration
	benchScope           = "bench"
	// benchStampSize is the e2e timestamp at the start of every event: the
	// nanoseconds from the run's start (monotonic clock), big-endian.
	benchStampSize = 8
	// benchDrainTimeout is how long e2e readers may go without an event once
	// the writers are done before the run fails as incomplete.
	benchDrainTimeout = 30 * time.Second
)

func benchCommand(g *globalOptions) *cli.Command {
	o := &benchOptions{}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "stream", Usage: "benchmark the existing stream `SCOPE/STREAM` (default: a new stream " + benchScope + "/bench-<random>)", Destination: &o.Stream},
		&cli.IntFlag{Name: "segments", Usage: "`N` segments of the stream bench creates", Value: 1, Destination: &o.Segments},
		&cli.IntFlag{Name: "writers", Usage: "`N` writers, each with its own client", Value: 1, Destination: &o.Writers},
		&cli.IntFlag{Name: "readers", Usage: "`N` readers in one reader group, sharing the segments (read, e2e)", Value: 1, Destination: &o.Readers},
		sizeFlag("event-size", "`BYTES` per event (e2e: at least 8, the timestamp)", 1024, &o.EventSize),
		&cli.Float64Flag{Name: "rate", Usage: "write `EVENTS_PER_S` over all writers (0: as fast as possible)", Destination: &o.Rate},
		durationFlag("duration", "write for `D` (default 10s unless --count)", 0, &o.Duration),
		&cli.Int64Flag{Name: "count", Usage: "write `N` events (instead of --duration)", Destination: &o.Count},
		&cli.BoolFlag{Name: "keep", Usage: "keep the stream bench created (it is sealed and deleted otherwise)", Destination: &o.Keep},
		&cli.BoolFlag{Name: "measure-disk", Usage: "measure the disk's fsync'd bandwidth and write+fsync p99 in --disk-dir before and after the run", Destination: &o.MeasureDisk},
		&cli.StringFlag{Name: "disk-dir", Usage: "`DIR` on the node's disk for --measure-disk (the node's --data directory)", Destination: &o.DiskDir},
	}
	sub := func(mode, usage, desc string) *cli.Command {
		return &cli.Command{
			Name:        mode,
			Usage:       usage,
			Description: desc,
			Flags:       flags,
			Action:      func(c *cli.Context) error { return runBench(c, g, o, mode) },
		}
	}
	return &cli.Command{
		Name:  "bench",
		Usage: "measure throughput and latency percentiles through the client library",
		Subcommands: []*cli.Command{
			sub("write", "write events; latency from Write to the durable acknowledgement",
				"Writers write --event-size events, spread over the segments, for --duration or --count, at --rate or as fast as\n"+
					"the in-flight window allows. A progress line goes to stderr each second; the report to stdout (--output json)."),
			sub("read", "fill a stream with --count events, then time reading them",
				"The fill (written like bench write, not timed) is followed by --readers readers of a new reader group\n"+
					"reading exactly those events; the group balances before the timing starts. Latency is the time each ReadNext took."),
			sub("e2e", "write and read at once; latency from the Write call to ReadNext returning the event",
				"Each event starts with an 8-byte timestamp taken just before Write; the reader (one of --readers in a new\n"+
					"reader group, balanced before the writers start) subtracts it from the time ReadNext returned the event.\n"+
					"Use --rate for a latency at a given load (10240 events/s of 1 KiB = 10 MiB/s)."),
		},
	}
}

// check validates the options of mode. The flag set tells which were given.
func (o *benchOptions) check(c *cli.Context, mode string) error {
	if c.Args().Present() {
		return fmt.Errorf("bench %s: no argument expected, got %q (the stream is --stream)", mode, c.Args().Slice())
	}
	switch {
	case o.Writers < 1:
		return fmt.Errorf("--writers %d: want at least 1", o.Writers)
	case o.Readers < 1:
		return fmt.Errorf("--readers %d: want at least 1", o.Readers)
	case o.Segments < 1:
		return fmt.Errorf("--segments %d: want at least 1", o.Segments)
	case o.Stream != "" && c.IsSet("segments"):
		return errors.New("--segments applies to the stream bench creates, not to an existing --stream")
	case o.Stream != "" && o.Keep:
		return errors.New("--keep applies to the stream bench creates; an existing --stream is never deleted")
	case o.EventSize < 1 || o.EventSize > protocol.MaxEventSize:
		return fmt.Errorf("--event-size %d: want 1 to %d bytes (8 MiB)", o.EventSize, protocol.MaxEventSize)
	case mode == "e2e" && o.EventSize < benchStampSize:
		return fmt.Errorf("--event-size %d: e2e events carry an %d-byte timestamp; want at least %d", o.EventSize, benchStampSize, benchStampSize)
	case o.Rate < 0:
		return fmt.Errorf("--rate %v: want 0 (unlimited) or more events/s", o.Rate)
	case c.IsSet("duration") && c.IsSet("count"):
		return errors.New("--duration and --count exclude each other")
	case c.IsSet("duration") && o.Duration <= 0:
		return fmt.Errorf("--duration %v: want more than 0", o.Duration)
	case c.IsSet("count") && o.Count < 1:
		return fmt.Errorf("--count %d: want at least 1", o.Count)
	case o.MeasureDisk && o.DiskDir == "":
		return errors.New("--measure-disk needs --disk-dir DIR, a directory on the node's disk (its --data directory)")
	case !o.MeasureDisk && o.DiskDir != "":
		return errors.New("--disk-dir is used only with --measure-disk")
	}
	if o.MeasureDisk {
		if fi, err := os.Stat(o.DiskDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--disk-dir %s: not a directory", o.DiskDir)
		}
	}
	if !c.IsSet("duration") && !c.IsSet("count") {
		if mode == "read" {
			o.Count = benchDefaultCount
		} else {
			o.Duration = benchDefaultDuration
		}
	}
	return nil
}

// benchStream is the stream a run uses, and whether the run made it.
type benchStream struct {
	scope, name string
	created     bool
}

func (s benchStream) String() string { return s.scope + "/" + s.name }

// prepare returns the stream of the run: --stream, which must exist, or a
// new one in the scope "bench" (created if needed).
func (o *benchOptions) prepare(ctx context.Context, ctl *ctlclient.Client) (benchStream, error) {
	if o.Stream != "" {
		scope, name, ok := strings.Cut(o.Stream, "/")
		if !ok || scope == "" || name == "" || strings.Contains(name, "/") {
			return benchStream{}, fmt.Errorf("--stream %q is not SCOPE/STREAM", o.Stream)
		}
		info, err := ctl.GetStream(ctx, scope, name)
		if err != nil {
			return benchStream{}, fmt.Errorf("--stream: %w", err)
		}
		if info.Sealed {
			return benchStream{}, fmt.Errorf("--stream %s: the stream is sealed", o.Stream)
		}
		return benchStream{scope: scope, name: name}, nil
	}
	var id [4]byte
	rand.Read(id[:])
	s := benchStream{scope: benchScope, name: "bench-" + hex.EncodeToString(id[:]), created: true}
	if err := ctl.CreateScope(ctx, s.scope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return benchStream{}, fmt.Errorf("create scope %s: %w", s.scope, err)
	}
	_, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: s.scope, StreamName: s.name,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(o.Segments)}})
	if err != nil {
		return benchStream{}, fmt.Errorf("create stream %s: %w", s, err)
	}
	return s, nil
}

// cleanup seals and deletes a stream the run created, unless --keep.
func (o *benchOptions) cleanup(ctl *ctlclient.Client, s benchStream) error {
	if !s.created || o.Keep {
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

func runBench(c *cli.Context, g *globalOptions, o *benchOptions, mode string) (err error) {
	if err := o.check(c, mode); err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	// An interrupt ends the writers early (bench write then reports what was
	// done; read and e2e fail).
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctl := ctlclient.NewClient(g.Controller)
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	herr := ctl.Health(hctx)
	cancel()
	if herr != nil {
		return fmt.Errorf("bench %s: %w", mode, herr)
	}
	s, err := o.prepare(ctx, ctl)
	if err != nil {
		return fmt.Errorf("bench %s: %w", mode, err)
	}
	defer func() {
		if cerr := o.cleanup(ctl, s); cerr != nil && err == nil {
			err = fmt.Errorf("bench %s: %w", mode, cerr)
		}
	}()

	r := &benchReport{Mode: mode, Stream: s.String(), Writers: o.Writers, EventSize: int(o.EventSize), Rate: o.Rate}
	if info, err := ctl.CurrentSegments(ctx, s.scope, s.name); err == nil {
		r.Segments = len(info)
	}
	if mode != "write" {
		r.Readers = o.Readers
	}
	var disk diskLimits
	if o.MeasureDisk {
		if err := disk.probe(o.DiskDir); err != nil {
			return fmt.Errorf("bench %s: --measure-disk: %w", mode, err)
		}
	}
	prog := newProgress(c.App.ErrWriter)
	switch mode {
	case "write":
		err = o.benchWrite(ctx, g, s, r, prog)
	case "read":
		err = o.benchRead(ctx, g, s, r, prog)
	case "e2e":
		err = o.benchE2E(ctx, g, s, r, prog)
	}
	if err != nil {
		return fmt.Errorf("bench %s %s: %w", mode, s, err)
	}
	if o.MeasureDisk {
		if err := disk.probe(o.DiskDir); err != nil {
			return fmt.Errorf("bench %s: --measure-disk: %w", mode, err)
		}
		disk.addTo(r)
	}
	return p.Print(r.output())
}

// benchLoad is what the writers of a run share: the counters the progress
// line reads and the recorder of acknowledgement latencies.
type benchLoad struct {
	base    time.Time // the run's clock: event timestamps are time.Since(base)
	events  atomic.Int64
	bytes   atomic.Int64
	acks    *latency.Recorder
	ackHist *histogram
}

// runWriters runs o.Writers writers on s until --count events are written or
// --duration is over (or ctx is done), each with its own Client, and waits
// until every event is acknowledged. It returns the events written and the
// time from the first Write to the last acknowledgement. With stamp, each
// event starts with its timestamp (e2e).
func (o *benchOptions) runWriters(ctx context.Context, g *globalOptions, s benchStream, l *benchLoad, stamp bool) (int64, time.Duration, error) {
	type writer struct {
		cl *client.Client
		w  *client.Writer
	}
	ws := make([]writer, o.Writers)
	defer func() {
		for _, w := range ws {
			if w.w != nil {
				w.w.Close(context.Background())
			}
			if w.cl != nil {
				w.cl.Close()
			}
		}
	}()
	for i := range ws {
		cl, err := client.New(ctx, g.Controller)
		if err != nil {
			return 0, 0, err
		}
		ws[i].cl = cl
		w, err := cl.NewWriter(ctx, s.scope, s.name)
		if err != nil {
			return 0, 0, fmt.Errorf("writer: %w", err)
		}
		ws[i].w = w
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		var dc context.CancelFunc
		wctx, dc = context.WithTimeout(ctx, o.Duration)
		defer dc()
	}
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
		n := int64(0) // 0: until --duration
		if o.Count > 0 {
			n = o.Count / int64(len(ws))
			if int64(i) < o.Count%int64(len(ws)) {
				n++
			}
		}
		var interval time.Duration
		if o.Rate > 0 {
			interval = time.Duration(float64(time.Second) * float64(len(ws)) / o.Rate)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := o.writeLoop(wctx, w.w, l, n, interval, stamp)
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

// writeLoop writes n events (0: until ctx is done) through w, one every
// interval (0: as fast as Write returns), and records each one's latency
// from the Write call to its acknowledgement. Acknowledgements are waited
// for in write order by one goroutine, so an event acknowledged before an
// earlier one of another segment is counted when the earlier one is: with
// several segments a latency can be overstated by the gap between them,
// never understated. It returns the events acknowledged.
func (o *benchOptions) writeLoop(ctx context.Context, w *client.Writer, l *benchLoad, n int64, interval time.Duration, stamp bool) (int64, error) {
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
		size := o.EventSize
		for p := range queue {
			<-p.ack.Done()
			if err := p.ack.Err(); err != nil {
				if ackErr == nil {
					ackErr = fmt.Errorf("event not acknowledged: %w", err)
				}
				continue
			}
			d := time.Since(l.base) - p.t0
			l.acks.Record(d)
			l.ackHist.record(d)
			l.events.Add(1)
			l.bytes.Add(size)
			acked++
		}
	}()

	event := make([]byte, o.EventSize)
	for i := range event {
		event[i] = byte('a' + i%26)
	}
	var err error
	next := time.Since(l.base)
	for i := int64(0); n == 0 || i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		if interval > 0 {
			if wait := next - time.Since(l.base); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				if ctx.Err() != nil {
					break
				}
			}
			next += interval
		}
		t0 := time.Since(l.base)
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

// benchWrite times writers alone.
func (o *benchOptions) benchWrite(ctx context.Context, g *globalOptions, s benchStream, r *benchReport, prog *progress) error {
	l := newBenchLoad(o.expected())
	prog.start(&l.events, &l.bytes, l.ackHist)
	n, elapsed, err := o.runWriters(ctx, g, s, l, false)
	prog.stop()
	if err != nil {
		return err
	}
	r.fill(n, o.EventSize, elapsed, l.acks.Snapshot())
	return nil
}

// benchRead writes the fill (untimed, with a progress line of its own),
// then times --readers readers of a new reader group reading exactly those
// events from where the stream ended before the fill.
func (o *benchOptions) benchRead(ctx context.Context, g *globalOptions, s benchStream, r *benchReport, prog *progress) error {
	cl, err := client.New(ctx, g.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Where the stream ends now: the read starts there, so an existing
	// stream's older events are not counted.
	tail, err := cl.NewReader(ctx, s.scope, s.name, client.FromTail())
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	from := tail.Position()
	tail.Close()

	fill := newBenchLoad(o.expected())
	prog.label = "fill: "
	prog.start(&fill.events, &fill.bytes, fill.ackHist)
	n, _, err := o.runWriters(ctx, g, s, fill, false)
	prog.stop()
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("fill: %w", ctx.Err())
	}

	bg, err := o.joinGroup(ctx, cl, s, client.FromCut(from))
	if err != nil {
		return err
	}
	defer bg.close()
	rec := latency.NewRecorder(int(n))
	hist := &histogram{}
	var events, bytes, lastRead atomic.Int64
	prog.label = "read: "
	prog.start(&events, &bytes, hist)
	defer prog.stop()
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
	prog.stop()
	r.fill(n, bytes.Load()/max(n, 1), elapsed, rec.Snapshot())
	r.Bytes = bytes.Load()
	return nil
}

// benchE2E runs the writers and --readers readers of a new reader group at
// once; an event's latency runs from just before its Write call to ReadNext
// returning it.
func (o *benchOptions) benchE2E(ctx context.Context, g *globalOptions, s benchStream, r *benchReport, prog *progress) error {
	cl, err := client.New(ctx, g.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	bg, err := o.joinGroup(ctx, cl, s, client.FromTail())
	if err != nil {
		return err
	}
	defer bg.close()

	l := newBenchLoad(o.expected())
	e2e := latency.NewRecorder(o.expected())
	hist := &histogram{}
	var events, bytes atomic.Int64
	lastRead := atomic.Int64{} // time.Since(l.base) of the last event read

	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	readErr := bg.run(rctx, func(ev client.Event, _ time.Duration) error {
		now := time.Since(l.base)
		if len(ev.Data) < benchStampSize {
			return fmt.Errorf("event of %d bytes at %s offset %d has no timestamp", len(ev.Data), ev.Segment, ev.Offset)
		}
		d := now - time.Duration(binary.BigEndian.Uint64(ev.Data))
		e2e.Record(d)
		hist.record(d)
		bytes.Add(int64(len(ev.Data)))
		events.Add(1)
		storeMax(&lastRead, int64(now))
		return nil
	})

	prog.start(&events, &bytes, hist)
	defer prog.stop()
	start := time.Since(l.base)
	n, _, werr := o.runWriters(ctx, g, s, l, true)
	if werr != nil {
		return werr
	}
	if err := waitRead(ctx, rcancel, readErr, &events, n); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	elapsed := time.Duration(lastRead.Load()) - start
	prog.stop()
	r.fill(events.Load(), o.EventSize, elapsed, e2e.Snapshot())
	ws := latencyMillis(l.acks.Snapshot())
	r.WriteLatency = &ws
	return nil
}

// expected is how many events a run should record, to size recorders (at
// most a million: beyond, they grow).
func (o *benchOptions) expected() int {
	switch {
	case o.Count > 0:
		return int(min(o.Count, 1<<20))
	case o.Rate > 0:
		return int(min(o.Rate*o.Duration.Seconds()*1.1, 1<<20))
	}
	return 1 << 20
}

func newBenchLoad(capacity int) *benchLoad {
	return &benchLoad{base: time.Now(), acks: latency.NewRecorder(capacity), ackHist: &histogram{}}
}

// waitRead waits until the readers have read n events, then stops them
// (stop, then their error on readErr). It fails if a reader fails, or they
// read nothing for benchDrainTimeout, or ctx is done.
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
			case now.Sub(lastChange) > benchDrainTimeout:
				stop()
				<-readErr
				return fmt.Errorf("the readers read %d of %d events, and none for %v", e, n, benchDrainTimeout)
			}
		}
	}
}
