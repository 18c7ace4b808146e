package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
	"github.com/sluice-streams/sluice/internal/bench"
)

// benchOptions are the flags of `sluice bench write|read|e2e`.
type benchOptions struct {
	Stream      string        // --stream SCOPE/STREAM: an existing stream ("" : a new one)
	Segments    int           // --segments: segments of the stream bench creates
	Writers     int           // --writers: client.Writers, each on its own Client
	Readers     int           // --readers: readers of one reader group (read, e2e)
	EventSize   int64         // --event-size: bytes per event
	Rate        float64       // --rate: events/s over all writers (0: unlimited)
	FinePacing  bool          // --fine-pacing
	Duration    time.Duration // --duration: how long the writers write
	Count       int64         // --count: how many events the writers write
	Keep        bool          // --keep: do not delete the stream bench created
	MeasureDisk bool          // --measure-disk: probe the disk limits in --disk-dir
	DiskCanary  bool          // --disk-canary: time a small sync in --disk-dir every 10 ms during the run
	DiskDir     string        // --disk-dir: where to probe (the node's data directory)
	Streams     int           // --streams: streams bench creates
	Clients     int           // --clients: clients the writers share
	ScaleAt     time.Duration // --scale-at: split every segment then (write)
	Target      float64       // --target: the stream's target rate (scale)
	Warmup      time.Duration // --warmup: below the target first (scale)
	ServerPID   int           // --server-pid: the server's memory after the run
	ServerPprof string        // --server-pprof: the server's --pprof-addr URL
	AfterBurst  int64         // --after-burst: write this much to another stream first (write, e2e)
	TierPoll    time.Duration // --tier-poll: poll the nodes' tier-2 backlog (0: off)
	TierMaxLag  time.Duration // --tier-max-lag: the nodes' bound, for the report
	CPUProfile  string        // --cpuprofile (hidden): profile this process
	Trace       string        // --trace (hidden): trace this process
	SlowLog     string        // --slow-log (hidden): every event over --slow-over, when sent
	SlowOver    time.Duration // --slow-over (hidden)
	Cold        bool          // --cold: read catches up from tier 2, page cache dropped
	TierDir     string        // --tier-dir: the tier-2 directory for --cold
}

// The disk probes' sizes. Variables so the command's tests probe less
// (they check the report's shape, not the disk).
var (
	diskProbeBytes = bench.DefaultDiskProbeBytes
	diskProbeSyncs = bench.DefaultDiskProbeSyncs
	diskProbeGroup = bench.DefaultDiskProbeGroup
)

