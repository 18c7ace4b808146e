package main

import (
	"errors"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/protocol/api"
)

// writerTimeoutFlag is --writer-timeout of `sluice controller` and
// `sluice standalone`: controller.Options.WriterTimeout; dest starts at
// value.
func writerTimeoutFlag(value time.Duration, dest *time.Duration) cli.Flag {
	*dest = value
	return &cli.GenericFlag{
		Name:  "writer-timeout",
		Usage: "how long a writer may go without noting an event time before the stream's watermarks stop waiting for it (`D`: 90s, 5m)",
		Value: durationValue{p: dest, check: func(d time.Duration) error {
			if d < time.Millisecond {
				return errors.New("want at least 1ms, such as 30s or 5m")
			}
			return nil
		}},
	}
}

// streamWatermarksCommand is `sluice stream watermarks SCOPE/STREAM`.
func streamWatermarksCommand(g *globalOptions) *cli.Command {
	var after int64
	return &cli.Command{
		Name:      "watermarks",
		Usage:     "list a stream's watermarks: event-time bounds at stream cuts, oldest first",
		ArgsUsage: "SCOPE/STREAM",
		Description: "Each watermark says: when the stream's active writers last noted event times, the least was LOWER " +
			"and the greatest UPPER, and none of them had written past CUT.",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "after", Usage: "only watermarks numbered after `SEQ`", Destination: &after},
		},
		Action: func(c *cli.Context) error {
			scope, stream, p, err := streamAndPrinter(c, g)
			if err != nil {
				return err
			}
			ws, err := apiClient(g).Watermarks(c.Context, scope, stream, after)
			if err != nil {
				return err
			}
			return p.Print(watermarkOutput(ws))
		},
	}
}

func watermarkOutput(ws []api.Watermark) output {
	if ws == nil {
		ws = []api.Watermark{}
	}
	o := output{Columns: []string{"SEQ", "LOWER", "UPPER", "CUT"}, JSON: ws}
	ms := func(t int64) string { return time.UnixMilli(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	for _, w := range ws {
		o.Rows = append(o.Rows, []string{strconv.FormatInt(w.Seq, 10), ms(w.LowerTime), ms(w.UpperTime), w.Cut.String()})
	}
	return o
}
