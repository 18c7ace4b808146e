package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// Crash points (SLUICE_PIPELINE_CRASH=POINT:N), in the order a checkpoint
// reaches them.
const (
	crashFlushed   = "flushed"   // the transaction flushed, the state not saved
	crashSaved     = "saved"     // the state saved, the transaction not committed
	crashCommitted = "committed" // the transaction committed
	crashEnded     = "ended"     // at the input's end: the final state saved, its transaction not committed
)

// errInputEnded: the input stream is sealed and was read to its end.
var errInputEnded = errors.New("pipeline: the input stream has ended")

// crashAt kills the process the Nth time it reaches Point.
type crashAt struct {
	Point string
	N     int
	seen  int
}

func parseCrash(s string) (*crashAt, error) {
	if s == "" {
		return nil, nil
	}
	point, n, ok := strings.Cut(s, ":")
	c := &crashAt{Point: point, N: 1}
	if ok {
		var err error
		if c.N, err = strconv.Atoi(n); err != nil || c.N < 1 {
			ok = false
		}
	} else {
		ok = true
	}
	switch point {
	case crashFlushed, crashSaved, crashCommitted, crashEnded:
	default:
		ok = false
	}
	if !ok {
		return nil, fmt.Errorf("SLUICE_PIPELINE_CRASH=%q: want POINT[:N], POINT one of %s, %s, %s, %s and N at least 1", s, crashFlushed, crashSaved, crashCommitted, crashEnded)
	}
	return c, nil
}

