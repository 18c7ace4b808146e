package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-streams/sluice/protocol/api"
)

// maxHistoryRows bounds the scaling history's table in `stream describe`
// (the newest epochs; -o json has them all).
const maxHistoryRows = 20

// printScalingHistory prints the "scaling history" table of `stream
// describe`: per epoch, when it began, its key ranges and why.
func printScalingHistory(w io.Writer, p *printer, epochs []api.EpochInfo) error {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SCALING HISTORY")
	shown := epochs
	if len(shown) > maxHistoryRows {
		fmt.Fprintf(w, "(the newest %d of %d epochs; -o json shows all)\n", maxHistoryRows, len(epochs))
		shown = shown[len(shown)-maxHistoryRows:]
	}
	return p.Print(historyOutput(shown))
}

func historyOutput(epochs []api.EpochInfo) output {
	o := output{Columns: []string{"EPOCH", "CREATED", "SEGMENTS", "KEY RANGES", "TRIGGER", "REASON"}, JSON: epochs}
	for _, e := range epochs {
		ranges := make([]string, len(e.Segments))
		for i, s := range e.Segments {
			ranges[i] = fmt.Sprintf("%d:[%v, %v)", s.Number, s.KeyLow, s.KeyHigh)
		}
		reason := e.Reason
		if reason == "" {
			reason = "-"
		}
		o.Rows = append(o.Rows, []string{strconv.FormatInt(e.Epoch, 10), time.UnixMilli(e.CreationTime).UTC().Format(time.RFC3339),
			strconv.Itoa(len(e.Segments)), strings.Join(ranges, " "), e.Trigger, reason})
	}
	return o
}
