package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/executor"
)

// executorOptions are the flags of `sluice executor`.
type executorOptions struct {
	Role           string        // --role node|controller|hdfs-gateway|nfs-export|s3-gateway
	HealthAddr     string        // --health-addr; empty: the address the role prints
	HealthInterval time.Duration // --health-interval
	HealthFailures int           // --health-failures
	StartupTimeout time.Duration // --startup-timeout
	KillGrace      time.Duration // --kill-grace
}

func executorCommand(g *globalOptions) *cli.Command {
	o := &executorOptions{}
	return &cli.Command{
		Name:      "executor",
		Usage:     "run a controller, node or head (HDFS, NFS, S3) task as a Mesos executor (started by the agent, configured by MESOS_* variables)",
		ArgsUsage: "-- ROLE-ARGS...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", Usage: "the `ROLE` to run: " + executor.RoleList(), Required: true, Destination: &o.Role},
			&cli.StringFlag{Name: "health-addr", Usage: "probe `HOST:PORT` (default: the address the role prints when it listens)", Destination: &o.HealthAddr},
			durationFlag("health-interval", "`TIME` between health checks", 5*time.Second, &o.HealthInterval),
			&cli.IntFlag{Name: "health-failures", Usage: "fail the task after `N` failed health checks in a row", Value: 3, Destination: &o.HealthFailures},
			durationFlag("startup-timeout", "`TIME` the role has to become healthy after it starts", 10*time.Minute, &o.StartupTimeout),
			durationFlag("kill-grace", "`TIME` between SIGTERM and SIGKILL when the task's kill policy sets none", 30*time.Second, &o.KillGrace),
		},
		Action: func(c *cli.Context) error { return runExecutor(c, g, o) },
	}
}

// runExecutor reads the agent's MESOS_* environment and runs the task
// until it is over (package executor). SIGTERM or SIGINT stops the task
// as a SHUTDOWN from the agent would.
func runExecutor(c *cli.Context, g *globalOptions, o *executorOptions) error {
	if !executor.Role(o.Role).Valid() {
		return fmt.Errorf("executor: --role %q: want %s", o.Role, executor.RoleList())
	}
	args := c.Args().Slice()
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return fmt.Errorf("executor: no role arguments after --")
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return executor.Run(ctx, cfg, executor.Options{
		Role:           executor.Role(o.Role),
		Args:           args,
		HealthAddr:     o.HealthAddr,
		HealthInterval: o.HealthInterval,
		AuthToken:      executor.TokenFromEnv(),
		Core: executor.CoreConfig{
			MaxHealthFailures: o.HealthFailures,
			StartupTimeout:    o.StartupTimeout,
			KillGrace:         o.KillGrace,
		},
		Stdout: c.App.Writer,
		Logger: newLogger(g, c.App.ErrWriter),
	})
}
