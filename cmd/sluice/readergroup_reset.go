package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/protocol/api"
)

// readerGroupResetOptions are the flags of `sluice readergroup reset`.
type readerGroupResetOptions struct {
	Checkpoint string // --checkpoint NAME: a completed checkpoint of the group
	Cut        string // --cut CUT: any consistent cut of the group's stream
}

func readerGroupResetCommand(g *globalOptions) *cli.Command {
	o := &readerGroupResetOptions{}
	return &cli.Command{
		Name:  "reset",
		Usage: "restart a reader group from one of its checkpoints or from a stream cut",
		Description: "Every reader of the group drops what it holds and the group continues from the checkpoint's cut\n" +
			"(--checkpoint NAME, one of the last checkpoints `readergroup describe` lists) or from --cut CUT: the events\n" +
			"after it are read again, those before it are not. Give exactly one of the two.",
		ArgsUsage: "SCOPE/GROUP",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "checkpoint", Usage: "restart from the group's completed checkpoint `NAME`", Destination: &o.Checkpoint},
			&cli.StringFlag{Name: "cut", Usage: "restart from stream cut `CUT` (scope/stream:N.#epoch.E=OFFSET,...)", Destination: &o.Cut},
		},
		Action: func(c *cli.Context) error { return readerGroupReset(c, g, o) },
	}
}

func readerGroupReset(c *cli.Context, g *globalOptions, o *readerGroupResetOptions) error {
	scope, group, err := groupArg(c)
	if err != nil {
		return err
	}
	if (o.Checkpoint == "") == (o.Cut == "") {
		return errors.New("readergroup reset: give exactly one of --checkpoint NAME and --cut CUT")
	}
	var cut api.StreamCut
	if o.Cut != "" {
		if cut, err = api.ParseStreamCut(o.Cut); err != nil {
			return fmt.Errorf("--cut: want a stream cut: %w", err)
		}
	}
	cl, err := client.New(c.Context, g.Controller)
	if err != nil {
		return err
	}
	defer cl.Close()
	rg, err := cl.ReaderGroup(scope, group)
	if err != nil {
		return err
	}
	from := o.Cut
	if o.Checkpoint != "" {
		if cut, err = rg.Checkpoint(c.Context, o.Checkpoint); err != nil {
			return fmt.Errorf("readergroup reset %s/%s: %w", scope, group, err)
		}
		err = rg.ResetToCheckpoint(c.Context, o.Checkpoint)
		from = "checkpoint " + o.Checkpoint
	} else {
		err = rg.ResetToCut(c.Context, cut)
	}
	if err != nil {
		return fmt.Errorf("readergroup reset %s/%s: %w", scope, group, err)
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	return p.done(fmt.Sprintf("reset reader group %s/%s to %s (%s)", scope, group, from, cut),
		map[string]any{"group": scope + "/" + group, "cut": cut.String(), "checkpoint": o.Checkpoint})
}
