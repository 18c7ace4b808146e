package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/internal/bench"
)

// benchSummaryCommand is `sluice bench summarize [FILE]`: the min, median
// and max over the rounds of scripts/bench-tail.sh's output, per run and
// measure, against the targets (bench.Summarize).
func benchSummaryCommand(g *globalOptions) *cli.Command {
	var cache int64
	return &cli.Command{
		Name:      "summarize",
		Usage:     "summarize the reports of scripts/bench-tail.sh: min/median/max of each measure against its target",
		ArgsUsage: "[FILE]",
		Description: "Reads \"# run: NAME\" and \"# load: ...\" lines and one JSON report per run (FILE, or stdin when none\n" +
			"or -), and prints per run and measure the min, median and max over the rounds and whether the max meets the target.",
		Flags: []cli.Flag{
			sizeFlag("cache-size", "the server's --cache-size `BYTES`: peak RSS is set against it + 128 MiB (0: no target)", 0, &cache),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return fmt.Errorf("bench summarize: one FILE at most, got %q", c.Args().Slice())
			}
			in := stdin
			if name := c.Args().First(); name != "" && name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return fmt.Errorf("bench summarize: %w", err)
				}
				defer f.Close()
				in = f
			}
			rows, err := bench.Summarize(in, cache)
			if err != nil {
				return fmt.Errorf("bench summarize: %w", err)
			}
			p, err := newPrinter(c.App.Writer, g.Output)
			if err != nil {
				return err
			}
			f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
			o := output{Columns: []string{"RUN", "MEASURE", "TARGET", "MIN", "MEDIAN", "MAX", "N", "MET"}, JSON: rows}
			for _, r := range rows {
				met := ""
				if r.Met != nil {
					met = map[bool]string{true: "yes", false: "NO"}[*r.Met]
				}
				o.Rows = append(o.Rows, []string{r.Run, r.Measure, r.Target, f(r.Min), f(r.Median), f(r.Max), strconv.Itoa(r.N), met})
			}
			return p.Print(o)
		},
	}
}
