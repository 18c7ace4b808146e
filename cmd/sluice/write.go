package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol"
)

// stdin is what `sluice write` reads; tests replace it.
var stdin io.Reader = os.Stdin

// writeOptions are the flags of `sluice write`.
type writeOptions struct {
	Key     string        // --key: routing key of every event ("" spreads them)
	Timeout time.Duration // --timeout: give up when not all acknowledged by then
}

func writeCommand(g *globalOptions) *cli.Command {
	o := &writeOptions{}
	return &cli.Command{
		Name:  "write",
		Usage: "write one event per line of stdin (without its newline)",
		Description: "It ends when stdin ends and every line is acknowledged (durable). While the controller or the node\n" +
			"cannot be reached it retries, saying so on stderr, until --timeout (counted from the start). An interrupt\n" +
			"(Ctrl-C) stops reading stdin and waits, within --timeout, for the lines read to be acknowledged; a second\n" +
			"one stops at once. A line over the 8 MiB event limit ends the write, after the lines before it. However\n" +
			"it ends once writing began, it prints on stderr how many events were acknowledged (\"sluice: N events acknowledged\"), so\n" +
			"you know where to resume; when those are not the first N lines (possible without --key), it says which. With -o json\n" +
			"it prints instead, on stdout, one object: stream, lines, acknowledged, firstAcknowledged, bytes, seconds, done.",
		ArgsUsage: "SCOPE/STREAM",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "routing `KEY` of every event (default: none, events are spread)", Destination: &o.Key},
			durationFlag("timeout", "give up when not every event is acknowledged within `D` (retrying meanwhile)", 2*time.Minute, &o.Timeout),
		},
		Action: func(c *cli.Context) error { return runWrite(c, g, o) },
	}
}

// runWrite writes stdin's lines and returns nil only when every one is
// acknowledged (durable). Once the writer exists it prints how many events
// were acknowledged, however it ends.
func runWrite(c *cli.Context, g *globalOptions, o *writeOptions) error {
	scope, stream, err := streamArg(c)
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %v: want more than 0", o.Timeout)
	}
	stderr := &lockedWriter{w: c.App.ErrWriter} // the retry reporter and the interrupt watcher write too
	start := time.Now()
	// ctx bounds everything (--timeout); input ends at the first interrupt:
	// no more lines are read, those read are still waited for.
	ctx, cancel := context.WithTimeout(c.Context, o.Timeout)
	defer cancel()
	input, stopInput := context.WithCancel(ctx)
	defer stopInput()
	intr := watchInterrupts(stderr, stopInput, cancel)
	defer intr.stop()

	cl, err := dataClient(ctx, g, stderr)
	if err != nil {
		return err
	}
	defer cl.Close()
	last := &lastState{controller: g.Controller}
	w, err := cl.NewWriter(input, scope, stream, client.WithStateFunc(last.record))
	if err != nil {
		if intr.interrupted() {
			return fmt.Errorf("write %s/%s: interrupted before anything was written: %w", scope, stream, err)
		}
		if ctx.Err() != nil && (errors.Is(err, ctlclient.ErrUnreachable) || errors.Is(err, ctlclient.ErrUnavailable)) {
			// The retry lines said it all along: say it once more, short.
			err = errors.New(describeFailure(g.Controller, err))
		}
		return timeoutError(ctx, o.Timeout, fmt.Errorf("write %s/%s: nothing written: %w", scope, stream, err))
	}

	acks := &ackLog{}
	var bytes int64
	lines := readLines(stdin)
	defer lines.stop()
	var writeErr error
	tooLarge := int64(0) // the size of line acks.lines+1, if it is over the limit
	eof := false         // every line of stdin was written
