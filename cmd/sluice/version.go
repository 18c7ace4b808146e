package main

import (
	"runtime"

	"github.com/urfave/cli/v2"
)

func versionCommand(g *globalOptions) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version of this binary",
		Action: func(c *cli.Context) error {
			p, err := newPrinter(c.App.Writer, g.Output)
			if err != nil {
				return err
			}
			return p.Print(output{
				Columns: []string{"VERSION", "GO"},
				Rows:    [][]string{{version, runtime.Version()}},
				JSON:    map[string]string{"version": version, "go": runtime.Version()},
			})
		},
	}
}
