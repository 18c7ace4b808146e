package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/clienttest"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/internal/proctest"
)

// TestPipelineScalingOutput: the output stream is created by rate
// (-output-target-rate 1, far below what the job writes) on a deployment
// whose auto-scaler works in seconds. The job always holds an output
// transaction open, so each scale waits for a checkpoint that commits
// before it begins the next transaction: the output scales while the job
// runs, the job is killed with SIGKILL once it has and restarted, and
// the output still holds every (sensor, window) exactly once.
func TestPipelineScalingOutput(t *testing.T) {
	windows := [4]time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
	d := clienttest.Start(t, clienttest.WithWatermarks(100*time.Millisecond, 10*time.Second), clienttest.WithAutoScale(windows,
		controller.AutoScaleOptions{Interval: 100 * time.Millisecond, Cooldown: 300 * time.Millisecond, MaxSegments: 4}))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := client.New(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	j := &job{t: t, d: d, cl: cl, state: filepath.Join(t.TempDir(), "pipeline.state"), window: 2 * time.Second}
	start := func() *proctest.Proc {
		return proctest.Start(t, pipelineBin, "pipeline", nil, "-controller", d.URL, "-state", j.state,
			"-window", j.window.String(), "-checkpoint", "300ms", "-watermark-poll", "100ms", "-commit-interval", "100ms",
			"-txn-lease", "5s", "-output-target-rate", "1")
	}

	const n = 3000
	s := j.sensors(n, 5, 7, 600)
	proctest.WaitFor(t, "sensors to create the input stream", 30*time.Second, func() (bool, string) {
		_, err := d.Controller.GetStream(ctx, "demo", "sensors")
		return err == nil, fmt.Sprint(err)
	})
	p := start()
	p.Line(t, "pipeline: reading ", 30*time.Second)
	out := j.output()
	proctest.WaitFor(t, "the output stream to scale", 60*time.Second, func() (bool, string) {
		epochs, err := d.Controller.Epochs(ctx, "demo", "sensor-counts")
		if err != nil {
			return false, err.Error()
		}
		return len(epochs) >= 2, fmt.Sprintf("%d epochs", len(epochs))
	})
	p.Kill()
	waitExit(t, s, 60*time.Second)
	if s.Err() != nil {
		t.Fatalf("sensors: %v\n%s", s.Err(), s.Logs())
	}
	want := j.expected(n)
	p = start()
	// A transaction the killed run left to its lease holds a pending
	// scale, and the restart's first transaction, for up to 5 s (then the
	// controller's sweeper aborts it).
	p.Line(t, "pipeline: reading ", 60*time.Second)
	finishScaling(t, j, p, want, out)

	epochs, err := d.Controller.Epochs(ctx, "demo", "sensor-counts")
	if err != nil {
		t.Fatal(err)
	}
	// The first scale came while the job held a transaction open (later
	// ones may come once it has stopped, the output gone cold).
	if e := epochs[1]; e.Trigger != "auto" || !strings.Contains(e.Reason, "hot") || !strings.Contains(e.Reason, "after waiting") {
		t.Errorf("epoch 1: trigger %q reason %q; want an automatic split that waited for the job's transaction", e.Trigger, e.Reason)
	}
	t.Logf("output epochs: %d; last run: %s", len(epochs), lastLine(p.Logs(), "pipeline: stopped"))
}

func lastLine(logs, prefix string) string {
	var last string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, prefix) {
			last = l
		}
	}
	return last
}

// finishScaling is job.finish for an output that scales: once the job
// has stopped, the output goes cold and may be merging while it is
// sealed, so the seal is tried again while a scale is in progress.
func finishScaling(t *testing.T, j *job, p *proctest.Proc, want map[windowKey]Result, out *output) {
	t.Helper()
	awaitResults(t, p, want, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proctest.WaitFor(t, "the output sealed", 30*time.Second, func() (bool, string) {
		err := j.d.Controller.SealStream(ctx, "demo", "sensor-counts")
		if err != nil && !errors.Is(err, ctlclient.ErrConflict) {
			t.Fatal(err)
		}
		return err == nil, fmt.Sprint(err)
	})
	wantExactly(t, want, out)
	t.Logf("output: %d window results", out.n)
}