read:
	for {
		var in inputLine
		select {
		case in = <-lines.c:
		case <-input.Done():
			break read
		}
		if in.n >= 0 {
			if in.data == nil {
				tooLarge = in.n
				break read
			}
			a, err := w.Write(input, o.Key, in.data)
			if err != nil {
				if input.Err() == nil {
					writeErr = fmt.Errorf("line %d: %w", acks.lines+1, err)
				}
				break read
			}
			acks.add(a)
			bytes += int64(len(in.data))
		}
		if errors.Is(in.err, io.EOF) {
			eof = true
			break
		}
		if in.err != nil {
			writeErr = fmt.Errorf("read stdin after line %d: %w", acks.lines, in.err)
			break
		}
	}

	flushErr := w.Flush(ctx)
	w.Close(ctx) // settles what Flush left: ErrClosed
	acked, prefix := acks.count()
	done := eof && flushErr == nil
	if g.Output == formatJSON {
		sum := writeSummary{Stream: scope + "/" + stream, Lines: acks.lines, Acknowledged: acked, FirstAcknowledged: prefix,
			Bytes: bytes, Seconds: time.Since(start).Seconds(), Done: done}
		if err := json.NewEncoder(c.App.Writer).Encode(sum); err != nil {
			return fmt.Errorf("write %s/%s: write stdout: %w", scope, stream, err)
		}
	} else {
		fmt.Fprintln(stderr, acknowledgedLine(acked, prefix, bytes, time.Since(start), done))
	}

	switch {
	case done:
		return nil // an interrupt during the last flush changed nothing
	case tooLarge > 0:
		return fmt.Errorf("write %s/%s: line %d is %s, over the %s event limit; %s",
			scope, stream, acks.lines+1, mib(tooLarge), mib(protocol.MaxEventSize), before(acks.lines, prefix, flushErr))
	case writeErr != nil:
		return fmt.Errorf("write %s/%s: %w", scope, stream, writeErr)
	case flushErr == nil && intr.interrupted():
		return fmt.Errorf("write %s/%s: interrupted after line %d of stdin", scope, stream, acks.lines)
	case flushErr == nil:
		return timeoutError(ctx, o.Timeout, fmt.Errorf("write %s/%s: stdin did not end (%d lines read, all acknowledged)", scope, stream, acks.lines))
	}
	why := ": " + flushErr.Error()
	if errors.Is(flushErr, ctx.Err()) {
		why = "" // the timeout or the interrupt says it
	}
	err = fmt.Errorf("write %s/%s: %d of %d events not acknowledged%s%s", scope, stream, acks.lines-acked, acks.lines, why, last.why(ctx))
	if intr.interrupted() {
		return fmt.Errorf("interrupted: %w", err)
	}
	return timeoutError(ctx, o.Timeout, err)
}

// writeSummary is what `sluice write -o json` prints on stdout at the
// end, instead of acknowledgedLine on stderr.
type writeSummary struct {
	Stream       string `json:"stream"`
	Lines        int64  `json:"lines"`        // lines of stdin written
	Acknowledged int64  `json:"acknowledged"` // events acknowledged (durable)
	// FirstAcknowledged is how many lines from the first are all
	// acknowledged: where to resume.
	FirstAcknowledged int64   `json:"firstAcknowledged"`
	Bytes             int64   `json:"bytes"` // bytes of the lines written
	Seconds           float64 `json:"seconds"`
	Done              bool    `json:"done"` // every line of stdin written and acknowledged
}

// acknowledgedLine is what `sluice write` prints on stderr at the end;
// done: every line of stdin was written and acknowledged.
func acknowledgedLine(acked, prefix, bytes int64, took time.Duration, done bool) string {
	switch {
	case done:
		return fmt.Sprintf("sluice: %s acknowledged (%d bytes in %v)", plural(acked, "event"), bytes, took.Round(time.Millisecond))
	case acked != prefix:
		return fmt.Sprintf("sluice: %s acknowledged: the first %d lines and %d later ones", plural(acked, "event"), prefix, acked-prefix)
	}
	return fmt.Sprintf("sluice: %s acknowledged", plural(acked, "event"))
}

// plural is "1 event", "2 events".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// before says what became of the n lines before a refused one.
func before(n, prefix int64, flushErr error) string {
	if flushErr == nil {
		if n == 1 {
			return "the line before it was acknowledged"
		}
		return fmt.Sprintf("the %d lines before it were acknowledged", n)
	}
	return fmt.Sprintf("of the %d lines before it, the first %d were acknowledged (%v)", n, prefix, flushErr)
}

// mib renders a size in MiB ("9 MiB", "8.5 MiB").
func mib(n int64) string {
	return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
}

// timeoutError says that --timeout ran out, when it did.
func timeoutError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %v (--timeout): %w", timeout, err)
	}
	return err
}

// lastState keeps the writer's last connection state change, to say why
// events were not acknowledged.
type lastState struct {
	controller string // --controller, to describe failures
	mu         sync.Mutex
	sc         *client.StateChange
	// failure is the last change that carried an error.
	failure error
}

func (l *lastState) record(sc client.StateChange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sc = &sc
	if sc.Err != nil {
		l.failure = sc.Err
	}
}

// why says what the writer was doing when ctx ended: its last failure, or
// a node that does not answer.
func (l *lastState) why(ctx context.Context) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ctx.Err() == nil || l.sc == nil:
		return ""
	case l.failure != nil:
		return fmt.Sprintf(" (last failure: %s)", describeFailure(l.controller, l.failure))
	case l.sc.Endpoint != "":
		return fmt.Sprintf(" (the node at %s does not answer)", l.sc.Endpoint)
	}
	return fmt.Sprintf(" (segment %s: %s)", l.sc.Segment, l.sc.State)
}

