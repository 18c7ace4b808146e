package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/protocol/api"
)

// readOptions are the flags of `sluice read`.
type readOptions struct {
	Group   string        // --group: read as a member of reader group G (in the stream's scope)
	From    string        // --from head|tail|CUT
	To      string        // --to CUT: stop there (exit 0)
	Follow  bool          // --follow: wait for events until interrupted
	Max     int           // --max: stop after N events (0: no limit)
	Timeout time.Duration // --timeout: without --follow, stop when no event came for D
	JSON    bool          // --output json: one JSON object per event per line
}

func readCommand(g *globalOptions) *cli.Command {
	o := &readOptions{}
	return &cli.Command{
		Name:  "read",
		Usage: "print a stream's events, one per line, in order per routing key",
		Description: "Without --follow it stops when no event arrives for --timeout, after --max events, or at the end of a\n" +
			"sealed stream. At the end it prints \"position: CUT\" on stderr: `--from CUT` continues right after it.\n" +
			"With --group G it joins reader group SCOPE/G (see `sluice readergroup create`) and reads the segments the group\n" +
			"gives it; on exit it leaves the group at its position, so the group's other readers continue from there.\n" +
			"Without --follow the start (finding where to begin, joining the group) waits at most the larger of --timeout and\n" +
			"10s. While the controller or a node cannot be reached it retries, saying so on stderr.\n" +
			"With --to CUT it reads the slice between the start and CUT (a cut at or after the start) and exits 0 at CUT,\n" +
			"also when the stream goes on (it still stops earlier at --max or --timeout).\n" +
			"With -o json it prints one JSON object per event per line: segment, offset (where the event starts in it),\n" +
			"position (a cut just after it, for --from), payload and encoding (utf8, or base64 when the bytes are not UTF-8).",
		ArgsUsage: "SCOPE/STREAM",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "group", Usage: "read as a member of reader group `G` of the stream's scope (--from is then the group's)", Destination: &o.Group},
			&cli.StringFlag{Name: "from", Usage: "start at `WHERE`: head, tail, or a stream cut (scope/stream:N.#epoch.E=OFFSET,...)", Value: "head", Destination: &o.From},
			&cli.StringFlag{Name: "to", Usage: "stop at `CUT`, a stream cut at or after the start: every event before it, none after", Destination: &o.To},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep waiting for new events until interrupted", Destination: &o.Follow},
			&cli.IntFlag{Name: "max", Usage: "stop after `N` events (0: no limit)", Destination: &o.Max},
			durationFlag("timeout", "without --follow, stop when no event arrives for `D`", 2*time.Second, &o.Timeout),
		},
		Action: func(c *cli.Context) error { return runRead(c, g, o) },
	}
}

// readStart turns --from into a reader option.
func readStart(from string) (client.ReaderOption, error) {
	switch from {
	case "head", "":
		return client.FromHead(), nil
	case "tail":
		return client.FromTail(), nil
	}
	cut, err := api.ParseStreamCut(from)
	if err != nil {
		return nil, fmt.Errorf("--from: want head, tail or a stream cut: %w", err)
	}
	if len(cut) == 0 {
		return nil, errors.New("--from: empty stream cut")
	}
	return client.FromCut(cut), nil
}

// readEnd parses --to (of read and readergroup create): a stream cut.
func readEnd(to string) (api.StreamCut, error) {
	cut, err := api.ParseStreamCut(to)
	if err != nil {
		return nil, fmt.Errorf("--to: want a stream cut: %w", err)
	}
	if len(cut) == 0 {
		return nil, errors.New("--to: empty stream cut")
	}
	return cut, nil
}

