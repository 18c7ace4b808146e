package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/tier2/hive"
)

// hiveDDLOptions are the flags of `sluice hive ddl`.
type hiveDDLOptions struct {
	Format         string   // --format json|text|binary
	Table          string   // --table: the table's name (default <scope>_<stream>)
	Location       string   // --location: the tier-2 root (default: the controller's)
	Columns        []string // --column "name TYPE", repeated
	FieldDelimiter string   // --field-delimiter (text)
}

func hiveCommand(g *globalOptions) *cli.Command {
	o := &hiveDDLOptions{}
	return &cli.Command{
		Name:  "hive",
		Usage: "read streams from Hive, in place in tier 2",
		Subcommands: []*cli.Command{
			{
				Name:      "ddl",
				Usage:     "print the Hive DDL of an external table over a stream's tier-2 files",
				ArgsUsage: "SCOPE/STREAM",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Usage: "the events' `FORMAT`: json, text (delimited) or binary", Value: "text", Destination: &o.Format},
					&cli.StringFlag{Name: "table", Usage: "the table's `NAME` (default SCOPE_STREAM); json and binary: the view's, over the table NAME_raw", Destination: &o.Table},
					&cli.StringFlag{Name: "location", Usage: "the tier-2 root `URI` (default: the controller's, GET /v1/tier2)", Destination: &o.Location},
					&cli.StringSliceFlag{Name: "column", Usage: "a column `\"name TYPE\"` (repeat; json: required; text: default \"line STRING\")"},
					&cli.StringFlag{Name: "field-delimiter", Usage: "text: the `CHAR` between fields", Value: ",", Destination: &o.FieldDelimiter},
				},
				Action: func(c *cli.Context) error {
					o.Columns = c.StringSlice("column")
					return hiveDDLRun(c, g, o)
				},
			},
		},
	}
}

func hiveDDLRun(c *cli.Context, g *globalOptions, o *hiveDDLOptions) error {
	scope, stream, err := streamArg(c)
	if err != nil {
		return err
	}
	t := hive.Table{Scope: scope, Stream: stream, Name: o.Table, Format: o.Format, FieldDelimiter: o.FieldDelimiter}
	t.Columns = hive.ParseColumns(o.Columns)
	// Check the flags before asking the controller anything.
	if _, err := hive.DDL(t); err != nil {
		return fmt.Errorf("%s: %w", commandName(c), err)
	}
	cl := apiClient(g)
	epochs, err := cl.Epochs(c.Context, scope, stream)
	if err != nil {
		return err
	}
	t.Root = o.Location
	if t.Root == "" {
		t.Root, err = cl.Tier2URI(c.Context)
		if errors.Is(err, ctlclient.ErrNotFound) {
			return fmt.Errorf("%s: %w; give the tier-2 root with --location", commandName(c), err)
		}
		if err != nil {
			return err
		}
	}
	seen := map[int64]bool{}
	for _, e := range epochs {
		for _, s := range e.Segments {
			if !seen[s.Number] {
				seen[s.Number] = true
				t.Segments = append(t.Segments, s.Number)
			}
		}
	}
	ddl, err := hive.DDL(t)
	if err != nil {
		return fmt.Errorf("%s: %w", commandName(c), err)
	}
	if g.Output == formatJSON {
		p, err := newPrinter(c.App.Writer, g.Output)
		if err != nil {
			return err
		}
		return p.Print(output{JSON: map[string]string{"stream": scope + "/" + stream, "ddl": ddl}})
	}
	_, err = fmt.Fprint(c.App.Writer, ddl)
	return err
}
