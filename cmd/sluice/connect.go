package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/client/segclient"
)

// controllerRequestTimeout bounds each controller request of `sluice
// write` and `sluice read` (small reads of a stream's metadata and a
// group's state): a controller that accepts connections but does not
// answer then counts as unreachable, and is retried and reported, rather
// than holding the command silent until its --timeout. Tests lower it.
var controllerRequestTimeout = 10 * time.Second

// dataClient returns the client library's Client of the data commands
// (write, read): controller requests bounded by controllerRequestTimeout,
// retries reported on stderr, which must be safe for concurrent use
// (lockedWriter).
func dataClient(ctx context.Context, g *globalOptions, stderr io.Writer) (*client.Client, error) {
	ctl := ctlclient.NewClient(g.Controller, ctlclient.WithRequestTimeout(controllerRequestTimeout))
	return client.New(ctx, g.Controller, client.WithController(ctl), newRetryReporter(stderr, g.Controller).option())
}

// lockedWriter serialises the writes of a command's main goroutine and of
// the library's goroutines (the retry reporter) to one stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// retryReporter prints, on stderr, that a client command is retrying and
// why: one line for the first retry, then at most one a second (several
// segments may retry at once), each with its attempt number:
//
//	sluice: controller http://127.0.0.1:10080 unreachable (connection refused); retrying (attempt 3)
//
// It is the client library's WithRetryNotify hook of the commands that
// wait for a controller or node rather than fail at once.
type retryReporter struct {
	w          io.Writer
	controller string // --controller, as the user wrote it

	mu      sync.Mutex
	printed time.Time // when the last line was printed; zero: never
}

// retryLineEvery is how often a command that keeps retrying says so again.
const retryLineEvery = time.Second

func newRetryReporter(w io.Writer, controller string) *retryReporter {
	return &retryReporter{w: w, controller: controller}
}

// option returns the client option that reports to r.
func (r *retryReporter) option() client.Option { return client.WithRetryNotify(r.notify) }

func (r *retryReporter) notify(attempt int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.printed.IsZero() && time.Since(r.printed) < retryLineEvery {
		return
	}
	r.printed = time.Now()
	fmt.Fprintf(r.w, "sluice: %s; retrying (attempt %d)\n", describeFailure(r.controller, err), attempt)
}

// describeFailure says in a few words what failed: the controller or a
// node unreachable and the system's reason, or else err itself.
func describeFailure(controller string, err error) string {
	var ce *ctlclient.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, ctlclient.ErrUnreachable):
		return fmt.Sprintf("controller %s unreachable (%s)", controller, rootCause(err))
	case errors.As(err, &ce):
		return fmt.Sprintf("controller %s answered: %s", controller, ce.Message)
	case errors.As(err, &oe) && oe.Op == "dial":
		return fmt.Sprintf("node %s unreachable (%s)", oe.Addr, rootCause(err))
	case errors.Is(err, segclient.ErrConnectionClosed):
		return fmt.Sprintf("connection to the node lost (%s)", rootCause(err))
	}
	return err.Error()
}

// rootCause is the system's word for why a connection failed
// ("connection refused", "i/o timeout"), or the innermost error (of
// several wrapped together, the last one's).
func rootCause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "timed out"
	}
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[len(errs)-1] // "...: %w; last failure: %w"
			}
		}
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
