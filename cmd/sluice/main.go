// Command sluice is the one binary of Sluice: every role (node, controller,
// standalone, ...) and every client command is a subcommand. This package only
// wires flags to the packages that do the work; see docs/ARCHITECTURE.md.
//
// The command line is the same everywhere: global flags anywhere before
// "--" (flagsFirst); one flag type for sizes (sizeFlag) and one for
// durations (durationFlag); output through one printer, table or json
// (-o json: camelCase keys, mutations print what they changed, errors
// are a JSON object on stderr, see printError).
//
// The role commands (node, controller, standalone) bind their flags into
// package embed's configs, so each setting is declared once, there; they
// keep apart only what is command-line alone (--zk's comma-separated
// list, SLUICE_TEST_HALT_AT), and run the role through serveRole.
package main

import (
	"context"
	"errors"
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
	Version    bool   // --version: print the version, as the version command
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
	if err == nil || errors.Is(err, errVersionShown) {
		return 0
	}
	printError(stderr, g.Output, err)
	return 1
}

// errVersionShown ends a run whose --version printed the version: nothing
// else on the line is run.
var errVersionShown = errors.New("version shown")

func newApp(g *globalOptions, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:           "sluice",
		Usage:          "durable, elastic stream storage",
		Description:    appDescription,
		HideVersion:    true, // --version is a global flag of ours, printed as the version command prints
		Writer:         stdout,
		ErrWriter:      stderr,
		Flags:          globalFlags(g),
		Before:         func(c *cli.Context) error { return setUp(c, g, stderr) },
		Action:         groupAction,
		ExitErrHandler: func(*cli.Context, error) {}, // run prints errors, once
		OnUsageError:   usageError,
		// --tag k=v may hold commas; commands that take lists split them.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			nodeCommand(g),
			controllerCommand(g),
			standaloneCommand(g),
			hdfsGatewayCommand(g),
			nfsExportCommand(g),
			s3GatewayCommand(g),
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

// appDescription is the app's help text on the global flags and on
// --output.
const appDescription = `The global options may come anywhere on the line before "--" (sluice stream describe s/t -o json);
given twice, the last one wins.

--output json: commands that print data print JSON (keys in camelCase, as the REST API's); mutations print
the object created or changed, or what was done ({"stream": "s/t", "sealed": true}); read prints one JSON
object per event per line; write prints a summary object. An error is then one JSON object on stderr,
{"error": {"message": "...", "code": "NOT_FOUND"}} (code: the REST API's, USAGE for a wrong command line, UNREACHABLE for a controller that does not answer),
and the exit status is 1. The roles (node, controller, standalone, scheduler, executor) print logs, not
data: for them json changes only how an error is printed.`

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
			Usage:       "output `FORMAT` of commands that print data, and of errors: table or json",
			Value:       formatTable,
			Destination: &g.Output,
		},
		&cli.BoolFlag{
			Name:        "version",
			Usage:       "print the version of this binary (as the version command) and nothing else",
			Destination: &g.Version,
		},
	}
}

// setUp checks the global flags and configures the standard logrus logger:
// text to stderr at the chosen level. With --version it prints the
// version and returns errVersionShown.
func setUp(c *cli.Context, g *globalOptions, stderr io.Writer) error {
	level, err := logrus.ParseLevel(g.LogLevel)
	if err != nil {
		return usageErr{fmt.Errorf("--log-level: %w", err)}
	}
	if _, err := newPrinter(stderr, g.Output); err != nil {
		return usageErr{err}
	}
	if g.Version {
		if err := printVersion(c.App.Writer, g.Output); err != nil {
			return err
		}
		return errVersionShown
	}
	if g.Controller, err = controllerURL(g.Controller); err != nil {
		return usageErr{err}
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
		return usageErr{fmt.Errorf("unknown command %q (see '%s --help')", c.Args().First(), c.Command.HelpName)}
	}
	return cli.ShowSubcommandHelp(c)
}

// usageError returns a flag-parsing error unprinted, so that run prints it
// once, as a usage error.
func usageError(_ *cli.Context, err error, _ bool) error { return usageErr{err} }

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

// flagsFirst rearranges args for urfave/cli, which takes global flags
// only before the command name and a command's flags only before its
// first positional argument. The global flags, wherever they are before
// "--" (`sluice stream describe s/t -o json`), go first; then the command
// path, each name followed by the flags given after it; then the
// command's positional arguments (`sluice stream create s/x --segments 2`
// parses as `sluice stream create --segments 2 s/x`). Everything from
// "--" on stays as it is, last. The order of the flags among themselves
// is kept, so of a flag given twice the last wins.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var global, path, positional []string
	flags, commands := app.Flags, app.Commands
	inPath := true // still reading command names
	for i := 1; i < len(args); {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case !strings.HasPrefix(a, "-") || a == "-":
			if next := subcommand(commands, a); inPath && next != nil {
				path = append(path, a)
				flags, commands = next.Flags, next.Subcommands
			} else {
				inPath = false
				positional = append(positional, a)
			}
			i++
		case hasFlag(app.Flags, a):
			n := flagTokens(app.Flags, args[i:])
			global = append(global, args[i:i+n]...)
			i += n
		default:
			n := flagTokens(flags, args[i:])
			path = append(path, args[i:i+n]...)
			i += n
		}
	}
	out := append([]string{args[0]}, global...)
	out = append(out, path...)
	return append(out, positional...)
}

// subcommand returns the command of commands named name, or nil.
func subcommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// hasFlag says whether the flag token arg ("-o", "--output=json") is one
// of flags.
func hasFlag(flags []cli.Flag, arg string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
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
