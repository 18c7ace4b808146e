package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/cluster/boltstore"
	"github.com/sluice-streams/sluice/controller"
	"github.com/sluice-streams/sluice/controller/rest"
)

// controllerOptions are the flags of `sluice controller`.
type controllerOptions struct {
	// Listen is the REST API address (--listen); port 0 picks a free port,
	// which the controller prints once it listens. A bare port listens on
	// 127.0.0.1.
	Listen string
	// DataDir holds the embedded metadata store, DataDir/controller.db
	// (--data).
	DataDir string
	// Node is the address of the one node every segment lives on (--node).
	Node string
	// Cluster mode (--zk HOSTS: the store in ZooKeeper, membership, leader
	// election, nodes found through container assignment) will replace
	// DataDir and Node with a field here.
}

// shutdownTimeout bounds how long requests in flight may take to finish
// once the controller is told to stop.
const shutdownTimeout = 10 * time.Second

func controllerCommand(g *globalOptions) *cli.Command {
	o := &controllerOptions{}
	return &cli.Command{
		Name:  "controller",
		Usage: "run the controller (control plane and REST API) with an embedded metadata store",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:        "listen",
				Usage:       "serve the REST API on `ADDR` (port 0: pick a free one and print it)",
				Value:       "127.0.0.1:10080",
				Destination: &o.Listen,
			},
			&cli.StringFlag{
				Name:        "data",
				Usage:       "`DIR` for the metadata store (DIR/controller.db)",
				Value:       "./.data/controller",
				Destination: &o.DataDir,
			},
			&cli.StringFlag{
				Name:        "node",
				Usage:       "address `ADDR` of the node that serves every segment",
				Value:       "127.0.0.1:12345",
				Destination: &o.Node,
			},
		},
		Action: func(c *cli.Context) error { return runController(c, g, o) },
	}
}

// newLogger returns a logger of the process's own, at the --log-level, to
// w. The long-running roles log through it rather than the standard
// logger, which each command run in the same process re-points.
func newLogger(g *globalOptions, w io.Writer) *logrus.Logger {
	l := logrus.New()
	l.SetOutput(w)
	l.SetFormatter(&logrus.TextFormatter{})
	if level, err := logrus.ParseLevel(g.LogLevel); err == nil {
		l.SetLevel(level)
	}
	return l
}

// runController opens the metadata store, serves the REST API until SIGINT
// or SIGTERM (or the end of c.Context), then stops taking requests, lets
// those in flight finish, and closes the store. It resumes the workflows
// an earlier run left unfinished in the background. The line "controller
// listening on ADDR" on stdout tells scripts and tests which port was
// picked.
func runController(c *cli.Context, g *globalOptions, o *controllerOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return fmt.Errorf("controller: data directory %s: %w", o.DataDir, err)
	}
	st, err := boltstore.Open(filepath.Join(o.DataDir, "controller.db"))
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	defer st.Close()
	listen := o.Listen
	if !strings.Contains(listen, ":") {
		listen = "127.0.0.1:" + listen
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("controller: listen on %s: %w", o.Listen, err)
	}
	segs := controller.NewNodeSegments(controller.StaticLocator(o.Node))
	defer segs.Close()
	svc := controller.New(st, segs, controller.Options{Logger: log})
	defer svc.Close()
	srv := &http.Server{Handler: rest.NewHandler(svc, log), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var resumed sync.WaitGroup
	resumed.Add(1)
	go func() {
		defer resumed.Done()
		if err := svc.Resume(ctx); err != nil && ctx.Err() == nil {
			log.WithError(err).Warn("controller: an unfinished workflow could not be resumed; it is retried at the next start")
		}
	}()
	defer resumed.Wait()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	fmt.Fprintf(c.App.Writer, "controller listening on %s\n", l.Addr())
	log.WithFields(logrus.Fields{"addr": l.Addr().String(), "data": o.DataDir, "node": o.Node}).Info("controller: serving")
	select {
	case err = <-served:
		stop()
		return fmt.Errorf("controller: serve: %w", err)
	case <-ctx.Done():
		log.Info("controller: shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("controller: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("controller: serve: %w", err)
	}
	return nil
}
