package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// restartKinds are the values of `cluster restart --kind`.
var restartKinds = map[string]plan.PodKind{
	"controller": plan.Controller, "node": plan.Node,
	"hdfs-head": plan.HDFSHead, "nfs-head": plan.NFSHead, "s3-head": plan.S3Head,
}

// clusterRestartCommand is `sluice cluster restart [--kind K]`: a
// rolling restart through the scheduler's plan.
func clusterRestartCommand(g *globalOptions, o *clusterOptions, schedFlag cli.Flag) *cli.Command {
	var kind string
	return &cli.Command{
		Name:  "restart",
		Usage: "restart every pod (of --kind) one at a time, each ready before the next (nodes hand their containers over first)",
		Flags: []cli.Flag{schedFlag,
			&cli.StringFlag{Name: "kind", Usage: "only pods of `KIND`: controller, node, hdfs-head, nfs-head or s3-head", Destination: &kind}},
		Action: func(c *cli.Context) error {
			cl, err := o.prepare(c)
			if err != nil {
				return err
			}
			k, ok := restartKinds[kind]
			if !ok && kind != "" {
				return fmt.Errorf("%s: --kind %q: want controller, node, hdfs-head, nfs-head or s3-head", commandName(c), kind)
			}
			prog, err := cl.RestartPlan(c.Context, k)
			if err != nil {
				return err
			}
			return printPlan(c.App.Writer, g, prog)
		},
	}
}

// clusterPauseCommand is `sluice cluster pause` (pause) or `sluice
// cluster resume`.
func clusterPauseCommand(g *globalOptions, o *clusterOptions, schedFlag cli.Flag, pause bool) *cli.Command {
	name, usage := "resume", "let the plan start steps again"
	if pause {
		name, usage = "pause", "start no new step (placement, update, restart) until resume; the step in progress finishes, failed pods are still relaunched"
	}
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Flags: []cli.Flag{schedFlag},
		Action: func(c *cli.Context) error {
			cl, err := o.prepare(c)
			if err != nil {
				return err
			}
			call := cl.ResumePlan
			if pause {
				call = cl.PausePlan
			}
			prog, err := call(c.Context)
			if err != nil {
				return err
			}
			return printPlan(c.App.Writer, g, prog)
		},
	}
}

// printPlan prints the plan's steps, then (in the table format) whether
// it is paused and the configuration changes it refused.
func printPlan(w io.Writer, g *globalOptions, prog scheduler.PlanView) error {
	if err := printProgress(w, g, prog); err != nil {
		return err
	}
	if g.Output == formatJSON {
		return nil
	}
	if prog.Paused {
		fmt.Fprintln(w, "paused: no new step starts (sluice cluster resume)")
	}
	for _, e := range prog.Errors {
		fmt.Fprintln(w, "refused:", e)
	}
	return nil
}
