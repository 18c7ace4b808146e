// Command pipeline is an example read-process-write job with exactly-once
// output across crashes: it reads the sensor readings examples/sensors
// writes (demo/sensors) with a reader group, counts each sensor's readings
// in tumbling event-time windows (-window, default 10s), and writes each
// closed window's result to an output stream (demo/sensor-counts) inside
// transactions, one JSON line per (sensor, window):
//
//	{"sensor":"sensor-03","window_start":"2026-01-01T00:00:10Z","window_end":"2026-01-01T00:00:20Z","count":97,"min_seq":88,"max_seq":184}
//
// Run it against `make run` (sluice standalone on 127.0.0.1:10080), from
// the repository's root, with examples/sensors as its input:
//
//	go run ./examples/sensors -sensors 8 -rate 200 &   # input, noting event time
//	go run ./examples/pipeline -window 10s              # until Ctrl-C; state in ./pipeline.state
//	bin/sluice read demo/sensor-counts                  # the results
//
// # Windows and event time
//
// A result's event time is its window's end: each commit notes the end of
// the windows closed so far (Txn.CommitAt), so the output stream has
// watermarks too, for a next stage that closes windows of its own.
//
// A window [start, end) of a sensor closes when the reader's
// CurrentTimeWindow().Lower reaches end: the stream's watermarks (computed
// by the controller from the writers' NoteTime calls, each a promise that
// the writer's later readings have times at or after the one noted) say
// that every reading with a time before Lower has been read, so the
// window's count is final and is never revised. A reading that arrives for a window already
// closed (a writer that broke its NoteTime promise) is late: it is counted
// in the "late" counter, reported on stderr and in the summary, and left
// out of the results. The job runs one reader (-reader-id): its time
// window covers every segment only while it holds every segment of the
// group, which the job checks in the group's state before it closes a
// window; several readers would each see the window of their own segments.
//
// # Exactly once
//
// The protocol is the two-phase commit of Flink's Pravega sink in its
// exactly-once mode, with the reader group checkpoint (which Pravega's
// Flink source ties to Flink's checkpoints) as the barrier.
// Every -checkpoint interval the job starts a checkpoint of its reader
// group; when its reader returns the checkpoint event (every reading before
// it is counted, none after it), the job
//
//  1. flushes the open transaction (the results of the windows closed since
//     the last checkpoint are stored, not visible),
//  2. waits for the checkpoint's stream cut and begins the next transaction
//     (unless the output stream is waiting to scale: see below),
//  3. saves its state in -state (temporary file, fsync, rename, fsync of the
//     directory): the cut, the open windows' partial counts, the closed
//     windows' bound and the late count, the flushed transaction's id and
//     its results, and the next transaction's id,
//  4. commits the flushed transaction, and goes on writing into the next.
//
// On start it loads the state, if any: it commits the recorded transaction
// (committing a committed one is success, so a crash after step 4 is
// harmless; one lost meanwhile, its lease run out, is written again from
// the results kept in the state), aborts the next one, resets the reader
// group to the recorded cut and restores the windows (a transaction begun
// at step 2 by a run that died before step 3 is in no state: it is left
// to its lease, and nothing commits it). So each reading
// before the cut is counted exactly once in the state and the committed
// output, and the readings after it are counted again from the cut, into
// results that were never committed. A crash between any two steps ends
// the same way; SLUICE_PIPELINE_CRASH=POINT:N makes the job kill itself
// the Nth time it reaches POINT (flushed, saved, committed: after steps
// 1, 3 and 4; ended: below), which the crash test uses besides random
// kills.
//
// # An output that scales
//
// With -output-target-rate N the output stream is created scaling by
// rate (BY_RATE_IN_EVENTS_PER_SEC, N events/s a segment, at least
// -segments). The job always holds a transaction open, and a scale waits
// for open transactions; so when the controller has recorded a pending
// scale, step 2's begin is refused (client.WithoutScaleWait): the job
// saves its state without a next transaction, commits, and only then
// begins the next one, which waits (BeginTxn retries) until the scale has
// run, and saves the same state again naming it. The output pauses for
// about one auto-scale interval at that checkpoint. A transaction a
// crashed run leaves to its lease (below) holds the output's next scale
// up, and with it the restarted job's first transaction, until the lease
// ends (-txn-lease).
//
// A sealed input read to its end ends every open window (no reading can
// come any more): the job closes them all, saves a final state marked
// ended, commits, and exits; a run that finds that state only finishes its
// transaction.
//
// What it does not cover: the results of windows closed after the last
// checkpoint appear only at the next one (output latency is up to
// -checkpoint); one job per group and state file at a time (two would
// share a reader id and a state); the state file is the job's place: it is
// as durable as its disk (put it on replicated storage to survive losing
// the disk), and a job started without it (another directory, a deleted
// file) starts the group again at the input's head and writes every
// result again; the input must not be truncated past the last
// checkpoint's cut while the job is down (the readings it would read
// again are gone).
//
// Flags: -controller (or SLUICE_CONTROLLER), -input and -output streams
// (the output is created, with -segments segments, if missing;
// -output-target-rate makes it scale by rate), -group
// (created at the input's head on the first run), -window, -checkpoint,
// -state, -txn-lease (a transaction not committed within it after a crash
// is written again), -watermark-poll and -commit-interval (how often the
// reader asks for watermarks and heartbeats).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sluice-streams/sluice/client"
)

