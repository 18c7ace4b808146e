package main

import (
	"io"
	"runtime"

	"github.com/urfave/cli/v2"
)

func versionCommand(g *globalOptions) *cli.Command {
	return &cli.Command{
		Name:   "version",
		Usage:  "print the version of this binary (as --version does)",
		Action: func(c *cli.Context) error { return printVersion(c.App.Writer, g.Output) },
	}
}

// printVersion prints the version of the binary and of Go, in format
// (--output): the version command and --version.
func printVersion(w io.Writer, format string) error {
	p, err := newPrinter(w, format)
	if err != nil {
		return err
	}
	return p.Print(output{
		Columns: []string{"VERSION", "GO"},
		Rows:    [][]string{{version, runtime.Version()}},
		JSON:    map[string]string{"version": version, "go": runtime.Version()},
	})
}
