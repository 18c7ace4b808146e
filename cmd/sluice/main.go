// Command sluice is the one binary of Sluice: every role (node, controller,
// standalone, ...) and every client command is a subcommand. This package only
// wires flags to the packages that do the work; see docs/ARCHITECTURE.md.
package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

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
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context that ends long-running commands (the
// roles stop as on SIGTERM when ctx is done), for tests.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var g globalOptions
	app := newApp(&g, stdout, stderr)
	err := app.RunContext(ctx, flagsFirst(app, args))
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
		// --tag k=v may hold commas; commands that take lists split them.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			nodeCommand(g),
			controllerCommand(g),
			standaloneCommand(g),
			scopeCommand(g),
			streamCommand(g),
			writeCommand(g),
			benchCommand(g),
			readCommand(g),
			readerGroupCommand(g),
			hiveCommand(g),
			schedulerCommand(g),
			clusterCommand(g),
			executorCommand(g),
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
	if g.Controller, err = controllerURL(g.Controller); err != nil {
		return err
	}
	logrus.SetOutput(stderr)
	logrus.SetFormatter(&logrus.TextFormatter{})
	logrus.SetLevel(level)
	return nil
}

// controllerURL checks --controller and gives a URL without a scheme
// http:// (host:port is what users type), so a typo is one clear line
// rather than a URL-parse error at the first request.
func controllerURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--controller %q: want http://HOST:PORT (or HOST:PORT)", s)
	}
	return strings.TrimRight(s, "/"), nil
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

// flagsFirst moves the positional arguments of the command args name after
// its flags, so that `sluice stream create s/x --segments 2` parses as
// `sluice stream create --segments 2 s/x` (urfave/cli stops parsing flags at
// the first positional argument). Global flags stay before the command
// name; everything after "--" stays as it is.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	flags, commands := app.Flags, app.Commands
	i := 1
	// The global flags and the command path.
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			var next *cli.Command
			for _, c := range commands {
				if c.HasName(a) {
					next = c
				}
			}
			if next == nil {
				break
			}
			out = append(out, a)
			i++
			flags, commands = next.Flags, next.Subcommands
			continue
		}
		n := flagTokens(flags, args[i:])
		out = append(out, args[i:i+n]...)
		i += n
	}
	// The command's own flags, then its positional arguments.
	var positional []string
	for i < len(args) {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			i++
			continue
		}
		n := flagTokens(flags, args[i:])
		out = append(out, args[i:i+n]...)
		i += n
	}
	return append(out, positional...)
}

// flagTokens returns how many tokens the flag at args[0] takes: 2 for a
// flag with a value given separately, else 1.
func flagTokens(flags []cli.Flag, args []string) int {
	name := strings.TrimLeft(args[0], "-")
	if strings.Contains(name, "=") || len(args) < 2 {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return 1
			}
			return 2
		}
	}
	return 1 // unknown: the parser reports it
}