// config is what the flags set.
type config struct {
	Controller     string
	Input, Output  string // SCOPE/STREAM
	Segments       int    // output segments if it is created
	OutputRate     int64  // > 0: the output is created BY_RATE_IN_EVENTS_PER_SEC with this target
	Group          string // reader group, in the input's scope
	ReaderID       string
	Window         time.Duration // tumbling event-time windows
	Checkpoint     time.Duration // how often to checkpoint (and commit)
	State          string        // state file
	TxnLease       time.Duration
	WatermarkPoll  time.Duration
	CommitInterval time.Duration
	SessionTimeout time.Duration
}

func main() {
	cfg := config{}
	controller := os.Getenv("SLUICE_CONTROLLER")
	if controller == "" {
		controller = "http://127.0.0.1:10080"
	}
	flag.StringVar(&cfg.Controller, "controller", controller, "controller `URL` (env SLUICE_CONTROLLER)")
	flag.StringVar(&cfg.Input, "input", "demo/sensors", "`SCOPE/STREAM` of readings to read")
	flag.StringVar(&cfg.Output, "output", "demo/sensor-counts", "`SCOPE/STREAM` to write the results to (created if missing)")
	flag.IntVar(&cfg.Segments, "segments", 1, "`N` segments of the output stream if it is created")
	flag.Int64Var(&cfg.OutputRate, "output-target-rate", 0, "create the output stream scaling by rate, `N` events/s a segment (0: a fixed -segments, at least -segments with a rate)")
	flag.StringVar(&cfg.Group, "group", "pipeline", "reader `GROUP` (in the input's scope; created at the head on the first run)")
	flag.StringVar(&cfg.ReaderID, "reader-id", "pipeline-1", "the reader's `ID` in the group (the same across restarts)")
	flag.DurationVar(&cfg.Window, "window", 10*time.Second, "tumbling event-time windows of `D`")
	flag.DurationVar(&cfg.Checkpoint, "checkpoint", 2*time.Second, "checkpoint and commit every `D`")
	flag.StringVar(&cfg.State, "state", "pipeline.state", "state `FILE`, saved at each checkpoint")
	flag.DurationVar(&cfg.TxnLease, "txn-lease", time.Minute, "output transactions' lease `D`")
	flag.DurationVar(&cfg.WatermarkPoll, "watermark-poll", client.DefaultWatermarkPoll, "ask the controller for watermarks every `D`")
	flag.DurationVar(&cfg.CommitInterval, "commit-interval", 200*time.Millisecond, "the reader heartbeats every `D`")
	flag.DurationVar(&cfg.SessionTimeout, "session-timeout", client.DefaultSessionTimeout, "reader group session timeout `D`")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	crash, err := parseCrash(os.Getenv("SLUICE_PIPELINE_CRASH"))
	if err == nil {
		err = run(ctx, cfg, crash, os.Stdout)
		if err != nil && ctx.Err() != nil {
			// Ctrl-C or SIGTERM while starting: a stop, not a failure.
			fmt.Fprintln(os.Stderr, "pipeline: stopped while starting:", err)
			err = nil
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}