func benchCommand(g *globalOptions) *cli.Command {
	o := &benchOptions{}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "stream", Usage: "benchmark the existing stream `SCOPE/STREAM` (default: a new stream " + bench.Scope + "/bench-<random>)", Destination: &o.Stream},
		&cli.IntFlag{Name: "segments", Usage: "`N` segments of the stream bench creates", Value: 1, Destination: &o.Segments},
		&cli.IntFlag{Name: "writers", Usage: "`N` writers, each with its own client", Value: 1, Destination: &o.Writers},
		&cli.IntFlag{Name: "readers", Usage: "`N` readers in one reader group, sharing the segments (read, e2e)", Value: 1, Destination: &o.Readers},
		sizeFlag("event-size", "`BYTES` per event (e2e: at least 8, the timestamp)", 1024, &o.EventSize),
		&cli.Float64Flag{Name: "rate", Usage: "write `EVENTS_PER_S` over all writers (0: as fast as possible)", Destination: &o.Rate},
		&cli.BoolFlag{Name: "fine-pacing", Usage: "with --rate, wait for each event's time on a timerfd, so that events leave one by one instead of in bursts of about a millisecond's worth (costs CPU)", Destination: &o.FinePacing},
		durationFlag("duration", "write for `D` (default 10s unless --count)", 0, &o.Duration),
		&cli.Int64Flag{Name: "count", Usage: "write `N` events (instead of --duration)", Destination: &o.Count},
		&cli.BoolFlag{Name: "keep", Usage: "keep the stream bench created (it is sealed and deleted otherwise)", Destination: &o.Keep},
		&cli.BoolFlag{Name: "measure-disk", Usage: "measure the disk's fsync'd bandwidth and write+fsync p99 in --disk-dir before and after the run, and with --rate an ideal log's latency at the run's load (what the disk alone allows)", Destination: &o.MeasureDisk},
		&cli.BoolFlag{Name: "disk-canary", Usage: "write, e2e, with --measure-disk: during the run, time a 4 KiB write+fdatasync in --disk-dir every " + bench.CanaryInterval.String() + ", and report each second's slowest beside the events of that second (what the disk did then)", Destination: &o.DiskCanary},
		&cli.StringFlag{Name: "disk-dir", Usage: "`DIR` on the node's disk for --measure-disk (the node's --data directory)", Destination: &o.DiskDir},
		&cli.IntFlag{Name: "streams", Usage: "create `N` streams of --segments segments; writer i writes to stream i mod N", Value: 1, Destination: &o.Streams},
		&cli.IntFlag{Name: "clients", Usage: "the writers share `N` clients, one connection per node each (0: one per writer; a node takes at most --max-conns-per-peer from one address)", Destination: &o.Clients},
		durationFlag("scale-at", "write: split every segment of the stream in two `D` into the run, and report the ack latency during the scale against the rest", 0, &o.ScaleAt),
		&cli.Float64Flag{Name: "target", Usage: "scale: the stream's target rate, `EVENTS_PER_S` per segment (--rate must be above it)", Destination: &o.Target},
		durationFlag("warmup", "scale: write at a quarter of --target for `D` first (longer than the controller's --autoscale-cooldown; default 15s)", 0, &o.Warmup),
		&cli.IntFlag{Name: "server-pid", Usage: "report the RSS of the server process `PID` (this machine) after the run", Destination: &o.ServerPID},
		&cli.StringFlag{Name: "server-pprof", Usage: "report the Go heap and goroutines of the server whose --pprof-addr is `URL` (http://127.0.0.1:6060) after the run", Destination: &o.ServerPprof},
		sizeFlag("after-burst", "write, e2e: first write `BYTES` as fast as 8 writers go to another stream of 8 segments, seal and delete it, then time the run at once", 0, &o.AfterBurst),
		durationFlag("tier-poll", "write, e2e: ask for the nodes' tier-2 backlog every `D` during the run (0: off)", bench.DefaultTierPoll, &o.TierPoll),
		durationFlag("tier-max-lag", "the nodes' --tier-max-lag `D`: the report sets the largest tier-2 lag against it", embed.DefaultTierConfig().MaxLag, &o.TierMaxLag),
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of this process to `FILE`", Hidden: true, Destination: &o.CPUProfile},
		&cli.StringFlag{Name: "trace", Usage: "write an execution trace of this process to `FILE`", Hidden: true, Destination: &o.Trace},
		&cli.StringFlag{Name: "slow-log", Usage: "write, e2e: write a line to `FILE` for each event of the timed run slower than --slow-over (ack or e2e, ms after the start, wall clock in Unix ms, latency ms)", Hidden: true, Destination: &o.SlowLog},
		hidden(durationFlag("slow-over", "--slow-log's threshold `D`", 3*time.Millisecond, &o.SlowOver)),
		&cli.BoolFlag{Name: "cold", Usage: "read: after the fill, wait until the stream is all in tier 2, drop the page cache of every tier-2 file, and set the read against a reference file read cold beside them", Destination: &o.Cold},
		&cli.StringFlag{Name: "tier-dir", Usage: "--cold: the tier-2 `DIR` on this machine (default: the controller's tier 2 if it is a local directory)", Destination: &o.TierDir},
	}
	sub := func(mode bench.Mode, usage, desc string) *cli.Command {
		return &cli.Command{
			Name:        string(mode),
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
			sub(bench.Write, "write events; latency from Write to the durable acknowledgement",
				"Writers write --event-size events, spread over the segments, for --duration or --count, at --rate or as fast as\n"+
					"the in-flight window allows. A progress line goes to stderr each second; the report to stdout (--output json)."),
			sub(bench.Read, "fill a stream with --count events, then time reading them",
				"The fill (written like bench write, not timed) is followed by --readers readers of a new reader group\n"+
					"reading exactly those events; the group balances before the timing starts. Latency is the time each ReadNext took."),
			sub(bench.E2E, "write and read at once; latency from the Write call to ReadNext returning the event",
				"Each event starts with an 8-byte timestamp taken just before Write; the reader (one of --readers in a new\n"+
					"reader group, balanced before the writers start) subtracts it from the time ReadNext returned the event.\n"+
					"Use --rate for a latency at a given load (10240 events/s of 1 KiB = 10 MiB/s)."),
			sub(bench.Scale, "time the auto-scaler: from a segment's rate crossing its target to a new segment acknowledging writes",
				"Creates a BY_RATE_IN_EVENTS_PER_SEC stream of one segment with --target, writes a quarter of it for --warmup,\n"+
					"then --rate until a new segment has acknowledged a write, polling the node's measured rate every 10 ms.\n"+
					"Reports the parts (detect, decide, publish, serve) and the ack latency during the scale against after the rise."),
			benchSummaryCommand(g),
		},
	}
}

