// Command consumer is an example reader: it reads the readings that
// examples/sensors writes and prints per-sensor statistics (how many
// readings, temperature min/mean/max, the last sequence number, and any
// sequence gap or repeat, which would mean a lost, duplicated or reordered
// reading).
//
// Run it against `make run` (sluice standalone on 127.0.0.1:10080) while or
// after examples/sensors writes, from the repository's root:
//
//	go run ./examples/consumer                 # follow demo/sensors, stats every 5s, until Ctrl-C
//	go run ./examples/consumer -max 1000       # stop after 1000 readings
//	go run ./examples/consumer -idle 2s        # stop when nothing arrives for 2s
//
// -controller (or SLUICE_CONTROLLER) and -stream select another deployment or
// stream.
//
// It runs one reader, which reads every segment of the stream. Sluice's
// client has no reader groups yet; when it does, this example will run
// several readers in a group that share the segments and take over a
// stopped reader's segments from its last position.
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
	"text/tabwriter"
	"time"

	"github.com/sluice-streams/sluice/client"
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
	Controller string
	Stream     string        // SCOPE/STREAM
	Max        int64         // stop after this many readings (0: no limit)
	Idle       time.Duration // stop when nothing arrives for this long (0: never)
	Every      time.Duration // print the statistics this often (0: only at the end)
}

// sensorStats are one sensor's statistics.
type sensorStats struct {
	Count         int64
	Min, Max, Sum float64 // temperature
	LastSeq       int64
	Gaps, Repeats int64 // sequence numbers skipped, and seen again or out of order
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
	default:
		s.Repeats++
	}
	s.LastSeq, s.hasLast = r.Seq, true
}

func main() {
	cfg := config{}
	controller := os.Getenv("SLUICE_CONTROLLER")
	if controller == "" {
		controller = "http://127.0.0.1:10080"
	}
	flag.StringVar(&cfg.Controller, "controller", controller, "controller `URL` (env SLUICE_CONTROLLER)")
	flag.StringVar(&cfg.Stream, "stream", "demo/sensors", "`SCOPE/STREAM` to read")
	flag.Int64Var(&cfg.Max, "max", 0, "stop after `N` readings (0: no limit)")
	flag.DurationVar(&cfg.Idle, "idle", 0, "stop when no reading arrives for `D` (0: wait for ever)")
	flag.DurationVar(&cfg.Every, "every", 5*time.Second, "print the statistics every `D` (0: only at the end)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := consume(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

// consume reads the stream from its head until cfg.Max readings, cfg.Idle
// without one, the end of a sealed stream or ctx (Ctrl-C), printing the
// statistics on out every cfg.Every and at the end. It returns them.
func consume(ctx context.Context, cfg config, out io.Writer) (map[string]*sensorStats, error) {
	scope, stream, ok := strings.Cut(cfg.Stream, "/")
	if !ok || scope == "" || stream == "" {
		return nil, fmt.Errorf("-stream %q: want SCOPE/STREAM", cfg.Stream)
	}
	cl, err := client.New(ctx, cfg.Controller)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	r, err := cl.NewReader(ctx, scope, stream, client.FromHead())
	if err != nil {
		return nil, err
	}
	defer r.Close()

	stats := map[string]*sensorStats{}
	var n, bad int64
	lastPrint := time.Now()
	for cfg.Max == 0 || n < cfg.Max {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if cfg.Idle > 0 {
			rctx, cancel = context.WithTimeout(ctx, cfg.Idle)
		}
		if cfg.Every > 0 && cfg.Idle == 0 {
			// Wake up to print even when no reading arrives.
			rctx, cancel = context.WithDeadline(ctx, lastPrint.Add(cfg.Every))
		}
		ev, err := r.ReadNext(rctx)
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, client.ErrEndOfStream), ctx.Err() != nil:
			printStats(out, stats, n, bad)
			return stats, nil
		case errors.Is(err, context.DeadlineExceeded) && cfg.Idle > 0:
			printStats(out, stats, n, bad)
			return stats, nil
		case errors.Is(err, context.DeadlineExceeded):
			// The -every deadline: print below.
		default:
			return stats, err
		}
		if err == nil {
			n++
			var rd Reading
			if jerr := json.Unmarshal(ev.Data, &rd); jerr != nil || rd.Sensor == "" {
				bad++ // not a reading: another program wrote to the stream
			} else {
				s := stats[rd.Sensor]
				if s == nil {
					s = &sensorStats{}
					stats[rd.Sensor] = s
				}
				s.add(rd)
			}
		}
		if cfg.Every > 0 && time.Since(lastPrint) >= cfg.Every {
			printStats(out, stats, n, bad)
			lastPrint = time.Now()
		}
	}
	printStats(out, stats, n, bad)
	return stats, nil
}

// printStats prints a summary line (n events, bad of them not readings),
// then one line per sensor, sorted by sensor.
func printStats(out io.Writer, stats map[string]*sensorStats, n, bad int64) {
	names := make([]string, 0, len(stats))
	for k := range stats {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "%d readings from %d sensors", n-bad, len(stats))
	if bad > 0 {
		fmt.Fprintf(out, " (and %d other events)", bad)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SENSOR\tREADINGS\tMIN °C\tMEAN °C\tMAX °C\tLAST SEQ\tGAPS\tREPEATS")
	for _, k := range names {
		s := stats[k]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.1f\t%d\t%d\t%d\n", k, s.Count, s.Min, s.Sum/float64(s.Count), s.Max, s.LastSeq, s.Gaps, s.Repeats)
	}
	tw.Flush()
}
