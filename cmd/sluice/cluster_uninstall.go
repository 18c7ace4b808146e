package main

import (
	"github.com/urfave/cli/v2"
)

// uninstallCommand is `sluice cluster uninstall`: what an operator does
// for an uninstall (`sluice scheduler --uninstall`, SDK_UNINSTALL=true)
// that waits on an agent that will not come back. `sluice cluster
// status` shows the uninstall plan itself.
func uninstallCommand(g *globalOptions, o *clusterOptions, schedFlag cli.Flag) *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "help an uninstall along ('sluice cluster status' shows its plan)",
		Subcommands: []*cli.Command{
			{
				Name:      "forget-agent",
				Usage:     "stop waiting for an agent that will not come back (marked gone): its pods and reservations are dropped from the uninstall plan and left to Mesos",
				ArgsUsage: "AGENT-ID",
				Flags:     []cli.Flag{schedFlag},
				Action: func(c *cli.Context) error {
					a, err := args(c, "AGENT-ID")
					if err != nil {
						return err
					}
					cl, err := o.client(c)
					if err != nil {
						return err
					}
					prog, err := cl.ForgetAgent(c.Context, a[0])
					if err != nil {
						return err
					}
					return printProgress(c.App.Writer, g, prog)
				},
			},
		},
	}
}
