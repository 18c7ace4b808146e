package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
	"github.com/sluice-streams/sluice/protocol/api"
)

// apiClient returns the REST client of the controller at --controller.
func apiClient(g *globalOptions) *ctlclient.Client { return ctlclient.NewClient(g.Controller) }

// args returns the command's positional arguments, which must be exactly
// the names in want (e.g. "SCOPE").
func args(c *cli.Context, want ...string) ([]string, error) {
	got := c.Args().Slice()
	if len(got) != len(want) {
		gotText := "none"
		if len(got) > 0 {
			gotText = fmt.Sprintf("%q", got)
		}
		return nil, usageErr{fmt.Errorf("%s: want %s, got %s (see '%s --help')", commandName(c), argList(want), gotText, c.Command.HelpName)}
	}
	return got, nil
}

// commandName is the command's path without the program name ("stream
// create").
func commandName(c *cli.Context) string {
	return strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ")
}

func argList(want []string) string {
	if len(want) == 0 {
		return "no argument"
	}
	return strings.Join(want, " ")
}

func scopeCommand(g *globalOptions) *cli.Command {
	return &cli.Command{
		Name:  "scope",
		Usage: "create, list and delete scopes",
		Subcommands: []*cli.Command{
			{
				Name:      "create",
				Usage:     "create a scope",
				ArgsUsage: "SCOPE",
				Action:    func(c *cli.Context) error { return scopeCreate(c, g) },
			},
			{
				Name:   "list",
				Usage:  "list the scopes",
				Action: func(c *cli.Context) error { return scopeList(c, g) },
			},
			{
				Name:      "delete",
				Usage:     "delete a scope that has no streams",
				ArgsUsage: "SCOPE",
				Action:    func(c *cli.Context) error { return scopeDelete(c, g) },
			},
		},
	}
}

func scopeOutput(scopes []api.ScopeProperty, json any) output {
	o := output{Columns: []string{"SCOPE"}, JSON: json}
	for _, s := range scopes {
		o.Rows = append(o.Rows, []string{s.ScopeName})
	}
	return o
}

func scopeCreate(c *cli.Context, g *globalOptions) error {
	a, err := args(c, "SCOPE")
	if err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	if err := apiClient(g).CreateScope(c.Context, a[0]); err != nil {
		return err
	}
	s := api.ScopeProperty{ScopeName: a[0]}
	return p.Print(scopeOutput([]api.ScopeProperty{s}, s))
}

func scopeList(c *cli.Context, g *globalOptions) error {
	if _, err := args(c); err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	scopes, err := apiClient(g).ListScopes(c.Context)
	if err != nil {
		return err
	}
	if scopes == nil {
		scopes = []api.ScopeProperty{}
	}
	return p.Print(scopeOutput(scopes, scopes))
}

func scopeDelete(c *cli.Context, g *globalOptions) error {
	a, err := args(c, "SCOPE")
	if err != nil {
		return err
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	if err := apiClient(g).DeleteScope(c.Context, a[0]); err != nil {
		return err
	}
	return p.done("deleted scope "+a[0], map[string]any{"scope": a[0], "deleted": true})
}
