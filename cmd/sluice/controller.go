package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/embed"
)

// HaltEnv names an environment variable for tests only: set to
// "WORKFLOW:STEP" (say "scale:sealSegments"), every workflow of that kind
// stops for good before that step, after printing "controller halted
// before WORKFLOW:STEP" on stdout, so that a test can kill the controller
// at a known point of a workflow. The goroutine running it never returns:
// such a controller is meant to be killed, not stopped.
const HaltEnv = "SLUICE_TEST_HALT_AT"

// shutdownTimeout bounds how long requests in flight may take to finish
// once a role is told to stop (the scheduler's API).
const shutdownTimeout = embed.DefaultAPIShutdownTimeout

func controllerCommand(g *globalOptions) *cli.Command {
	cfg, o := embed.DefaultControllerConfig(), &clusterFlags{}
	return &cli.Command{
		Name:   "controller",
		Usage:  "run the controller (control plane and REST API), with an embedded metadata store or, with --zk, in a cluster",
		Flags:  controllerFlags(&cfg, o),
		Action: func(c *cli.Context) error { return runController(c, g, o, cfg) },
	}
}

// controllerFlags are the flags of `sluice controller`: --zk into o, the
// rest into cfg's fields, with DefaultControllerConfig's values as
// defaults. With --zk the metadata are in ZooKeeper, the controllers
// register and elect a leader, and segments are found through the
// container assignment.
func controllerFlags(cfg *embed.ControllerConfig, o *clusterFlags) []cli.Flag {
	d := embed.DefaultControllerConfig()
	flags := []cli.Flag{
		&cli.StringFlag{
			Name:        "listen",
			Usage:       "serve the REST API on `ADDR` (port 0: pick a free one and print it)",
			Value:       d.Listen,
			Destination: &cfg.Listen,
		},
		&cli.StringFlag{
			Name:        "data",
			Usage:       "`DIR` for the metadata store (DIR/controller.db)",
			Value:       d.DataDir,
			Destination: &cfg.DataDir,
		},
		&cli.StringFlag{
			Name:        "node",
			Usage:       "address `ADDR` of the node that serves every segment (without --zk)",
			Value:       d.Node,
			Destination: &cfg.Node,
		},
		&cli.IntFlag{
			Name:        "containers",
			Usage:       "number of segment containers `N` in the whole system; every node and controller of a cluster must use the same N",
			Value:       d.Containers,
			Destination: &cfg.Containers,
		},
	}
	flags = append(flags, o.flags(&cfg.Cluster, clusterUsage{
		ZK:             "cluster mode: ZooKeeper `HOSTS` (host:port,...) hold the metadata; controllers elect a leader, which assigns containers to the live nodes and resumes workflows; every controller serves the API",
		SessionTimeout: "ZooKeeper session `TIMEOUT`: how long a controller may be cut off (or dead) before another one takes over its leadership",
		ID:             "controller `ID` in the election (cluster mode; default: the advertised address)",
		Advertise:      "`ADDR` other processes reach this controller's REST API at (cluster mode; default: the listener's address)",
	})...)
	flags = append(flags, &cli.StringFlag{
		Name:        "tier2",
		Usage:       "the nodes' tier-2 storage `URI`, reported by GET /v1/tier2",
		Destination: &cfg.Tier2,
	}, writerTimeoutFlag(d.WriterTimeout, &cfg.WriterTimeout))
	return append(flags, autoScaleFlags(&cfg.AutoScale, d.AutoScale)...)
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

// runController completes the config the flags filled and runs the
// controller (embed.StartController) until SIGINT or SIGTERM (or the end
// of c.Context), then stops taking requests, lets those in flight finish,
// and closes the store. The line "controller listening on ADDR" on stdout
// tells scripts and tests which port was picked.
//
// Without --zk the store is a bbolt file, one node serves every segment,
// and the workflows an earlier run left unfinished are resumed in the
// background. With --zk the store is ZooKeeper; the controller registers
// and stands for election (package controller/leader), and only while it
// leads does it assign containers and resume workflows; it finds each
// segment's node through the published assignment (ClusterLocator).
func runController(c *cli.Context, g *globalOptions, o *clusterFlags, cfg embed.ControllerConfig) error {
	if _, err := args(c); err != nil {
		return err
	}
	log := newLogger(g, c.App.ErrWriter)
	completeController(&cfg, o, log)
	cfg.StepHook = haltHook(os.Getenv(HaltEnv), c.App.Writer, log)
	return serveRole(c, "controller", log, func(ctx context.Context) (role, error) {
		ctl, err := embed.StartController(ctx, cfg)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c.App.Writer, "controller listening on %s\n", ctl.Addr())
		return ctl, nil
	})
}

// completeController sets what the flags do not bind directly: a bare
// port of --listen listens on 127.0.0.1, --zk becomes Cluster.Servers;
// and the API bounds and the logger.
func completeController(cfg *embed.ControllerConfig, o *clusterFlags, log logrus.FieldLogger) {
	if !strings.Contains(cfg.Listen, ":") {
		cfg.Listen = "127.0.0.1:" + cfg.Listen
	}
	o.apply(&cfg.Cluster)
	cfg.API, cfg.Logger = apiConfig(), log
}

// haltHook returns the StepHook of HaltEnv's value at (nil if empty): it
// prints the halt line once and blocks forever before the step at names.
func haltHook(at string, stdout io.Writer, log logrus.FieldLogger) func(workflow, step string) error {
	if at == "" {
		return nil
	}
	var once sync.Once
	return func(workflow, step string) error {
		if workflow+":"+step != at {
			return nil
		}
		once.Do(func() {
			log.WithField("at", at).Warn("controller: " + HaltEnv + " is set: halting this workflow for good")
			fmt.Fprintf(stdout, "controller halted before %s\n", at)
		})
		select {}
	}
}