// config turns the flags into the run's bench.Config. It checks what only
// the command line can tell (which flags were given); bench.Run checks the
// values.
func (o *benchOptions) config(c *cli.Context, g *globalOptions, mode bench.Mode) (bench.Config, error) {
	if c.Args().Present() {
		return bench.Config{}, fmt.Errorf("bench %s: no argument expected, got %q (the stream is --stream)", mode, c.Args().Slice())
	}
	switch {
	case o.Stream != "" && c.IsSet("segments"):
		return bench.Config{}, errors.New("--segments applies to the stream bench creates, not to an existing --stream")
	case c.IsSet("duration") && c.IsSet("count"):
		return bench.Config{}, errors.New("--duration and --count exclude each other")
	case c.IsSet("duration") && o.Duration <= 0:
		return bench.Config{}, fmt.Errorf("--duration %v: want more than 0", o.Duration)
	case c.IsSet("count") && o.Count < 1:
		return bench.Config{}, fmt.Errorf("--count %d: want at least 1", o.Count)
	case o.MeasureDisk && o.DiskDir == "":
		return bench.Config{}, errors.New("--measure-disk needs --disk-dir DIR, a directory on the node's disk (its --data directory)")
	case !o.MeasureDisk && o.DiskDir != "":
		return bench.Config{}, errors.New("--disk-dir is used only with --measure-disk")
	case o.DiskCanary && !o.MeasureDisk:
		return bench.Config{}, errors.New("--disk-canary needs --measure-disk and --disk-dir")
	case o.Stream != "" && c.IsSet("streams"):
		return bench.Config{}, errors.New("--streams applies to the streams bench creates, not to an existing --stream")
	case c.IsSet("scale-at") && o.ScaleAt <= 0:
		return bench.Config{}, fmt.Errorf("--scale-at %v: want more than 0", o.ScaleAt)
	case c.IsSet("warmup") && o.Warmup <= 0:
		return bench.Config{}, fmt.Errorf("--warmup %v: want more than 0", o.Warmup)
	case c.IsSet("after-burst") && o.AfterBurst <= 0:
		return bench.Config{}, fmt.Errorf("--after-burst %d: want more than 0 bytes", o.AfterBurst)
	}
	tierPoll := o.TierPoll
	if mode != bench.Write && mode != bench.E2E {
		tierPoll = 0 // write and e2e poll; the others ignore the default
	}
	return bench.Config{
		Controller: g.Controller,
		Mode:       mode,
		Stream:     o.Stream,
		Segments:   o.Segments,
		Keep:       o.Keep,
		Writers:    o.Writers,
		Readers:    o.Readers,
		EventSize:  o.EventSize,
		Rate:       o.Rate,
		FinePacing: o.FinePacing,
		Duration:   o.Duration,
		Count:      o.Count,
		DiskDir:    o.DiskDir, // "" unless --measure-disk
		// The probes' sizes matter only with DiskDir.
		DiskProbeBytes: diskProbeBytes,
		DiskProbeSyncs: diskProbeSyncs,
		DiskProbeGroup: diskProbeGroup,
		DiskCanary:     o.DiskCanary,
		Progress:       c.App.ErrWriter,
		Streams:        o.Streams,
		Clients:        o.Clients,
		ScaleAt:        o.ScaleAt,
		Target:         o.Target,
		Warmup:         o.Warmup,
		ServerPID:      o.ServerPID,
		ServerPprof:    o.ServerPprof,
		AfterBurst:     o.AfterBurst,
		TierPoll:       tierPoll,
		TierMaxLag:     o.TierMaxLag,
		Cold:           o.Cold,
		TierDir:        o.TierDir,
		SlowOver:       o.SlowOver,
	}, nil
}

