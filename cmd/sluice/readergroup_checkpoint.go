package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client"
	"github.com/sluice-streams/sluice/protocol/api"
)

// readerGroupCheckpointOptions are the flags of `sluice readergroup
// checkpoint`.
type readerGroupCheckpointOptions struct {
	Timeout time.Duration // --timeout: how long to wait for the readers
}

func readerGroupCheckpointCommand(g *globalOptions) *cli.Command {
	o := &readerGroupCheckpointOptions{}
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "take a named checkpoint of a reader group and print its stream cut",
		Description: "Every reader of the group returns the checkpoint as an event (`sluice read --group` skips it) and\n" +
			"reports its position there; the command waits for all of them (at most --timeout) and prints the cut.\n" +
			"Past --timeout it fails, but the checkpoint still completes once the readers deliver it.\n" +
			"`readergroup reset --checkpoint NAME` goes back to it.",
		ArgsUsage: "SCOPE/GROUP NAME",
		Flags: []cli.Flag{
			durationFlag("timeout", "wait at most `D` for the group's readers", 30*time.Second, &o.Timeout),
		},
		Action: func(c *cli.Context) error { return readerGroupCheckpoint(c, g, o) },
	}
}

func readerGroupCheckpoint(c *cli.Context, g *globalOptions, o *readerGroupCheckpointOptions) error {
	a, err := args(c, "SCOPE/GROUP", "NAME")
	if err != nil {
		return err
	}
	scope, group, err := splitGroup(c, a[0])
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %v: want more than 0", o.Timeout)
	}
	cl, rg, err := openGroup(c, g, scope, group)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(c.Context, o.Timeout)
	defer cancel()
	cut, err := rg.InitiateCheckpoint(ctx, a[1])
	if err != nil {
		return fmt.Errorf("readergroup checkpoint %s/%s %s: %w", scope, group, a[1], err)
	}
	p, err := newPrinter(c.App.Writer, g.Output)
	if err != nil {
		return err
	}
	return p.done(fmt.Sprintf("checkpoint %s of reader group %s/%s: %s", a[1], scope, group, cut),
		map[string]any{"group": scope + "/" + group, "checkpoint": a[1], "cut": cut.String()})
}

// describeCheckpoints writes, after `readergroup describe`'s table, the
// group's end cut and its completed checkpoints, oldest first (the names
// `readergroup reset --checkpoint` takes).
func describeCheckpoints(w io.Writer, st *client.GroupState) {
	if st.EndCut != nil {
		fmt.Fprintf(w, "ends at %s\n", st.EndCut)
	}
	for _, cp := range st.Checkpoints {
		fmt.Fprintf(w, "checkpoint %s: %s\n", cp.Name, cp.Cut)
	}
}

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
			"(--checkpoint NAME, one of the last checkpoints `readergroup describe` lists on stderr) or from --cut CUT: the events\n" +
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
	cl, rg, err := openGroup(c, g, scope, group)
	if err != nil {
		return err
	}
	defer cl.Close()
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