// reached kills the process, as SIGKILL would, the Nth time at point.
func (c *crashAt) reached(point string) {
	if c == nil || c.Point != point {
		return
	}
	c.seen++
	if c.seen == c.N {
		fmt.Fprintf(os.Stderr, "pipeline: SLUICE_PIPELINE_CRASH: killing myself at %s (%d)\n", point, c.N)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// pipeline is the job's state: owned by run's goroutine, but for the
// checkpointer, which only starts checkpoints.
type pipeline struct {
	cfg           config
	out           io.Writer
	crash         *crashAt
	ctl           *ctlclient.Client
	cl            *client.Client
	iscope, istrm string
	oscope, ostrm string
	w             *client.Writer // the transactions' writer
	g             *client.ReaderGroup
	gr            *client.GroupReader
	txn           *client.Txn // open: the results since the last checkpoint go here
	pending       []Result    // the results written to txn
	win           windows
	other         int64     // events that are not readings
	committed     int64     // results committed by this run
	scaleWaits    int64     // checkpoints that began the next transaction after the commit (output scaling)
	recheck       time.Time // holdsAll said no: ask again after this
}

func splitStream(flag, s string) (string, string, error) {
	scope, stream, ok := strings.Cut(s, "/")
	if !ok || scope == "" || stream == "" || strings.Contains(stream, "/") {
		return "", "", fmt.Errorf("-%s %q: want SCOPE/STREAM", flag, s)
	}
	return scope, stream, nil
}

// run runs the job until ctx is done or an error. See the package comment.
func run(ctx context.Context, cfg config, crash *crashAt, out io.Writer) error {
	p := &pipeline{cfg: cfg, out: out, crash: crash, ctl: ctlclient.NewClient(cfg.Controller)}
	var err error
	if p.iscope, p.istrm, err = splitStream("input", cfg.Input); err != nil {
		return err
	}
	if p.oscope, p.ostrm, err = splitStream("output", cfg.Output); err != nil {
		return err
	}
	if cfg.Window <= 0 || cfg.Window%time.Millisecond != 0 {
		return fmt.Errorf("-window %v: want a whole number of milliseconds above 0", cfg.Window)
	}
	if cfg.Checkpoint <= 0 || cfg.Group == "" || cfg.ReaderID == "" || cfg.State == "" {
		return fmt.Errorf("want -checkpoint above 0 and a -group, -reader-id and -state")
	}
	st, err := loadState(cfg.State)
	if err != nil {
		return err
	}
	if st != nil && st.Windows.Size != cfg.Window {
		return fmt.Errorf("-window %v: the state in %s was counted in windows of %v (remove it to start again)", cfg.Window, cfg.State, st.Windows.Size)
	}
	if _, err := p.ctl.GetStream(ctx, p.iscope, p.istrm); err != nil {
		if errors.Is(err, ctlclient.ErrNotFound) {
			return fmt.Errorf("the input stream %s does not exist (examples/sensors creates it): %w", cfg.Input, err)
		}
		return fmt.Errorf("input stream %s: %w", cfg.Input, err)
	}
	if err := p.ensureOutput(ctx); err != nil {
		return err
	}
	if p.cl, err = client.New(ctx, cfg.Controller); err != nil {
		return err
	}
	defer p.cl.Close()
	if p.w, err = p.cl.NewWriter(ctx, p.oscope, p.ostrm); err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		p.w.Close(cctx)
	}()

	p.win = windows{Size: cfg.Window}
	if st != nil {
		if err := p.recover(ctx, st); err != nil {
			return err
		}
		if st.Ended {
			fmt.Fprintf(p.out, "pipeline: the input %s has ended and every result is committed: nothing to do\n", cfg.Input)
			return nil
		}
	}
	if err := p.openGroup(ctx, st); err != nil {
		return err
	}
	gopts := []client.GroupOption{client.WithCommitInterval(cfg.CommitInterval), client.WithSessionTimeout(cfg.SessionTimeout),
		client.WithGroupReaderOptions(client.WithWatermarkPoll(cfg.WatermarkPoll))}
	if p.gr, err = p.cl.JoinReaderGroup(ctx, p.iscope, cfg.Group, cfg.ReaderID, gopts...); err != nil {
		return err
	}
	defer func() {
		// Leaving at the exact position does not matter for the next run
		// (it resets to its checkpoint), but frees the segments at once.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		p.gr.Close(cctx)
	}()
	if p.txn, err = p.begin(ctx); err != nil {
		return err
	}
	defer func() {
		// The results since the last checkpoint are counted again from
		// it by the next run: this transaction must never commit.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		p.txn.Abort(cctx)
	}()
	fmt.Fprintf(p.out, "pipeline: reading %s as %s/%s, windows of %v, writing to %s\n", cfg.Input, cfg.Group, cfg.ReaderID, cfg.Window, cfg.Output)

	cctx, stopCheckpoints := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.checkpointer(cctx)
	}()
	err = p.loop(ctx)
	stopCheckpoints()
	wg.Wait()
	if errors.Is(err, errInputEnded) {
		err = p.end(ctx)
	}
	fmt.Fprintf(p.out, "pipeline: stopped: %d readings counted, %d late, %d other events, %d window results committed by this run, %d checkpoints waited for the output to scale\n",
		p.win.Counted, p.win.Late, p.other, p.committed, p.scaleWaits)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ensureOutput creates the output scope and stream unless they exist.
func (p *pipeline) ensureOutput(ctx context.Context) error {
	if err := p.ctl.CreateScope(ctx, p.oscope); err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return fmt.Errorf("create scope %s: %w", p.oscope, err)
	}
	policy := api.ScalingPolicy{Type: api.FixedNumSegments, MinSegments: int32(max(p.cfg.Segments, 1))}
	if p.cfg.OutputRate > 0 {
		policy.Type, policy.TargetRate, policy.ScaleFactor = api.ByRateInEventsPerSec, p.cfg.OutputRate, 2
	}
	_, err := p.ctl.CreateStream(ctx, api.StreamConfig{ScopeName: p.oscope, StreamName: p.ostrm, ScalingPolicy: policy})
	if err != nil && !errors.Is(err, ctlclient.ErrExists) {
		return fmt.Errorf("create stream %s: %w", p.cfg.Output, err)
	}
	return nil
}

// begin begins an output transaction; it waits while the output stream is
// scaling or waiting to scale (BeginTxn retries that), so it must not be
// called while p holds another transaction open: see beginNoWait.
func (p *pipeline) begin(ctx context.Context) (*client.Txn, error) {
	t, err := p.w.BeginTxn(ctx, client.WithLease(p.cfg.TxnLease))
	if err != nil {
		return nil, fmt.Errorf("begin an output transaction: %w", err)
	}
	return t, nil
}

// beginNoWait is begin that returns ctlclient.ErrScalePending (wrapped)
// at once rather than wait for the output stream's scale.
func (p *pipeline) beginNoWait(ctx context.Context) (*client.Txn, error) {
	t, err := p.w.BeginTxn(ctx, client.WithLease(p.cfg.TxnLease), client.WithoutScaleWait())
	if err != nil {
		return nil, fmt.Errorf("begin an output transaction: %w", err)
	}
	return t, nil
}

