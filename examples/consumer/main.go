// Command consumer is an example reader-group consumer: it runs several
// readers in one reader group over the readings that examples/sensors
// writes, and prints per-sensor statistics (how many readings, temperature
// min/mean/max, the highest sequence number, and any sequence gap or
// repeat, which would mean a lost, duplicated or reordered reading).
//
// Run it against `make run` (sluice standalone on 127.0.0.1:10080) while or
// after examples/sensors writes, from the repository's root:
//
//	go run ./examples/consumer                    # 3 readers follow demo/sensors, stats every 5s, until Ctrl-C
//	go run ./examples/consumer -readers 5         # five readers share the segments
//	go run ./examples/consumer -max 1000          # stop after 1000 readings
//	go run ./examples/consumer -idle 2s           # stop when nothing arrives for 2s
//	go run ./examples/consumer -kill-after 500    # reader 1 dies after 500 readings; the others take over
//
// -controller (or SLUICE_CONTROLLER) and -stream select another deployment or
// stream; -group the reader group (default "consumer", created at the
// stream's head if missing). The readers share the stream's segments, each
// segment read by one reader at a time, at most ceil(segments/readers) each.
// Several consumers may run at once with the same -group: their readers all
// join the one group. A consumer that stops (Ctrl-C, -idle, -max) leaves the
// group at its exact position, so the next run continues with the next
// reading, nothing read twice.
//
// A reader that dies (a crash, a killed process; -kill-after simulates one
// by stopping reader 1 without a word to the group) stops heartbeating; after
// the session timeout (-session-timeout) the other readers take its segments
// from its last committed position (committed every -commit-interval). So no
// reading is lost, and the only readings read twice are those the dead reader
// returned after its last commit: at most one commit interval's worth. They
// show up as REPEATS.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
)

// Reading is one sensor reading (the JSON examples/sensors writes).
type Reading struct {
	Sensor       string    `json:"sensor"`
	Seq          int64     `json:"seq"`
	Time         time.Time `json:"time"`
	TemperatureC float64   `json:"temperature_c"`
	HumidityPct  float64   `json:"humidity_pct"`
}

// config is what the flags set.
type config struct {
	Controller     string
	Stream         string        // SCOPE/STREAM
	Group          string        // reader group, created at the head if missing
	Readers        int           // readers in the group
	Max            int64         // stop after this many readings (0: no limit)
	Idle           time.Duration // stop when nothing arrives for this long (0: never)
	Every          time.Duration // print the statistics this often (0: only at the end)
	KillAfter      int64         // reader 1 dies after this many readings (0: never)
	SessionTimeout time.Duration // 0: client.DefaultSessionTimeout
	CommitInterval time.Duration // 0: client.DefaultCommitInterval
}

// sensorStats are one sensor's statistics.
type sensorStats struct {
	Count         int64
	Min, Max, Sum float64 // temperature
	LastSeq       int64   // the highest sequence number seen
	Gaps, Repeats int64   // sequence numbers skipped, and readings not above the highest seen
	hasLast       bool
}

func (s *sensorStats) add(r Reading) {
	if s.Count == 0 {
		s.Min, s.Max = math.Inf(1), math.Inf(-1)
	}
	s.Count++
	s.Sum += r.TemperatureC
	s.Min, s.Max = math.Min(s.Min, r.TemperatureC), math.Max(s.Max, r.TemperatureC)
	switch {
	case !s.hasLast: // the first one seen; a consumer may start mid-stream
	case r.Seq == s.LastSeq+1:
	case r.Seq > s.LastSeq+1:
		s.Gaps += r.Seq - s.LastSeq - 1
	default: // seen again (a dead reader's readings read again) or out of order
		s.Repeats++
		return
	}
	s.LastSeq, s.hasLast = r.Seq, true
}

// result is what consume returns.
type result struct {
	Stats map[string]*sensorStats
	// PerReader is how many readings each reader returned.
	PerReader map[string]int64
	// Killed is the reader -kill-after stopped ("" if none), and Replay
	// how many of its readings it returned after its last commit: the
	// group reads those again, and no others.
	Killed string
	Replay int64
}

