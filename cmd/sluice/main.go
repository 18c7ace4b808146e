// Command sluice is the one binary of Sluice: every role (node, controller,
// standalone, ...) and every client command is a subcommand. This package only
// wires flags to the packages that do the work; see DESIGN.md §4.4.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
)

// version is set at build time: go build -ldflags "-X main.version=v0.1.0".
var version = "dev"

// globalOptions are the flags every command sees.
type globalOptions struct {
	Controller string // --controller, env SLUICE_CONTROLLER
	LogLevel   string // --log-level, a logrus level
	Output     string // --output table|json
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run runs the app with args (args[0] is the program name) and returns the
// exit status. An error is printed once, as one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	var g globalOptions
	err := newApp(&g, stdout, stderr).Run(args)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "sluice: %v\n", err)
	return 1
}

func newApp(g *globalOptions, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:           "sluice",
		Usage:          "durable, elastic stream storage",
		HideVersion:    true, // the version command prints it
		Writer:         stdout,
		ErrWriter:      stderr,
		Flags:          globalFlags(g),
		Before:         func(*cli.Context) error { return setUp(g, stderr) },
		Action:         groupAction,
		ExitErrHandler: func(*cli.Context, error) {}, // run prints errors, once
		OnUsageError:   usageError,
		Commands: []*cli.Command{
			nodeCommand(g),
			versionCommand(g),
		},
	}
	for _, c := range app.Commands {
		quietUsageErrors(c)
	}
	return app
}

func globalFlags(g *globalOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:        "controller",
			Usage:       "controller `URL`",
			EnvVars:     []string{"SLUICE_CONTROLLER"},
			Value:       "http://127.0.0.1:10080",
			Destination: &g.Controller,
		},
		&cli.StringFlag{
			Name:        "log-level",
			Usage:       "log `LEVEL`: trace, debug, info, warn, error, fatal or panic",
			Value:       "info",
			Destination: &g.LogLevel,
		},
		&cli.StringFlag{
			Name:        "output",
			Aliases:     []string{"o"},
			Usage:       "output `FORMAT` of commands that print data: table or json",
			Value:       formatTable,
			Destination: &g.Output,
		},
	}
}

// setUp checks the global flags and configures the standard logrus logger:
// text to stderr at the chosen level.
func setUp(g *globalOptions, stderr io.Writer) error {
	level, err := logrus.ParseLevel(g.LogLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if _, err := newPrinter(stderr, g.Output); err != nil {
		return err
	}
	logrus.SetOutput(stderr)
	logrus.SetFormatter(&logrus.TextFormatter{})
	logrus.SetLevel(level)
	return nil
}

// groupAction is the action of the app and of command groups: with no
// argument it shows help; with one it reports an unknown command.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		return fmt.Errorf("unknown command %q (see '%s --help')", c.Args().First(), c.Command.HelpName)
	}
	return cli.ShowSubcommandHelp(c)
}

// usageError returns a flag-parsing error unprinted, so that run prints it as
// the one line.
func usageError(_ *cli.Context, err error, _ bool) error { return err }

// quietUsageErrors makes c and its subcommands return usage errors instead of
// printing them with help, and gives command groups groupAction.
func quietUsageErrors(c *cli.Command) {
	if c.OnUsageError == nil {
		c.OnUsageError = usageError
	}
	if len(c.Subcommands) > 0 && c.Action == nil {
		c.Action = groupAction
	}
	for _, s := range c.Subcommands {
		quietUsageErrors(s)
	}
}