func runRead(c *cli.Context, g *globalOptions, o *readOptions) error {
	scope, stream, err := streamArg(c)
	if err != nil {
		return err
	}
	if o.Group != "" && c.IsSet("from") {
		return errors.New("read --group: --from belongs to `readergroup create`; a group reader continues where the group stands")
	}
	if o.Group != "" && c.IsSet("to") {
		return errors.New("read --group: --to belongs to `readergroup create`; a group reader ends where the group ends")
	}
	start, err := readStart(o.From)
	if err != nil {
		return err
	}
	opts := []client.ReaderOption{start}
	if o.To != "" {
		end, err := readEnd(o.To)
		if err != nil {
			return err
		}
		opts = append(opts, client.ToCut(end))
	}
	if o.Max < 0 {
		return fmt.Errorf("--max %d: want 0 (no limit) or more", o.Max)
	}
	if !o.Follow && o.Timeout <= 0 {
		return fmt.Errorf("--timeout %v: want more than 0", o.Timeout)
	}
	o.JSON = g.Output == formatJSON
	// An interrupt ends the read normally: the position is still printed.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := &lockedWriter{w: c.App.ErrWriter} // the retry reporter writes too
	cl, err := dataClient(ctx, g, stderr)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Without --follow the start is bounded too (the controller, and for
	// --from tail the node, may not answer): by --timeout, but never below
	// readStartTimeout, since a short --timeout is about events, not about
	// how fast the controller answers.
	setup, cancelSetup := ctx, context.CancelFunc(func() {})
	if !o.Follow {
		setup, cancelSetup = context.WithTimeout(ctx, max(o.Timeout, readStartTimeout))
	}
	defer cancelSetup()
	if o.Group != "" {
		return runGroupRead(ctx, setup, c, stderr, cl, scope, stream, o)
	}
	r, err := cl.NewReader(setup, scope, stream, append(opts, client.WithTruncationFunc(func(t client.Truncation) {
		fmt.Fprintf(stderr, "warning: %s/%s was truncated past the reader: events of %s from offset %d were deleted unread; continuing at %s\n",
			scope, stream, t.Segment, t.Offset, t.Head)
	}))...)
	if err != nil {
		return startError(setup, o, fmt.Errorf("read %s/%s: %w", scope, stream, err))
	}
	defer r.Close()

	out := bufio.NewWriterSize(c.App.Writer, 64<<10)
	readErr := readLoop(ctx, r, out, o)
	if err := out.Flush(); err != nil && readErr == nil {
		readErr = fmt.Errorf("read: write stdout: %w", err)
	}
	fmt.Fprintf(stderr, "position: %s\n", r.Position())
	if readErr != nil {
		return fmt.Errorf("read %s/%s: %w", scope, stream, readErr)
	}
	return nil
}

// eventReader is a Reader or a GroupReader.
type eventReader interface {
	ReadNext(ctx context.Context) (client.Event, error)
}

// runGroupRead is `sluice read --group`: it joins the group (within
// setup), reads (until ctx ends, or as readLoop says), and leaves at its
// position.
func runGroupRead(ctx, setup context.Context, c *cli.Context, stderr io.Writer, cl *client.Client, scope, stream string, o *readOptions) error {
	rg, err := cl.ReaderGroup(scope, o.Group)
	if err != nil {
		return err
	}
	_, gstream, _, err := rg.State(setup)
	if err != nil {
		return startError(setup, o, fmt.Errorf("read --group %s: %w", o.Group, err))
	}
	if gstream != scope+"/"+stream {
		return fmt.Errorf("read --group %s: %w: %s, not %s/%s", o.Group, errGroupStream, gstream, scope, stream)
	}
	gr, err := cl.JoinReaderGroup(setup, scope, o.Group, groupReaderID())
	if err != nil {
		return startError(setup, o, fmt.Errorf("read --group %s: %w", o.Group, err))
	}
	out := bufio.NewWriterSize(c.App.Writer, 64<<10)
	readErr := readLoop(ctx, gr, out, o)
	if err := out.Flush(); err != nil && readErr == nil {
		readErr = fmt.Errorf("read: write stdout: %w", err)
	}
	fmt.Fprintf(stderr, "position: %s\n", gr.Position())
	// Leaving commits the position for the group's other readers: worth
	// a few seconds even after an interrupt, never more.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupLeaveTimeout)
	defer cancel()
	if err := gr.Close(lctx); err != nil && readErr == nil {
		readErr = fmt.Errorf("leave group %s: %w", o.Group, err)
	}
	if readErr != nil {
		return fmt.Errorf("read %s/%s: %w", scope, stream, readErr)
	}
	return nil
}

// readStartTimeout is the least time `sluice read` without --follow
// gives its start (finding where to begin, joining the group); --timeout
// gives more if it is longer. Tests lower it.
var readStartTimeout = 10 * time.Second

// startError says that the start ran out of time, when it did.
func startError(setup context.Context, o *readOptions, err error) error {
	if errors.Is(setup.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("could not start within %v (the larger of --timeout and %v): %w", max(o.Timeout, readStartTimeout), readStartTimeout, err)
	}
	return err
}

// groupLeaveTimeout bounds how long `sluice read --group` waits for the
// controller when it leaves the group.
const groupLeaveTimeout = 10 * time.Second

// readLoop prints events until --max, --timeout without an event, the end
// of a sealed stream or of the slice (--to), or ctx (an interrupt).
// Checkpoint events of a group are not printed.
func readLoop(ctx context.Context, r eventReader, out *bufio.Writer, o *readOptions) error {
	for n := 0; o.Max == 0 || n < o.Max; n++ {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if !o.Follow {
			rctx, cancel = context.WithTimeout(ctx, o.Timeout)
		}
		ev, err := r.ReadNext(rctx)
		cancel()
		if err == nil && ev.IsCheckpoint() {
			n-- // a group's checkpoint: no event to print
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, client.ErrEndOfStream), ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			return nil // --timeout without an event
		default:
			return err
		}
		if o.JSON {
			if err := json.NewEncoder(out).Encode(newEventLine(ev)); err != nil {
				return fmt.Errorf("write stdout: %w", err)
			}
		} else {
			out.Write(ev.Data)
			out.WriteByte('\n')
		}
		// Each event shows at once (--follow is read by people and pipes);
		// when more are buffered this costs a write per event, which a
		// command-line reader can afford.
		if err := out.Flush(); err != nil {
			return fmt.Errorf("write stdout: %w", err)
		}
	}
	return nil
}

// eventLine is one event as `read -o json` prints it (JSON Lines).
type eventLine struct {
	Segment  string `json:"segment"`
	Offset   int64  `json:"offset"`   // where the event starts in the segment
	Position string `json:"position"` // the reader's position just after the event (a --from)
	Payload  string `json:"payload"`
	Encoding string `json:"encoding"` // of Payload: "utf8", or "base64" when the bytes are not valid UTF-8
}

func newEventLine(ev client.Event) eventLine {
	l := eventLine{Segment: ev.Segment, Offset: ev.Offset, Position: ev.Position.String(), Payload: string(ev.Data), Encoding: "utf8"}
	if !utf8.Valid(ev.Data) {
		l.Payload, l.Encoding = base64.StdEncoding.EncodeToString(ev.Data), "base64"
	}
	return l
}