func main() {
	cfg := config{}
	controller := os.Getenv("SLUICE_CONTROLLER")
	if controller == "" {
		controller = "http://127.0.0.1:10080"
	}
	flag.StringVar(&cfg.Controller, "controller", controller, "controller `URL` (env SLUICE_CONTROLLER)")
	flag.StringVar(&cfg.Stream, "stream", "demo/sensors", "`SCOPE/STREAM` to read")
	flag.StringVar(&cfg.Group, "group", "consumer", "reader `GROUP` (in the stream's scope; created at the head if missing)")
	flag.IntVar(&cfg.Readers, "readers", 3, "`N` readers in the group")
	flag.Int64Var(&cfg.Max, "max", 0, "stop after `N` readings (0: no limit)")
	flag.DurationVar(&cfg.Idle, "idle", 0, "stop when no reading arrives for `D` (0: wait for ever)")
	flag.DurationVar(&cfg.Every, "every", 5*time.Second, "print the statistics every `D` (0: only at the end)")
	flag.Int64Var(&cfg.KillAfter, "kill-after", 0, "demo: reader 1 dies after `N` readings (no leave, no last commit)")
	flag.DurationVar(&cfg.SessionTimeout, "session-timeout", client.DefaultSessionTimeout, "a reader silent for `D` is dead: the others take its segments")
	flag.DurationVar(&cfg.CommitInterval, "commit-interval", client.DefaultCommitInterval, "readers commit their positions every `D`")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := consume(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

// consumer is the state the readers share, under mu.
type consumer struct {
	cfg config
	out io.Writer

	mu        sync.Mutex
	stats     map[string]*sensorStats
	perReader map[string]int64
	n, bad    int64 // events, and those that are not readings
	reserved  int64 // events readers may still take under -max
	last      time.Time
	err       error
	killed    string
	replay    int64
}

// consume runs cfg.Readers readers of group cfg.Group until cfg.Max readings,
// cfg.Idle without one, the end of a sealed stream, an error or ctx (Ctrl-C),
// printing the statistics on out every cfg.Every and at the end. The readers
// leave the group at their exact positions.
func consume(ctx context.Context, cfg config, out io.Writer) (*result, error) {
	scope, stream, ok := strings.Cut(cfg.Stream, "/")
	if !ok || scope == "" || stream == "" {
		return nil, fmt.Errorf("-stream %q: want SCOPE/STREAM", cfg.Stream)
	}
	if cfg.Readers < 1 {
		return nil, fmt.Errorf("-readers %d: want at least 1", cfg.Readers)
	}
	if cfg.Group == "" {
		cfg.Group = "consumer"
	}
	cl, err := client.New(ctx, cfg.Controller)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var gopts []client.GroupOption
	if cfg.SessionTimeout > 0 {
		gopts = append(gopts, client.WithSessionTimeout(cfg.SessionTimeout))
	}
	if cfg.CommitInterval > 0 {
		gopts = append(gopts, client.WithCommitInterval(cfg.CommitInterval))
	}
	g, err := cl.NewReaderGroup(ctx, scope, cfg.Group, stream, append(gopts, client.GroupFrom(client.FromHead()))...)
	if errors.Is(err, ctlclient.ErrExists) {
		g, err = cl.ReaderGroup(scope, cfg.Group)
	}
	if err != nil {
		return nil, err
	}

	c := &consumer{cfg: cfg, out: out, stats: map[string]*sensorStats{}, perReader: map[string]int64{},
		reserved: cfg.Max, last: time.Now()}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	host, _ := os.Hostname()
	var wg sync.WaitGroup
	for i := 1; i <= cfg.Readers; i++ {
		// Unique across consumers sharing the group.
		id := fmt.Sprintf("%s-%d-r%d", host, os.Getpid(), i)
		gr, err := cl.JoinReaderGroup(ctx, scope, cfg.Group, id, gopts...)
		if err != nil {
			stop()
			wg.Wait()
			return nil, fmt.Errorf("join %s as %s: %w", cfg.Group, id, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.read(runCtx, stop, g, gr, i == 1 && cfg.KillAfter > 0)
		}()
	}
	// Once every reader has stopped (the stream read, -max reached), so
	// does the watch.
	go func() {
		wg.Wait()
		stop()
	}()
	c.watch(runCtx, stop)
	wg.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.print()
	res := &result{Stats: c.stats, PerReader: c.perReader, Killed: c.killed, Replay: c.replay}
	if c.err != nil && ctx.Err() == nil {
		return res, c.err
	}
	return res, nil
}

// watch prints the statistics every cfg.Every and stops the readers once
// nothing arrived for cfg.Idle or every reader has stopped. It polls those
// conditions every 20 ms.
func (c *consumer) watch(ctx context.Context, stop context.CancelFunc) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	lastPrint := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.mu.Lock()
		idle := c.cfg.Idle > 0 && time.Since(c.last) >= c.cfg.Idle
		if c.cfg.Every > 0 && time.Since(lastPrint) >= c.cfg.Every {
			c.print()
			lastPrint = time.Now()
		}
		c.mu.Unlock()
		if idle {
			stop()
			return
		}
	}
}

// read is one reader's loop: ReadNext, count, until ctx is done, the group
// has read the whole sealed stream, -max is reached or an error (which
// stops every reader). Then it leaves the group at its exact position,
// unless it is the reader that -kill-after kills.
func (c *consumer) read(ctx context.Context, stop context.CancelFunc, g *client.ReaderGroup, gr *client.GroupReader, dies bool) {
	var mine []client.Event // the dying reader's events, to count its replay
	var n int64
	defer func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := gr.Close(lctx); err != nil {
			c.fail(stop, fmt.Errorf("reader %s: leave: %w", gr.ID(), err))
		}
	}()
	for {
		// With -max, each ReadNext first takes one reading of the budget.
		// A reader that finds it spent leaves; the others finish the
		// readings they hold (the group gives them the leaver's segments)
		// and leave in turn. Stopping them all here instead would cut off
		// readers whose reservation is about to be read, and -max would
		// count fewer readings than asked.
		if !c.reserve() {
			return
		}
		ev, err := gr.ReadNext(ctx)
		if err != nil {
			c.unreserve()
			switch {
			case errors.Is(err, client.ErrEndOfStream), ctx.Err() != nil:
			default:
				c.fail(stop, fmt.Errorf("reader %s: %w", gr.ID(), err))
			}
			return
		}
		if ev.IsCheckpoint() {
			// A checkpoint of the group (`sluice readergroup checkpoint`):
			// no reading; this consumer keeps no state to save there.
			c.unreserve()
			continue
		}
		c.add(gr.ID(), ev)
		n++
		if dies {
			mine = append(mine, ev)
			if n >= c.cfg.KillAfter {
				c.die(ctx, g, gr, mine)
				return
			}
		}
	}
}

