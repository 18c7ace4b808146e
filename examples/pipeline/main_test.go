package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/internal/proctest"
	"github.com/sluice-streams/sluice/protocol/api"
)

// The binaries the tests run as child processes, built by TestMain.
var pipelineBin, sensorsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pipeline-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pipelineBin, sensorsBin = filepath.Join(dir, "pipeline"), filepath.Join(dir, "sensors")
	for bin, pkg := range map[string]string{pipelineBin: "./", sensorsBin: "../sensors"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// windowKey names one (sensor, window) result.
type windowKey struct {
	Sensor string
	Start  time.Time
}

// job is one test's deployment, input and pipeline settings.
type job struct {
	t      *testing.T
	d      *clienttest.Deployment
	cl     *client.Client
	state  string
	window time.Duration
}

func newJob(t *testing.T) *job {
	d := clienttest.Start(t, clienttest.WithWatermarks(100*time.Millisecond, 10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.New(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return &job{t: t, d: d, cl: cl, state: filepath.Join(t.TempDir(), "pipeline.state"), window: 2 * time.Second}
}

// sensors runs examples/sensors: n readings of k sensors drawn from seed,
// 10 ms of event time apart, noting the time every 50 readings and an
// hour past the last reading at the end (which closes every window).
func (j *job) sensors(n, k int, seed int64, rate int) *proctest.Proc {
	return proctest.Start(j.t, sensorsBin, "sensors", nil, "-controller", j.d.URL, "-stream", "demo/sensors",
		"-segments", "3", "-sensors", strconv.Itoa(k), "-count", strconv.Itoa(n), "-seed", strconv.FormatInt(seed, 10),
		"-rate", strconv.Itoa(rate), "-step", "10ms", "-note-every", "50", "-final-note", "1h")
}

func waitExit(t *testing.T, p *proctest.Proc, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v", p.Name, timeout)
	}
}

// wroteInput waits for the sensors process s to exit, having written the
// input.
func wroteInput(t *testing.T, s *proctest.Proc) {
	t.Helper()
	waitExit(t, s, 60*time.Second)
	if s.Err() != nil {
		t.Fatalf("sensors: %v\n%s", s.Err(), s.Logs())
	}
}

// pipeline starts the pipeline process (env: SLUICE_PIPELINE_CRASH=...).
func (j *job) pipeline(env ...string) *proctest.Proc {
	return proctest.Start(j.t, pipelineBin, "pipeline", env, "-controller", j.d.URL, "-state", j.state,
		"-window", j.window.String(), "-checkpoint", "300ms", "-watermark-poll", "100ms", "-commit-interval", "100ms",
		"-txn-lease", "30s")
}

// expected reads the n input readings back and counts them per
// (sensor, window), as the pipeline should.
func (j *job) expected(n int) map[windowKey]Result {
	t := j.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := j.cl.NewReader(ctx, "demo", "sensors")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := windows{Size: j.window}
	for range n {
		ev, err := r.ReadNext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rd Reading
		if err := json.Unmarshal(ev.Data, &rd); err != nil {
			t.Fatal(err)
		}
		w.add(rd)
	}
	want := map[windowKey]Result{}
	for _, res := range w.close(time.Unix(1<<40, 0)) {
		want[windowKey{res.Sensor, res.Start}] = res
	}
	return want
}

// output follows the output stream.
type output struct {
	r   *client.Reader
	got map[windowKey][]Result
	n   int
}

func (j *job) output() *output {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r *client.Reader
	proctest.WaitFor(j.t, "the output stream", 30*time.Second, func() (bool, string) {
		var err error
		r, err = j.cl.NewReader(ctx, "demo", "sensor-counts")
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	j.t.Cleanup(func() { r.Close() })
	return &output{r: r, got: map[windowKey][]Result{}}
}

// drain takes in what the output holds now (until wait passes without an
// event); it reports whether the stream has ended (sealed).
func (o *output) drain(t *testing.T, wait time.Duration) bool {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		ev, err := o.r.ReadNext(ctx)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return false
		case errors.Is(err, client.ErrEndOfStream):
			return true
		case err != nil:
			t.Fatal(err)
		}
		var res Result
		if err := json.Unmarshal(ev.Data, &res); err != nil {
			t.Fatalf("output event %q: %v", ev.Data, err)
		}
		k := windowKey{res.Sensor, res.Start.UTC()}
		o.got[k] = append(o.got[k], res)
		o.n++
	}
}

// missing describes how the output differs from want so far: results
// missing, or (fatal, since committed output is final) wrong or repeated.
func (o *output) missing(t *testing.T, want map[windowKey]Result) int {
	t.Helper()
	for k, rs := range o.got {
		w, ok := want[k]
		if !ok {
			t.Fatalf("output has %+v, a window that holds no reading", rs[0])
		}
		if len(rs) > 1 {
			t.Fatalf("window %s %s written %d times: %+v", k.Sensor, k.Start, len(rs), rs)
		}
		if r := rs[0]; r.Count != w.Count || r.MinSeq != w.MinSeq || r.MaxSeq != w.MaxSeq || !r.End.Equal(w.End) {
			t.Fatalf("window %s %s: got %+v, want %+v", k.Sensor, k.Start, r, w)
		}
	}
	return len(want) - len(o.got)
}

// awaitResults waits until out has read every result of want, and stops
// the pipeline p.
func awaitResults(t *testing.T, p *proctest.Proc, want map[windowKey]Result, out *output) {
	t.Helper()
	proctest.WaitFor(t, "every window's result", 60*time.Second, func() (bool, string) {
		out.drain(t, 50*time.Millisecond)
		m := out.missing(t, want)
		return m == 0, fmt.Sprintf("%d of %d results missing", m, len(want))
	})
	p.Stop(t, 30*time.Second)
}

// wantExactly reads the sealed output to its end and checks that it
// holds every result of want exactly once.
func wantExactly(t *testing.T, want map[windowKey]Result, out *output) {
	t.Helper()
	proctest.WaitFor(t, "the end of the sealed output", 30*time.Second, func() (bool, string) {
		return out.drain(t, 100*time.Millisecond), "not at the end"
	})
	if m := out.missing(t, want); m != 0 || out.n != len(want) {
		t.Fatalf("%d results read, %d missing; want %d results", out.n, m, len(want))
	}
}

// finish waits for every result, stops the pipeline, seals the output and
// checks that it holds every (sensor, window) exactly once, counted right.
func (j *job) finish(p *proctest.Proc, want map[windowKey]Result, out *output) {
	t := j.t
	awaitResults(t, p, want, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.d.Controller.SealStream(ctx, "demo", "sensor-counts"); err != nil {
		t.Fatal(err)
	}
	wantExactly(t, want, out)
	var total int64
	for _, w := range want {
		total += w.Count
	}
	t.Logf("output: %d window results, counting %d readings", out.n, total)
}

// TestPipeline: a fixed input of 1500 readings of 5 sensors, written
// first; the pipeline counts them; the output holds every (sensor,
// window) exactly once with the counts computed from the input.
func TestPipeline(t *testing.T) {
	j := newJob(t)
	const n = 1500
	wroteInput(t, j.sensors(n, 5, 11, 20000))
	want := j.expected(n)
	p := j.pipeline()
	out := j.output()

	// The commits note event time: the output's watermarks reach the end
	// of the last window.
	var last time.Time
	for _, w := range want {
		if w.End.After(last) {
			last = w.End
		}
	}
	proctest.WaitFor(t, "the output's watermark at the last window's end", 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		marks, err := j.d.Controller.Watermarks(ctx, "demo", "sensor-counts", 0)
		if err != nil || len(marks) == 0 {
			return false, fmt.Sprintf("%v, %v", marks, err)
		}
		return marks[len(marks)-1].LowerTime >= last.UnixMilli(), fmt.Sprint(time.UnixMilli(marks[len(marks)-1].LowerTime).UTC())
	})
	j.finish(p, want, out)
	if !strings.Contains(p.Logs(), "readings counted, 0 late,") {
		t.Fatalf("the pipeline counted late readings:\n%s", p.Logs())
	}
}

// TestPipelineCrash: the same, with the input written while the pipeline
// runs, and the pipeline killed with SIGKILL at random moments (seeded;
// the seed is logged) and at the named points of a checkpoint (after the
// flush, after the state is saved and before the commit, after the
// commit), restarted each time. The output must hold every (sensor,
// window) exactly once with the exact counts: nothing lost, nothing
// counted twice. SLUICE_SOAK=1 runs more readings and at least 20 kills.
func TestPipelineCrash(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("SLUICE_PIPELINE_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("SLUICE_PIPELINE_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (SLUICE_PIPELINE_SEED=%d repeats the kill times)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	n, rate, randomKills := 3000, 1500, 3
	if os.Getenv("SLUICE_SOAK") != "" {
		n, rate, randomKills = 12000, 600, 20
	}
	points := []string{crashSaved + ":1", crashFlushed + ":2", crashCommitted + ":1"}
	// Kill rounds: random kills with the named points among them, a
	// random one first.
	var rounds []string
	for i := 0; i < randomKills || len(points) > 0; i++ {
		if len(points) > 0 && (i%2 == 1 || i >= randomKills) {
			rounds = append(rounds, points[0])
			points = points[1:]
		}
		if i < randomKills {
			rounds = append(rounds, "")
		}
	}

	j := newJob(t)
	s := j.sensors(n, 5, seed%1000+1, rate)
	proctest.WaitFor(t, "sensors to create the input stream", 30*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := j.d.Controller.GetStream(ctx, "demo", "sensors")
		return err == nil, fmt.Sprint(err)
	})
	var out *output // once the first run has created the output stream
	var p *proctest.Proc
	afterSaved := false
	for i, round := range rounds {
		if round == "" {
			p = j.pipeline()
			// One kill in four is early, within 300 ms of the start (while
			// it recovers, maybe); the others come at a random moment
			// within a few checkpoints after it reads. The run after the
			// crash at "saved" is not killed early: it is checked below.
			early := out != nil && !afterSaved && rng.IntN(4) == 0
			if !early {
				p.Line(t, "pipeline: reading ", 30*time.Second)
			}
			if out == nil {
				out = j.output()
			}
			delay := time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))
			if early {
				delay /= 5
			}
			time.Sleep(delay) // the random kill moment (not a synchronisation)
			p.Kill()
			if early {
				t.Logf("round %d: killed %v after the process started", i, delay)
			} else {
				t.Logf("round %d: killed %v after it started reading", i, delay)
			}
		} else {
			p = j.pipeline("SLUICE_PIPELINE_CRASH=" + round)
			waitExit(t, p, 60*time.Second)
			if !strings.Contains(p.Logs(), "killing myself at") {
				t.Fatalf("round %d: the pipeline exited without reaching %s: %v\n%s", i, round, p.Err(), p.Logs())
			}
			t.Logf("round %d: crashed itself at %s", i, round)
		}
		if afterSaved {
			// The run after a crash between save and commit committed the
			// recorded transaction.
			if !strings.Contains(p.Logs(), "committed now") {
				t.Fatalf("round %d: the run after the crash at %s did not finish the saved transaction:\n%s", i, crashSaved, p.Logs())
			}
		}
		afterSaved = round == crashSaved+":1"
		out.drain(t, 10*time.Millisecond)
		t.Logf("round %d: %d results in the output so far", i, out.n)
		for k, rs := range out.got {
			if len(rs) > 1 {
				t.Fatalf("round %d: window %s %s written %d times: %+v", i, k.Sensor, k.Start, len(rs), rs)
			}
		}
	}
	waitExit(t, s, 60*time.Second)
	if s.Err() != nil {
		t.Fatalf("sensors: %v\n%s", s.Err(), s.Logs())
	}
	want := j.expected(n)
	p = j.pipeline()
	p.Line(t, "pipeline: reading ", 30*time.Second)
	j.finish(p, want, out)
}

// TestPipelineLostTxn: the pipeline dies after saving a checkpoint's
// state and before committing its transaction, and the transaction is
// aborted while it is down (as a lease that runs out would). The next run
// finds it lost and writes the results kept in the state again: the
// output is still exact. Committing a transaction that is committed
// already is success (the controller's rule the restart relies on).
func TestPipelineLostTxn(t *testing.T) {
	j := newJob(t)
	const n = 1500
	wroteInput(t, j.sensors(n, 4, 5, 20000))
	want := j.expected(n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Crash after the save of the first checkpoint of each run until a
	// saved transaction holds results.
	var st *state
	for round := 0; st == nil || len(st.Results) == 0; round++ {
		if round == 20 {
			t.Fatalf("no checkpoint with results in 20 runs")
		}
		p := j.pipeline("SLUICE_PIPELINE_CRASH=" + crashSaved)
		waitExit(t, p, 60*time.Second)
		if !strings.Contains(p.Logs(), "killing myself at saved") {
			t.Fatalf("the pipeline exited before its first checkpoint: %v\n%s", p.Err(), p.Logs())
		}
		var err error
		if st, err = loadState(j.state); err != nil || st == nil {
			t.Fatalf("state after the crash: %v, %v", st, err)
		}
	}
	if err := j.d.Controller.AbortTxn(ctx, "demo", "sensor-counts", st.Txn); err != nil {
		t.Fatal(err)
	}
	p := j.pipeline()
	out := j.output()
	line := p.Line(t, "pipeline: restored checkpoint "+st.Checkpoint, 30*time.Second)
	if !strings.Contains(line, "was lost; its results were committed again") {
		t.Fatalf("restored: %q", line)
	}

	// The controller's rule: committing a committed transaction is
	// success and changes nothing.
	proctest.WaitFor(t, "a checkpoint of the new run", 30*time.Second, func() (bool, string) {
		s2, err := loadState(j.state)
		if err != nil {
			t.Fatal(err)
		}
		return s2.Txn != st.Txn, "the state is the crashed run's"
	})
	s2, err := loadState(j.state)
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitFor(t, "the new run's first transaction committed", 30*time.Second, func() (bool, string) {
		info, err := j.d.Controller.GetTxn(ctx, "demo", "sensor-counts", s2.Txn)
		if err != nil {
			t.Fatal(err)
		}
		return info.Status == api.TxnCommitted, info.Status
	})
	if err := j.d.Controller.CommitTxn(ctx, "demo", "sensor-counts", s2.Txn); err != nil {
		t.Fatalf("commit a committed transaction again: %v", err)
	}
	j.finish(p, want, out)
}

// TestPipelineSealedInput: the input is sealed with its last windows still
// open (no final note past them). The pipeline reads it to its end, closes
// every window, commits and exits by itself; killed at the end between
// saving its final state and committing, the next run commits and exits.
// The output holds every (sensor, window) once, the last ones too, and a
// run after that does nothing.
func TestPipelineSealedInput(t *testing.T) {
	j := newJob(t)
	const n = 1050 // 10.5 s of event time: the last window is open at the end
	wroteInput(t, proctest.Start(t, sensorsBin, "sensors", nil, "-controller", j.d.URL, "-stream", "demo/sensors",
		"-segments", "2", "-sensors", "3", "-count", strconv.Itoa(n), "-seed", "3", "-rate", "20000", "-step", "10ms"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := j.d.Controller.SealStream(ctx, "demo", "sensors"); err != nil {
		t.Fatal(err)
	}
	want := j.expected(n)

	p := j.pipeline("SLUICE_PIPELINE_CRASH=" + crashEnded)
	waitExit(t, p, 60*time.Second)
	if !strings.Contains(p.Logs(), "killing myself at ended") {
		t.Fatalf("the pipeline did not reach the input's end: %v\n%s", p.Err(), p.Logs())
	}
	p = j.pipeline()
	waitExit(t, p, 60*time.Second)
	if p.Err() != nil || !strings.Contains(p.Logs(), "committed now") || strings.Contains(p.Logs(), "(0 results)") ||
		!strings.Contains(p.Logs(), "every result is committed: nothing to do") {
		t.Fatalf("the run after the crash at the end: %v\n%s", p.Err(), p.Logs())
	}
	p = j.pipeline()
	waitExit(t, p, 60*time.Second)
	if p.Err() != nil || !strings.Contains(p.Logs(), "was committed") {
		t.Fatalf("a run after the end: %v\n%s", p.Err(), p.Logs())
	}

	out := j.output()
	if err := j.d.Controller.SealStream(ctx, "demo", "sensor-counts"); err != nil {
		t.Fatal(err)
	}
	proctest.WaitFor(t, "the end of the sealed output", 30*time.Second, func() (bool, string) {
		return out.drain(t, 100*time.Millisecond), "not at the end"
	})
	if m := out.missing(t, want); m != 0 || out.n != len(want) {
		t.Fatalf("%d results read, %d missing; want %d results", out.n, m, len(want))
	}
}

// TestPipelineBadInput: a missing input stream, a bad flag, a state file
// that is not one, and a state counted in other windows each stop the job
// with one error that says so, and write nothing.
func TestPipelineBadInput(t *testing.T) {
	j := newJob(t)
	for _, tc := range []struct {
		name, state string
		args        []string
		want        string
	}{
		{name: "no input", args: nil, want: "the input stream demo/sensors does not exist"},
		{name: "bad window", args: []string{"-window", "0s"}, want: "-window 0s: want a whole number of milliseconds above 0"},
		{name: "bad stream", args: []string{"-output", "counts"}, want: `-output "counts": want SCOPE/STREAM`},
		{name: "bad state", state: "{not json", want: "is not a state"},
		{name: "other windows", state: `{"version":1,"txn":"x","cut":{"demo/sensors/0.#epoch.0":0},"windows":{"size":5000000000}}`,
			want: "the state in " + j.state + " was counted in windows of 5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(j.state)
			if tc.state != "" {
				if err := os.WriteFile(j.state, []byte(tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"-controller", j.d.URL, "-state", j.state, "-window", "2s"}, tc.args...)
			p := proctest.Start(t, pipelineBin, "pipeline", nil, args...)
			waitExit(t, p, 30*time.Second)
			if p.Err() == nil || !strings.Contains(p.Logs(), tc.want) || strings.Count(strings.TrimSpace(p.Logs()), "\n") != 0 {
				t.Fatalf("exit %v, printed:\n%s\nwant one line with %q", p.Err(), p.Logs(), tc.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := j.d.Controller.GetStream(ctx, "demo", "sensor-counts"); !errors.Is(err, ctlclient.ErrNotFound) {
				t.Fatalf("the output stream after the error: %v, want none", err)
			}
		})
	}
}