// recover finishes what the state left: it aborts the transaction begun
// after the checkpoint, commits the checkpoint's transaction (or writes
// its results again if it was lost) and restores the windows.
func (p *pipeline) recover(ctx context.Context, st *state) error {
	if st.Next != "" {
		if err := p.ctl.AbortTxn(ctx, p.oscope, p.ostrm, st.Next); err != nil &&
			!errors.Is(err, ctlclient.ErrNotFound) && !errors.Is(err, ctlclient.ErrConflict) {
			return fmt.Errorf("abort transaction %s begun after checkpoint %s: %w", st.Next, st.Checkpoint, err)
		}
	}
	how, err := p.finishTxn(ctx, st.Txn, st.Results)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", st.Checkpoint, err)
	}
	p.win = st.Windows
	fmt.Fprintf(p.out, "pipeline: restored checkpoint %s: %d open windows, closed up to %s; its transaction %s %s (%d results)\n",
		st.Checkpoint, len(st.Windows.Open), st.Windows.ClosedUpTo.Format(time.RFC3339Nano), st.Txn, how, len(st.Results))
	return nil
}

// finishTxn makes the results of transaction id committed: it commits it
// (success if it is committed already); if it was lost (aborted, or its
// lease ran out) it writes results again in a new transaction and commits
// that. It says which it did.
func (p *pipeline) finishTxn(ctx context.Context, id string, results []Result) (string, error) {
	for {
		info, err := p.ctl.GetTxn(ctx, p.oscope, p.ostrm, id)
		if err != nil {
			return "", fmt.Errorf("transaction %s: %w", id, err)
		}
		switch info.Status {
		case api.TxnCommitted:
			return "was committed", nil
		case api.TxnOpen, api.TxnCommitting:
			err := p.ctl.CommitTxn(ctx, p.oscope, p.ostrm, id)
			if err == nil {
				info, err = p.ctl.GetTxn(ctx, p.oscope, p.ostrm, id)
				if err == nil && info.Status == api.TxnCommitted {
					p.committed += int64(len(results))
					return "committed now", nil
				}
			}
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			if err != nil && !errors.Is(err, ctlclient.ErrConflict) {
				return "", fmt.Errorf("commit transaction %s: %w", id, err)
			}
			// Conflict: its lease ran out (the next GetTxn says); or it
			// is still committing: ask again.
			if info.Status == api.TxnOpen && time.Now().UnixMilli() >= info.ExpiryTime {
				return p.rewrite(ctx, id, results)
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(50 * time.Millisecond): // backoff before asking the controller again
			}
		default: // aborting, aborted
			return p.rewrite(ctx, id, results)
		}
	}
}

// rewrite writes the results of the lost transaction id in a new one and
// commits it.
func (p *pipeline) rewrite(ctx context.Context, id string, results []Result) (string, error) {
	t, err := p.begin(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range results {
		if err := p.write(ctx, t, r); err != nil {
			t.Abort(ctx)
			return "", err
		}
	}
	if err := t.Commit(ctx); err != nil {
		return "", fmt.Errorf("commit transaction %s, the results of lost transaction %s: %w", t.ID(), id, err)
	}
	p.committed += int64(len(results))
	return fmt.Sprintf("was lost; its results were committed again in %s", t.ID()), nil
}

func (p *pipeline) write(ctx context.Context, t *client.Txn, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := t.Write(ctx, r.Sensor, b); err != nil {
		return fmt.Errorf("write a result to transaction %s: %w", t.ID(), err)
	}
	return nil
}

// openGroup makes the reader group read from the state's cut, or, with
// no state, from the input's head.
func (p *pipeline) openGroup(ctx context.Context, st *state) error {
	var start client.ReaderOption = client.FromHead()
	if st != nil {
		start = client.FromCut(st.Cut)
	}
	g, err := p.cl.NewReaderGroup(ctx, p.iscope, p.cfg.Group, p.istrm, client.GroupFrom(start))
	if errors.Is(err, ctlclient.ErrExists) {
		if g, err = p.cl.ReaderGroup(p.iscope, p.cfg.Group); err != nil {
			return err
		}
		if st != nil {
			err = g.ResetToCut(ctx, st.Cut)
		} else {
			// A group without a state: an earlier run that saved none
			// (or the state file is elsewhere). Start it again at the head.
			fmt.Fprintf(os.Stderr, "pipeline: reader group %s/%s exists but %s does not: starting the group again at the head of %s\n",
				p.iscope, p.cfg.Group, p.cfg.State, p.cfg.Input)
			if err = g.Delete(ctx); err == nil {
				g, err = p.cl.NewReaderGroup(ctx, p.iscope, p.cfg.Group, p.istrm, client.GroupFrom(start))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("reader group %s/%s: %w", p.iscope, p.cfg.Group, err)
	}
	p.g = g
	return nil
}

// checkpointer starts a checkpoint of the group every cfg.Checkpoint
// until ctx is done; the loop handles each when the reader returns it.
func (p *pipeline) checkpointer(ctx context.Context) {
	t := time.NewTicker(p.cfg.Checkpoint)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		name := fmt.Sprintf("pipeline-%d", time.Now().UnixNano())
		cctx, cancel := context.WithTimeout(ctx, p.cfg.Checkpoint+30*time.Second)
		_, err := p.g.InitiateCheckpoint(cctx, name)
		cancel()
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "pipeline: checkpoint %s: %v\n", name, err)
		}
	}
}