// die stops gr the way a crash would: no more heartbeats, and no last
// commit (Close with a context that is already done cannot reach the
// controller). It then counts the readings gr returned after its last
// commit, which the group will read again.
func (c *consumer) die(ctx context.Context, g *client.ReaderGroup, gr *client.GroupReader, mine []client.Event) {
	dead, cancel := context.WithCancel(ctx)
	cancel()
	gr.Close(dead) // fails to reach the controller, by design
	st, _, _, err := g.State(ctx)
	var replay int64
	if err == nil {
		if m := st.Readers[gr.ID()]; m != nil {
			for _, ev := range mine {
				if off, ok := m.Segments[ev.Segment]; ok && ev.Offset >= off {
					replay++
				}
			}
		}
	}
	c.mu.Lock()
	c.killed, c.replay = gr.ID(), replay
	c.mu.Unlock()
	fmt.Fprintf(os.Stderr, "consumer: reader %s died after %d readings; %d of them came after its last commit and will be read again\n",
		gr.ID(), len(mine), replay)
}

// reserve takes one reading of -max's budget (always true without -max).
func (c *consumer) reserve() bool {
	if c.cfg.Max == 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reserved == 0 {
		return false
	}
	c.reserved--
	return true
}

func (c *consumer) unreserve() {
	if c.cfg.Max == 0 {
		return
	}
	c.mu.Lock()
	c.reserved++
	c.mu.Unlock()
}

func (c *consumer) add(reader string, ev client.Event) {
	var rd Reading
	jerr := json.Unmarshal(ev.Data, &rd)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.perReader[reader]++
	c.last = time.Now()
	if jerr != nil || rd.Sensor == "" {
		c.bad++ // not a reading: another program wrote to the stream
		return
	}
	s := c.stats[rd.Sensor]
	if s == nil {
		s = &sensorStats{}
		c.stats[rd.Sensor] = s
	}
	s.add(rd)
}

func (c *consumer) fail(stop context.CancelFunc, err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	stop()
}

// print prints a summary line (n events, bad of them not readings), then
// one line per sensor, sorted by sensor. c.mu is held.
func (c *consumer) print() {
	out := c.out
	names := make([]string, 0, len(c.stats))
	for k := range c.stats {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "%d readings from %d sensors", c.n-c.bad, len(c.stats))
	if c.bad > 0 {
		fmt.Fprintf(out, " (and %d other events)", c.bad)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SENSOR\tREADINGS\tMIN °C\tMEAN °C\tMAX °C\tLAST SEQ\tGAPS\tREPEATS")
	for _, k := range names {
		s := c.stats[k]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.1f\t%d\t%d\t%d\n", k, s.Count, s.Min, s.Sum/float64(s.Count), s.Max, s.LastSeq, s.Gaps, s.Repeats)
	}
	tw.Flush()
}
