// Command sensors is an example producer: it simulates N sensors, each
// writing a JSON reading at a steady rate to a Sluice stream, with the
// sensor's id as the routing key, so each sensor's readings stay in order.
// It creates the scope and the stream if they are missing.
//
// Run it against `make run` (sluice standalone on 127.0.0.1:10080), from the
// repository's root in another shell:
//
//	go run ./examples/sensors -sensors 8 -rate 200        # until Ctrl-C
//	go run ./examples/sensors -count 1000                  # 1000 readings, then exit
//	go run ./examples/sensors -count 3000 -seed 7 -rate 2000  # a fixed input: the same 3000 readings every time
//
// Event time: the writer notes the time of its next reading
// (Writer.NoteTime) every -note-every readings and once more at the end
// (plus -final-note), so the stream's watermarks advance and a reader's
// CurrentTimeWindow tells which event-time windows are complete
// (examples/pipeline closes its windows by it). Readings carry the wall
// clock's time; with -seed they are a fixed input instead: each reading's
// sensor is drawn from a random source seeded with -seed, and reading n
// has the time -start + n * -step, so two runs with the same flags write
// the same readings.
//
// -controller (or the environment variable SLUICE_CONTROLLER) names another
// controller; -stream another stream (default demo/sensors, created with
// -segments segments). Read the readings back with examples/consumer or
// `bin/sluice read demo/sensors`.
//
// A reading is one line of JSON:
//
//	{"sensor":"sensor-03","seq":41,"time":"2026-11-30T10:00:00.123Z","temperature_c":21.7,"humidity_pct":44.2}
//
// seq counts each sensor's readings from 0, so a consumer can check that none
// is lost, duplicated or reordered.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Reading is one sensor reading, as written to the stream.
type Reading struct {
	Sensor       string    `json:"sensor"`
	Seq          int64     `json:"seq"`
	Time         time.Time `json:"time"`
	TemperatureC float64   `json:"temperature_c"`
	HumidityPct  float64   `json:"humidity_pct"`
}

// config is what the flags set.
type config struct {
	Controller string        // controller URL
	Stream     string        // SCOPE/STREAM
	Segments   int           // segments of the stream if it is created
	Sensors    int           // simulated sensors
	Rate       float64       // readings per second, all sensors together
	Count      int64         // stop after this many readings (0: until interrupted)
	Timeout    time.Duration // how long to wait for the last acknowledgements
	Seed       int64         // nonzero: a fixed input (sensors drawn from this seed, synthetic times)
	Start      time.Time     // with Seed: the first reading's time
	Step       time.Duration // with Seed: the time between two readings
	NoteEvery  int64         // note event time every this many readings (0: only at the end)
	FinalNote  time.Duration // the last note is this much after the next reading's time
}