// ackLog counts, in line order, the acknowledged events of the lines
// written. It keeps only the Acks not yet settled (and those behind them,
// until the next compaction), so its memory follows the events in flight.
type ackLog struct {
	lines    int64 // lines written
	pending  []pendingAck
	acked    int64 // settled and acknowledged, among those dropped from pending
	firstBad int64 // the first line, of those dropped, whose event failed (0: none)
	compact  int   // compact when pending reaches this
}

type pendingAck struct {
	line int64
	a    outcome
}

// outcome is what ackLog needs of a *client.Ack.
type outcome interface {
	Done() <-chan struct{}
	Err() error
}

const ackCompact = 1024

func (l *ackLog) add(a outcome) {
	l.lines++
	l.pending = append(l.pending, pendingAck{l.lines, a})
	if len(l.pending) >= max(l.compact, ackCompact) {
		l.drop()
		l.compact = 2 * len(l.pending)
	}
}

// drop counts and removes the settled Acks.
func (l *ackLog) drop() {
	keep := l.pending[:0]
	for _, p := range l.pending {
		select {
		case <-p.a.Done():
			if p.a.Err() == nil {
				l.acked++
			} else if l.firstBad == 0 || p.line < l.firstBad {
				l.firstBad = p.line // lines may settle out of order
			}
		default:
			keep = append(keep, p)
		}
	}
	clear(l.pending[len(keep):])
	l.pending = keep
}

// count returns how many events are acknowledged, and how many lines from
// the first are all acknowledged.
func (l *ackLog) count() (acked, prefix int64) {
	l.drop()
	prefix = l.lines
	if len(l.pending) > 0 {
		prefix = l.pending[0].line - 1
	}
	if l.firstBad > 0 {
		prefix = min(prefix, l.firstBad-1)
	}
	return l.acked, prefix
}

// inputLine is one line of stdin: data without its newline (nil when the
// line is over protocol.MaxEventSize), n its length (-1: no line, only
// err), err what ended the input after it (io.EOF at its end).
type inputLine struct {
	data []byte
	n    int64
	err  error
}

// lineSource reads stdin's lines in a goroutine, so that an interrupt or
// --timeout ends `sluice write` even while stdin has nothing to read.
type lineSource struct {
	c    chan inputLine
	quit chan struct{}
	once sync.Once
}

// readLines starts reading r. A line longer than protocol.MaxEventSize is
// not kept: only its length is.
func readLines(r io.Reader) *lineSource {
	s := &lineSource{c: make(chan inputLine, 1), quit: make(chan struct{})}
	go s.run(bufio.NewReaderSize(r, 64<<10))
	return s
}

// stop tells the goroutine to end. It then ends at once unless it is
// blocked reading stdin, which no Go call can interrupt; it then ends at
// the next line, or with the process.
func (s *lineSource) stop() { s.once.Do(func() { close(s.quit) }) }

func (s *lineSource) run(r *bufio.Reader) {
	for {
		line := s.next(r)
		select {
		case s.c <- line:
		case <-s.quit:
			return
		}
		if line.err != nil {
			return
		}
	}
}

// next reads one line, keeping at most protocol.MaxEventSize bytes of it.
func (s *lineSource) next(r *bufio.Reader) inputLine {
	var data []byte
	var n int64 // the line's bytes so far, with its newline
	for {
		frag, err := r.ReadSlice('\n')
		n += int64(len(frag))
		if n <= protocol.MaxEventSize+1 { // +1: the newline
			data = append(data, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n == 0 {
			return inputLine{n: -1, err: err}
		}
		if err == nil { // the line ends with its newline
			n--
			if n <= protocol.MaxEventSize {
				data = data[:len(data)-1]
			}
		}
		if n > protocol.MaxEventSize {
			return inputLine{n: n, err: err}
		}
		return inputLine{data: data, n: n, err: err}
	}
}

// interrupts turns the first SIGINT or SIGTERM into the end of input and
// a second one into the end of everything.
type interrupts struct {
	sigs chan os.Signal
	done chan struct{}
	quit chan struct{}
	mu   sync.Mutex
	got  int
}

func watchInterrupts(stderr io.Writer, first, second context.CancelFunc) *interrupts {
	in := &interrupts{sigs: make(chan os.Signal, 2), done: make(chan struct{}), quit: make(chan struct{})}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer close(in.done)
		for {
			select {
			case <-in.sigs:
			case <-in.quit:
				return
			}
			in.mu.Lock()
			in.got++
			n := in.got
			in.mu.Unlock()
			if n == 1 {
				fmt.Fprintln(stderr, "sluice: interrupted: waiting for the lines read to be acknowledged (interrupt again to stop now)")
				first()
				continue
			}
			second()
			return
		}
	}()
	return in
}

func (in *interrupts) interrupted() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.got > 0
}

// stop stops watching (a later interrupt kills the process, as usual) and
// waits for the watcher.
func (in *interrupts) stop() {
	signal.Stop(in.sigs)
	close(in.quit)
	<-in.done
}
