package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
)

const (
	formatTable = "table"
	formatJSON  = "json"
)

// output is what a command prints. The table format prints Columns and Rows;
// the json format prints JSON if it is set, else one object per row keyed by
// the columns' names in camelCase ("BYTES BEHIND" -> "bytesBehind"), the key
// style of the REST API and of every JSON the CLI prints.
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
					m[camelKey(col)] = row[i]
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

// done prints what a command that changes something did: in table mode
// the one line text, in json mode the object v ({"stream": "s/t",
// "sealed": true}).
func (p *printer) done(text string, v any) error {
	if p.format == formatJSON {
		return p.printJSON(output{JSON: v})
	}
	_, err := fmt.Fprintln(p.w, text)
	return err
}

// camelKey turns a column name into a JSON key: its words (split at
// anything but a letter or digit) lower-cased and joined, each after the
// first capitalised: "SEGMENT" -> "segment", "BYTES_BEHIND" ->
// "bytesBehind", "TIER-2 ERROR" -> "tier2Error".
func camelKey(col string) string {
	var b strings.Builder
	for i, w := range strings.FieldsFunc(col, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.ToLower(w)
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}