func main() {
	cfg := config{}
	controller := os.Getenv("SLUICE_CONTROLLER")
	if controller == "" {
		controller = "http://127.0.0.1:10080"
	}
	flag.StringVar(&cfg.Controller, "controller", controller, "controller `URL` (env SLUICE_CONTROLLER)")
	flag.StringVar(&cfg.Stream, "stream", "demo/sensors", "`SCOPE/STREAM` to write to (created if missing)")
	flag.IntVar(&cfg.Segments, "segments", 4, "`N` segments if the stream is created")
	flag.IntVar(&cfg.Sensors, "sensors", 10, "`N` simulated sensors")
	flag.Float64Var(&cfg.Rate, "rate", 100, "readings per second, all sensors together")
	flag.Int64Var(&cfg.Count, "count", 0, "stop after `N` readings (0: run until Ctrl-C)")
	flag.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "wait at most `D` for the last acknowledgements")
	flag.Int64Var(&cfg.Seed, "seed", 0, "nonzero: a fixed input: sensors drawn from seed `S`, times from -start by -step")
	start := flag.String("start", "2026-01-01T00:00:00Z", "with -seed: the first reading's `TIME` (RFC 3339)")
	flag.DurationVar(&cfg.Step, "step", 10*time.Millisecond, "with -seed: event time `D` between two readings")
	flag.Int64Var(&cfg.NoteEvery, "note-every", 100, "note event time (watermarks) every `N` readings (0: only at the end)")
	flag.DurationVar(&cfg.FinalNote, "final-note", 0, "the last time noted is `D` after the next reading's time (closes event-time windows up to there)")
	flag.Parse()
	var err error
	if cfg.Start, err = time.Parse(time.RFC3339Nano, *start); err != nil {
		fmt.Fprintf(os.Stderr, "sensors: -start %q: %v\n", *start, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := produce(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sensors:", err)
		os.Exit(1)
	}
}

// produce writes readings until cfg.Count are written or ctx is done, then
// waits until every one is acknowledged (durable) and prints a summary on
// out. It returns how many readings were written.
func produce(ctx context.Context, cfg config, out io.Writer) (int64, error) {
	scope, stream, ok := strings.Cut(cfg.Stream, "/")
	if !ok || scope == "" || stream == "" {
		return 0, fmt.Errorf("-stream %q: want SCOPE/STREAM", cfg.Stream)
	}
	if cfg.Sensors < 1 || cfg.Rate <= 0 {
		return 0, fmt.Errorf("want at least one sensor and a rate above 0")
	}
	if cfg.Seed != 0 && cfg.Step <= 0 {
		return 0, fmt.Errorf("-step %v: want a step above 0 with -seed", cfg.Step)
	}
	if cfg.NoteEvery < 0 || cfg.FinalNote < 0 {
		return 0, fmt.Errorf("want -note-every and -final-note at least 0")
	}
	if err := ensureStream(ctx, ctlclient.NewClient(cfg.Controller), scope, stream, cfg.Segments); err != nil {
		return 0, err
	}
	cl, err := client.New(ctx, cfg.Controller)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	w, err := cl.NewWriter(ctx, scope, stream)
	if err != nil {
		return 0, err
	}

	interval := time.Duration(float64(time.Second) / cfg.Rate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	seqs := make([]int64, cfg.Sensors)
	start := time.Now()
	var rng *rand.Rand
	if cfg.Seed != 0 {
		rng = rand.New(rand.NewPCG(uint64(cfg.Seed), 0))
	}
	// eventTime is the time of reading n: the wall clock's, or with -seed
	// the fixed one.
	eventTime := func(n int64) time.Time {
		if rng == nil {
			return time.Now()
		}
		return cfg.Start.Add(time.Duration(n) * cfg.Step)
	}
	var n int64
	for cfg.Count == 0 || n < cfg.Count {
		if n > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		if cfg.NoteEvery > 0 && n > 0 && n%cfg.NoteEvery == 0 {
			// Every reading from here on has a time at or after this.
			if err := w.NoteTime(ctx, eventTime(n)); err != nil {
				if ctx.Err() != nil {
					break
				}
				return n, fmt.Errorf("note event time: %w", err)
			}
		}
		i := int(n % int64(cfg.Sensors))
		if rng != nil {
			i = rng.IntN(cfg.Sensors)
		}
		r := simulate(i, seqs[i], eventTime(n))
		seqs[i]++
		event, err := json.Marshal(r)
		if err != nil {
			return n, err
		}
		// The routing key keeps each sensor's readings in order. The Ack
		// is not waited for here: Close below waits for all of them.
		if _, err := w.Write(ctx, r.Sensor, event); err != nil {
			if ctx.Err() != nil {
				break
			}
			return n, err
		}
		n++
	}
	// ctx may be done (Ctrl-C): the acknowledgements get their own time.
	cctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	if n > 0 {
		// The last note: no reading of this writer comes before this time
		// any more, so the windows before it can close. A closed writer's
		// notes no longer count, so Close waits until a watermark has it.
		final := eventTime(n).Add(cfg.FinalNote)
		if err := w.NoteTime(cctx, final); err != nil {
			return n, fmt.Errorf("note the final event time: %w", err)
		}
		if err := awaitWatermark(cctx, ctlclient.NewClient(cfg.Controller), scope, stream, final); err != nil {
			fmt.Fprintf(os.Stderr, "sensors: the final event time %s is not in a watermark of %s yet: %v\n",
				final.Format(time.RFC3339Nano), cfg.Stream, err)
		}
	}
	if err := w.Close(cctx); err != nil {
		return n, fmt.Errorf("not every reading was acknowledged: %w", err)
	}
	fmt.Fprintf(out, "wrote %d readings from %d sensors to %s in %v\n", n, min(int64(cfg.Sensors), n), cfg.Stream, time.Since(start).Round(time.Millisecond))
	return n, nil
}

// awaitWatermark polls the stream's watermarks until one's lower time is
// at or after t, or ctx is done.
func awaitWatermark(ctx context.Context, ctl *ctlclient.Client, scope, stream string, t time.Time) error {
	var after int64
	for {
		marks, err := ctl.Watermarks(ctx, scope, stream, after)
		if err != nil {
			return err
		}
		for _, m := range marks {
			if m.LowerTime >= t.UnixMilli() {
				return nil
			}
			after = max(after, m.Seq)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling the controller
		}
	}
}

// ensureStream creates scope and stream unless they exist.
func ensureStream(ctx context.Context, ctl *ctlclient.Client, scope, stream string, segments int) error {
	if err := ctl.CreateScope(ctx, scope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return fmt.Errorf("create scope %s: %w", scope, err)
	}
	_, err := ctl.CreateStream(ctx, api.StreamConfig{ScopeName: scope, StreamName: stream,
		ScalingPolicy: api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(max(segments, 1))}})
	if err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return fmt.Errorf("create stream %s/%s: %w", scope, stream, err)
	}
	return nil
}

// simulate returns sensor i's reading number seq: a slow daily-like wave
// per sensor, so readings look plausible and are reproducible.
func simulate(i int, seq int64, now time.Time) Reading {
	phase := float64(seq)/50 + float64(i)
	return Reading{
		Sensor:       fmt.Sprintf("sensor-%02d", i),
		Seq:          seq,
		Time:         now.UTC(),
		TemperatureC: math.Round((20+float64(i%5)+3*math.Sin(phase))*10) / 10,
		HumidityPct:  math.Round((45+10*math.Cos(phase))*10) / 10,
	}
}
