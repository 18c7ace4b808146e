package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
)

// role is a running role of package embed (embed.Node, embed.Controller,
// embed.Standalone): Done is closed once it stops serving, Err is why it
// stopped on its own, Stop shuts it down.
type role interface {
	Done() <-chan struct{}
	Err() error
	Stop(ctx context.Context) error
}

// serveRole runs the role start returns until SIGINT or SIGTERM (or the
// end of c.Context), or until it stops on its own, then stops it. start
// gets the context the signals end and prints what scripts wait for. The
// error is start's, else the one the role stopped with on its own, else
// Stop's.
func serveRole(c *cli.Context, name string, log logrus.FieldLogger, start func(ctx context.Context) (role, error)) error {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := start(ctx)
	if err != nil {
		return err
	}
	select {
	case <-r.Done():
		err = r.Err()
	case <-ctx.Done():
		log.Info(name + ": shutting down")
	}
	if serr := r.Stop(context.Background()); err == nil {
		err = serr
	}
	return err
}
