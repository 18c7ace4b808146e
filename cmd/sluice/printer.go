package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

const (
	formatTable = "table"
	formatJSON  = "json"
)

// output is what a command prints. The table format prints Columns and Rows;
// the json format prints JSON if it is set, else one object per row keyed by
// the lower-cased column names.
type output struct {
	Columns []string
	Rows    [][]string
	JSON    any
}

// printer prints command output in one format (--output). Every command that
// prints data prints through it, so table and json stay consistent.
type printer struct {
	w      io.Writer
	format string
}

func newPrinter(w io.Writer, format string) (*printer, error) {
	switch format {
	case formatTable, formatJSON:
		return &printer{w: w, format: format}, nil
	default:
		return nil, fmt.Errorf("--output: unknown format %q (want %s or %s)", format, formatTable, formatJSON)
	}
}

// Print prints o.
func (p *printer) Print(o output) error {
	if p.format == formatJSON {
		return p.printJSON(o)
	}
	return p.printTable(o)
}

func (p *printer) printTable(o output) error {
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	if len(o.Columns) > 0 {
		fmt.Fprintln(tw, strings.Join(o.Columns, "\t"))
	}
	for _, row := range o.Rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func (p *printer) printJSON(o output) error {
	v := o.JSON
	if v == nil {
		rows := make([]map[string]string, 0, len(o.Rows))
		for _, row := range o.Rows {
			m := make(map[string]string, len(o.Columns))
			for i, col := range o.Columns {
				if i < len(row) {
					m[strings.ToLower(col)] = row[i]
				}
			}
			rows = append(rows, m)
		}
		v = rows
	}
	enc := json.NewEncoder(p.w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