// pollEvery bounds how long the loop waits for an event before it looks
// at the time window again (watermarks advance without events).
const pollEvery = 100 * time.Millisecond

// loop reads, counts, closes windows and handles checkpoints until ctx is
// done or an error.
func (p *pipeline) loop(ctx context.Context) error {
	for {
		rctx, cancel := context.WithTimeout(ctx, pollEvery)
		ev, err := p.gr.ReadNext(rctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
		case errors.Is(err, client.ErrEndOfStream):
			return errInputEnded
		case err != nil:
			return err
		case ev.IsCheckpoint():
			if err := p.checkpoint(ctx, ev.Checkpoint); err != nil {
				return err
			}
			continue
		default:
			var r Reading
			if json.Unmarshal(ev.Data, &r) != nil || r.Sensor == "" || r.Time.IsZero() {
				p.other++
				continue
			}
			if p.win.add(r) {
				fmt.Fprintf(os.Stderr, "pipeline: late reading %s seq %d at %s: its window closed at %s\n",
					r.Sensor, r.Seq, r.Time.Format(time.RFC3339Nano), p.win.ClosedUpTo.Format(time.RFC3339Nano))
			}
		}
		if err := p.closeWindows(ctx); err != nil {
			return err
		}
	}
}

// closeWindows closes the windows the reader's time window has passed and
// writes their results to the open transaction.
func (p *pipeline) closeWindows(ctx context.Context) error {
	tw := p.gr.CurrentTimeWindow()
	if !tw.LowerKnown() || !p.win.windowOf(tw.Lower).After(p.win.ClosedUpTo) {
		return nil
	}
	if time.Now().Before(p.recheck) {
		return nil
	}
	if ok, err := p.holdsAll(ctx); err != nil || !ok {
		// Not yet: ask the group again in a moment, not at every event.
		p.recheck = time.Now().Add(pollEvery)
		return err
	}
	// The position cannot have moved since (only this goroutine reads).
	for _, r := range p.win.close(tw.Lower) {
		if err := p.write(ctx, p.txn, r); err != nil {
			return err
		}
		p.pending = append(p.pending, r)
	}
	return nil
}

// holdsAll reports whether the reader reads every segment of the group,
// so that its time window is the stream's.
func (p *pipeline) holdsAll(ctx context.Context) (bool, error) {
	st, _, _, err := p.g.State(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return false, nil // try again later
	}
	me := st.Readers[p.cfg.ReaderID]
	if me == nil || len(st.Readers) != 1 || len(st.Unassigned) != 0 || len(st.Ended) != 0 {
		return false, nil
	}
	pos := p.gr.Position()
	for seg := range me.Segments {
		if _, ok := pos[seg]; !ok {
			return false, nil
		}
	}
	return len(pos) == len(me.Segments), nil
}

