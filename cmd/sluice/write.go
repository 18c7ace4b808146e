package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
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
		Name:      "write",
		Usage:     "write one event per line of stdin (without its newline)",
		ArgsUsage: "SCOPE/STREAM",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "routing `KEY` of every event (default: none, events are spread)", Destination: &o.Key},
			&cli.DurationFlag{Name: "timeout", Usage: "give up when not every event is acknowledged within `D` (retrying meanwhile)", Value: 2 * time.Minute, Destination: &o.Timeout},
		},
		Action: func(c *cli.Context) error { return runWrite(c, g, o) },
	}
}

// runWrite writes stdin's lines and returns nil only when every one is
// acknowledged (durable). While the controller or the node cannot be
// reached it retries until --timeout.
func runWrite(c *cli.Context, g *globalOptions, o *writeOptions) error {
	scope, stream, err := streamArg(c)
	if err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(c.Context, o.Timeout)
	defer cancel()
	cl, err := client.New(ctx, g.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()

	var lastMu sync.Mutex
	var lastErr error // the last connection failure, for the timeout message
	w, err := newWriterRetrying(ctx, cl, scope, stream, client.WithStateFunc(func(sc client.StateChange) {
		if sc.Err != nil {
			lastMu.Lock()
			lastErr = sc.Err
			lastMu.Unlock()
		}
	}))
	if err != nil {
		return timeoutError(ctx, o.Timeout, fmt.Errorf("write %s/%s: %w", scope, stream, err))
	}
	defer w.Close(context.Background())

	var events, bytes int64
	in := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, rerr := in.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		if rerr == nil || len(line) > 0 {
			if _, err := w.Write(ctx, o.Key, line); err != nil {
				return timeoutError(ctx, o.Timeout, fmt.Errorf("write %s/%s: event %d: %w", scope, stream, events+1, err))
			}
			events++
			bytes += int64(len(line))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("write: read stdin: %w", rerr)
		}
	}
	if err := w.Flush(ctx); err != nil {
		lastMu.Lock()
		why := lastErr
		lastMu.Unlock()
		if ctx.Err() != nil && why != nil {
			err = fmt.Errorf("%w (last failure: %v)", err, why)
		}
		return timeoutError(ctx, o.Timeout, fmt.Errorf("write %s/%s: not every event was acknowledged: %w", scope, stream, err))
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %d events (%d bytes) in %v\n", events, bytes, time.Since(start).Round(time.Millisecond))
	return nil
}

// newWriterRetrying makes the writer, retrying while the controller is
// unreachable or unavailable; other errors (a missing stream) end it.
func newWriterRetrying(ctx context.Context, cl *client.Client, scope, stream string, opts ...client.WriterOption) (*client.Writer, error) {
	delay := 10 * time.Millisecond
	for {
		w, err := cl.NewWriter(ctx, scope, stream, opts...)
		if err == nil || !(errors.Is(err, ctlclient.ErrUnreachable) || errors.Is(err, ctlclient.ErrUnavailable)) || ctx.Err() != nil {
			return w, err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// timeoutError says that --timeout ran out, when it did.
func timeoutError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %v (--timeout): %w", timeout, err)
	}
	return err
}