func runBench(c *cli.Context, g *globalOptions, o *benchOptions, mode bench.Mode) error {
	cfg, err := o.config(c, g, mode)
	if err != nil {
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
	stopProfiles, err := startProfiles(o.CPUProfile, o.Trace)
	if err != nil {
		return err
	}
	defer stopProfiles()
	var slowLog *os.File
	if o.SlowLog != "" {
		if slowLog, err = os.Create(o.SlowLog); err != nil {
			return fmt.Errorf("--slow-log: %w", err)
		}
		cfg.SlowLog = slowLog
	}
	// A report comes with an error only when the run's stream could not
	// be deleted: the numbers are printed, then the error.
	r, err := bench.Run(ctx, cfg)
	if slowLog != nil {
		if cerr := slowLog.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--slow-log: %w", cerr)
		}
	}
	if r != nil {
		if perr := p.Print(benchOutput(r)); err == nil {
			err = perr
		}
	}
	return err
}

// benchOutput is the report as the table's rows; the json format prints
// the report itself.
func benchOutput(r *bench.Report) output {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	lat := func(l bench.LatencyMS) string {
		return fmt.Sprintf("p50 %s  p95 %s  p99 %s  p99.9 %s  max %s", f(l.P50, 3), f(l.P95, 3), f(l.P99, 3), f(l.P999, 3), f(l.Max, 3))
	}
	rate := "unlimited"
	if r.Rate > 0 {
		rate = f(r.Rate, 0) + " events/s"
	}
	o := output{Columns: []string{"METRIC", "VALUE"}, JSON: r}
	add := func(k, v string) { o.Rows = append(o.Rows, []string{k, v}) }
	add("mode", string(r.Mode))
	add("stream", r.Stream)
	if r.Streams > 0 {
		add("streams", strconv.Itoa(r.Streams))
	}
	add("segments", strconv.Itoa(r.Segments))
	add("writers", strconv.Itoa(r.Writers))
	if r.Readers > 0 {
		add("readers", strconv.Itoa(r.Readers))
	}
	add("event size", strconv.Itoa(r.EventSize)+" B")
	add("rate", rate)
	add("events", strconv.FormatInt(r.Events, 10))
	add("bytes", strconv.FormatInt(r.Bytes, 10))
	add("seconds", f(r.Seconds, 3))
	add("events/s", f(r.EventsPerS, 0))
	add("MB/s", f(r.MBPerS, 1))
	add("latency ms", lat(r.Latency))
	if r.WriteLatency != nil {
		add("write->ack ms", lat(*r.WriteLatency))
	}
	if r.PacingLate != nil {
		add("pacing late ms", lat(*r.PacingLate))
	}
	if r.AckWake != nil {
		add("ack wake-up ms", lat(*r.AckWake))
	}
	if r.DiskMBPerS != nil {
		add("disk dir", r.DiskDir)
		add("disk MB/s", f(*r.DiskMBPerS, 1))
		add("disk p99 ms", f(*r.DiskP99MS, 3))
		add("MB/s / disk MB/s", f(*r.DiskRatio, 3))
		if r.DiskP50MS != nil {
			add("disk p50 ms", f(*r.DiskP50MS, 3))
			add("p50 / disk p50", f(*r.P50DiskRate, 2)+"  (target <= "+f(bench.TargetP50DiskRatio, 0)+")")
		}
		add("p99 / disk p99", f(*r.P99DiskRate, 2)+"  (target <= "+f(bench.TargetP99DiskRatio, 0)+")")
		if r.DiskCanary != nil {
			add("disk canary ms", lat(*r.DiskCanary)+"  (a 4 KiB write+fdatasync every "+bench.CanaryInterval.String()+" during the run)")
			if g := r.DiskCanaryGrid; g != nil {
				add("disk canary stalls", fmt.Sprintf("%d over %s ms, %d of them (%s) ended within %s ms of %s ms past each %s ms (near all: the host's throttle)",
					g.Stalls, f(bench.CanaryStallMS, 0), g.OnGrid, f(g.Share, 2), f(g.WidthMS, 0), f(g.PhaseMS, 0), f(g.PeriodMS, 0)))
			}
		}
		if r.DiskGroupP99MS != nil {
			add("ideal log ms", fmt.Sprintf("p50 %s  p99 %s  (the disk alone at this load)", f(*r.DiskGroupP50MS, 3), f(*r.DiskGroupP99MS, 3)))
			add("p99 / ideal log p99", f(*r.P99GroupRate, 2))
		}
		for i, p := range r.DiskProbes {
			v := fmt.Sprintf("%s MB/s  p50 %s  p99 %s ms", f(p.MBPerS, 1), f(p.P50MS, 3), f(p.P99MS, 3))
			if p.GroupP99MS > 0 {
				v += fmt.Sprintf("  ideal log p50 %s  p99 %s  max %s ms", f(p.GroupP50MS, 3), f(p.GroupP99MS, 3), f(p.GroupMaxMS, 1))
			}
			add(fmt.Sprintf("disk probe %d", i+1), v)
		}
	}
	if b := r.Burst; b != nil {
		add("burst", fmt.Sprintf("%d bytes by %d writers in %s s (%s MB/s), then sealed and deleted in %s ms",
			b.Bytes, b.Writers, f(b.Seconds, 1), f(b.MBPerS, 1), f(b.DeleteMS, 0)))
	}
	if w := r.Windows; w != nil {
		win := func(x bench.Window) string {
			s := fmt.Sprintf("%s  (%d events)", lat(x.Latency), x.Events)
			if r.Mode == bench.Write && r.DiskP50MS != nil && x.Events > 0 {
				s += fmt.Sprintf("  p50/disk %s  p99/disk %s", f(x.Latency.P50 / *r.DiskP50MS, 2), f(x.Latency.P99 / *r.DiskP99MS, 2))
			}
			return s
		}
		add("ms, first 2 s", win(w.First))
		add("ms, after 2 s", win(w.After))
	}
	if t := r.TierLag; t != nil {
		v := fmt.Sprintf("max untiered %s MiB  max lag %d ms", f(float64(t.MaxUntieredBytes)/(1<<20), 1), t.MaxLagMS)
		if t.BoundMS > 0 {
			v += fmt.Sprintf("  (%s of --tier-max-lag %d ms)", f(t.LagBoundRatio, 3), t.BoundMS)
		}
		add("tier 2", fmt.Sprintf("%s  (%d polls)", v, t.Polls))
	}
	if h := r.HostCPU; h != nil {
		add("host cpu %", fmt.Sprintf("busy %s  iowait %s  idle %s  stolen by the host %s", f(h.BusyPct, 1), f(h.IOWaitPct, 1), f(h.IdlePct, 1), f(h.StealPct, 1)))
	}
	for _, x := range r.PerSecond {
		v := fmt.Sprintf("%7d events  p50 %s  p99 %s  max %s", x.Events, f(x.P50, 3), f(x.P99, 3), f(x.Max, 3))
		if x.UntieredBytes != nil {
			v += fmt.Sprintf("  untiered %s MiB  lag %d ms", f(float64(*x.UntieredBytes)/(1<<20), 1), *x.TierLagMS)
		}
		if x.StealPct != nil {
			v += fmt.Sprintf("  cpu busy %s%%  stolen %s%%", f(*x.BusyPct, 0), f(*x.StealPct, 1))
		}
		if x.DiskMaxMS != nil {
			v += fmt.Sprintf("  disk canary max %s", f(*x.DiskMaxMS, 3))
		}
		add(fmt.Sprintf("second %d", x.Second), v)
	}
	if s := r.Scale; s != nil {
		if s.AskedMS > 0 {
			add("scale asked at ms", f(s.AskedMS, 0))
			add("scale request ms", f(s.CallMS, 1))
		}
		add("sealed at ms", f(s.SealedMS, 0))
		add("new segment acked at ms", f(s.ServedMS, 0))
		add("ack ms during scale", fmt.Sprintf("%s  (%d events)", lat(s.During), s.EventsDuring))
		add("ack ms otherwise", fmt.Sprintf("%s  (%d events)", lat(s.Outside), s.EventsOutside))
	}
	if x := r.Reaction; x != nil {
		add("target", f(x.Target, 0)+" events/s")
		add("reaction ms", fmt.Sprintf("total %s = decide %s + publish %s + serve %s  (detect %s before)",
			f(x.TotalMS, 0), f(x.DecideMS, 0), f(x.PublishMS, 0), f(x.ServeMS, 0), f(x.DetectMS, 0)))
		add("reason", x.Reason)
	}
	if x := r.Cold; x != nil {
		add("tier dir", x.TierDir)
		add("tiered bytes", fmt.Sprintf("%d  (all in tier 2 %ss after the fill; %d files, %d bytes dropped from the page cache)",
			x.TieredBytes, f(x.TierWaitSeconds, 1), x.Files, x.FileBytes))
		add("disk cold read MB/s", f(x.DiskReadMBPerS, 1)+"  (before "+f(x.DiskReadBeforeMBPerS, 1)+", after "+f(x.DiskReadAfterMBPerS, 1)+"; reference file of "+strconv.FormatInt(x.RefBytes, 10)+" bytes)")
		add("MB/s / disk cold read", f(x.Ratio, 3))
		add("stream files cold read MB/s", f(x.StreamFilesReadMBPerS, 1)+fmt.Sprintf("  (%d files, %d bytes; their first cold read before the stream's: ", x.StreamFiles, x.StreamFileBytes)+f(x.StreamFilesFirstReadMBPerS, 1)+")")
		add("MB/s / stream files cold read", f(x.FilesRatio, 3))
	}
	if m := r.Server; m != nil {
		mb := func(b int64) string { return f(float64(b)/(1<<20), 1) + " MiB" }
		if m.RSSBytes > 0 {
			add("server rss", mb(m.RSSBytes)+"  (peak "+mb(m.PeakRSSBytes)+")")
		}
		if m.HeapAllocBytes > 0 {
			add("server go heap", mb(m.HeapAllocBytes)+"  (in use "+mb(m.HeapInuseBytes)+", sys "+mb(m.SysBytes)+")")
			add("server goroutines", strconv.FormatInt(m.Goroutines, 10))
		}
	}
	return o
}

// hidden hides a flag from the help: the tools for finding a cost, not for
// running the benchmark.
func hidden(f *cli.GenericFlag) *cli.GenericFlag {
	f.Hidden = true
	return f
}