// checkpoint is the two phases at checkpoint name (package comment).
func (p *pipeline) checkpoint(ctx context.Context, name string) error {
	if err := p.txn.Flush(ctx); err != nil {
		return fmt.Errorf("checkpoint %s: flush transaction %s: %w", name, p.txn.ID(), err)
	}
	p.crash.reached(crashFlushed)
	cut, err := p.checkpointCut(ctx, name)
	if err != nil {
		return err
	}
	// The next transaction before the commit, unless the output stream is
	// waiting to scale: that scale waits for p.txn, so the next one is
	// begun after the commit instead (and is in no state until the next
	// checkpoint, like one begun by a run that died before saving).
	next, err := p.beginNoWait(ctx)
	if err != nil && !errors.Is(err, ctlclient.ErrScalePending) {
		return err
	}
	st := &state{Checkpoint: name, Cut: cut, Windows: p.win, Txn: p.txn.ID(), Results: p.pending}
	if next != nil {
		st.Next = next.ID()
	}
	st.Windows.Open = append([]Result(nil), p.win.Open...)
	if err := saveState(p.cfg.State, st); err != nil {
		if next != nil {
			next.Abort(ctx)
		}
		return err
	}
	p.crash.reached(crashSaved)
	waited := next == nil
	nextAborted, err := p.commit(ctx, name, next)
	if err != nil {
		if next != nil && !nextAborted {
			next.Abort(ctx)
		}
		return err
	}
	if nextAborted {
		next = nil // aborted by commit, begun again below
	}
	p.crash.reached(crashCommitted)
	if next == nil {
		if waited {
			p.scaleWaits++
		}
		if next, err = p.begin(ctx); err != nil { // waits for the scale
			return err
		}
		// The same state again, now naming the next transaction, so that a
		// crash from here on aborts it at the restart rather than leaving
		// it to its lease (holding the output's next scale, and with it the
		// restarted job's first transaction, until the lease ends).
		st.Next = next.ID()
		if err := saveState(p.cfg.State, st); err != nil {
			next.Abort(ctx)
			return err
		}
	}
	if len(p.pending) > 0 {
		fmt.Fprintf(p.out, "pipeline: checkpoint %s: committed %d window results\n", name, len(p.pending))
	}
	p.txn, p.pending = next, nil
	return nil
}

// commit commits the open transaction, whose state is saved (checkpoint
// name). If the commit fails (the transaction lost, or committed with
// its time not reported), it first aborts next (the transaction begun
// after the checkpoint, if any: nothing is written in it yet, and a scale
// of the output could be waiting for it), since writing the results again
// takes a transaction of their own, which may wait for that scale; it
// says so with nextAborted.
func (p *pipeline) commit(ctx context.Context, name string, next *client.Txn) (nextAborted bool, err error) {
	commit := p.txn.Commit
	if !p.win.ClosedUpTo.IsZero() {
		// A result's event time is its window's end: every result this
		// writer writes from now on ends after ClosedUpTo, so readers of
		// the output get watermarks too.
		commit = func(ctx context.Context) error { return p.txn.CommitAt(ctx, p.win.ClosedUpTo) }
	}
	if err := commit(ctx); err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		// Lost (the lease ran out): write its results again; or
		// committed but its time not reported: finishTxn finds it
		// committed.
		if next != nil {
			next.Abort(ctx)
		}
		if _, err := p.finishTxn(ctx, p.txn.ID(), p.pending); err != nil {
			return next != nil, fmt.Errorf("checkpoint %s: %w", name, err)
		}
		return next != nil, nil
	}
	p.committed += int64(len(p.pending))
	return false, nil
}

// end finishes the job once its input is sealed and read to its end: no
// reading can come any more, so every open window is final. It closes
// them all, saves a final state (no cut: a run that finds it only
// finishes its transaction) and commits.
func (p *pipeline) end(ctx context.Context) error {
	for _, r := range p.win.closeAll() {
		if err := p.write(ctx, p.txn, r); err != nil {
			return err
		}
		p.pending = append(p.pending, r)
	}
	if err := p.txn.Flush(ctx); err != nil {
		return fmt.Errorf("the input's end: flush transaction %s: %w", p.txn.ID(), err)
	}
	st := &state{Checkpoint: "end", Windows: p.win, Txn: p.txn.ID(), Results: p.pending, Ended: true}
	if err := saveState(p.cfg.State, st); err != nil {
		return err
	}
	p.crash.reached(crashEnded)
	if _, err := p.commit(ctx, "end", nil); err != nil {
		return err
	}
	fmt.Fprintf(p.out, "pipeline: the input %s has ended: committed the last %d window results; every result is committed\n", p.cfg.Input, len(p.pending))
	p.pending = nil
	return nil
}

// checkpointCut waits for checkpoint name to complete (the reader's next
// heartbeat reports its position at the checkpoint event) and returns its
// cut.
func (p *pipeline) checkpointCut(ctx context.Context, name string) (api.StreamCut, error) {
	cctx, cancel := context.WithTimeout(ctx, p.cfg.SessionTimeout+10*time.Second)
	defer cancel()
	for {
		cut, err := p.g.Checkpoint(cctx, name)
		if err == nil {
			return cut, nil
		}
		if cctx.Err() != nil {
			return nil, fmt.Errorf("checkpoint %s did not complete: %w", name, err)
		}
		select {
		case <-cctx.Done():
		case <-time.After(20 * time.Millisecond): // polling the group's state
		}
	}
}
