package main

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/client/ctlclient"
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
					&cli.StringFlag{Name: "table", Usage: "the table's `NAME` (default SCOPE_STREAM)", Destination: &o.Table},
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
	t := hiveTable{Scope: scope, Stream: stream, Table: o.Table, Format: o.Format, FieldDelimiter: o.FieldDelimiter}
	t.Columns = parseHiveColumns(o.Columns)
	// Check the flags before asking the controller anything.
	if _, err := hiveDDL(t); err != nil {
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
	ddl, err := hiveDDL(t)
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

// hiveTable is what the DDL is made of.
type hiveTable struct {
	Scope, Stream  string
	Table          string // "" for <scope>_<stream>
	Root           string // the tier-2 root URI
	Format         string // json, text or binary
	Columns        []hiveColumn
	FieldDelimiter string  // text
	Segments       []int64 // the partitions to add, any order
}

// hiveColumn is one column of --column "name TYPE".
type hiveColumn struct{ Name, Type string }

var (
	hiveColumnName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// hiveType admits Hive's type syntax (STRING, DECIMAL(10,2),
	// ARRAY<STRUCT<a:INT>>) and nothing that could end the statement.
	hiveType      = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\s*[(<][A-Za-z0-9_ ,:<>()]*[)>])?$`)
	hivePrimitive = regexp.MustCompile(`(?i)^(string|tinyint|smallint|int|integer|bigint|float|double|boolean|date|timestamp|binary|decimal(\(\s*\d+\s*(,\s*\d+\s*)?\))?|varchar\(\s*\d+\s*\)|char\(\s*\d+\s*\))$`)
	hiveUnsafe    = regexp.MustCompile(`[^A-Za-z0-9_]`)
)

// parseHiveColumns splits the --column flags at the first space; hiveDDL
// checks the parts.
func parseHiveColumns(flags []string) []hiveColumn {
	var out []hiveColumn
	for _, f := range flags {
		f = strings.TrimSpace(f)
		name, typ := f, ""
		if i := strings.IndexFunc(f, unicode.IsSpace); i >= 0 {
			name, typ = f[:i], strings.TrimSpace(f[i:])
		}
		out = append(out, hiveColumn{Name: name, Type: typ})
	}
	return out
}

// The SerDe every format uses: Hive's lazy simple SerDe is the one among
// Hive's own that takes BytesWritable values (the tier-2 SequenceFiles'
// values) as well as Text.
const lazySimpleSerDe = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"

// hiveDDL returns the statements that make Hive read the stream in place:
// an external table partitioned by segment over <root>/<scope>/<stream>,
// one ADD PARTITION per segment, and for json a view that parses the
// events. It is pure: the flags' checks are here too.
func hiveDDL(t hiveTable) (string, error) {
	table := t.Table
	if table == "" {
		table = hiveUnsafe.ReplaceAllString(t.Scope+"_"+t.Stream, "_")
	}
	if strings.TrimSpace(table) == "" {
		return "", errors.New("--table: the table name is empty")
	}
	if strings.ContainsFunc(table, unicode.IsControl) {
		return "", fmt.Errorf("--table %q: control characters are not allowed", table)
	}
	for _, col := range t.Columns {
		if !hiveColumnName.MatchString(col.Name) {
			return "", fmt.Errorf("--column %q: the name must be letters, digits and '_', not starting with a digit", col.Name+" "+col.Type)
		}
		if strings.EqualFold(col.Name, "segment") {
			return "", fmt.Errorf("--column %q: segment is the partition column", col.Name+" "+col.Type)
		}
		if !hiveType.MatchString(col.Type) {
			return "", fmt.Errorf("--column %q: want \"name TYPE\" with a Hive type (STRING, BIGINT, DECIMAL(10,2), ...)", col.Name+" "+col.Type)
		}
	}
	cols := t.Columns
	raw := table // the table over the files
	var serdeProps, tblProps []string
	switch t.Format {
	case "json":
		if len(cols) == 0 {
			return "", errors.New(`--format json needs the columns: --column "name TYPE" for each field to read (e.g. --column "sensor STRING" --column "celsius DOUBLE")`)
		}
		for _, col := range cols {
			if !hivePrimitive.MatchString(col.Type) || strings.EqualFold(col.Type, "binary") {
				return "", fmt.Errorf("--column %q: --format json takes primitive types (STRING, BIGINT, DOUBLE, DECIMAL(p,s), TIMESTAMP, ...); read nested values as STRING and parse them with get_json_object", col.Name+" "+col.Type)
			}
		}
		raw = table + "_raw"
		serdeProps = []string{hiveProp("serialization.last.column.takes.rest", "true")}
	case "text":
		if t.FieldDelimiter == "" {
			return "", errors.New("--field-delimiter is empty")
		}
		if len([]byte(t.FieldDelimiter)) != 1 {
			return "", fmt.Errorf("--field-delimiter %q: want one byte (Hive's simple SerDe splits on one)", t.FieldDelimiter)
		}
		if c := t.FieldDelimiter[0]; c >= '0' && c <= '9' {
			return "", fmt.Errorf("--field-delimiter %q: Hive reads a digit as a byte value, not as the character", t.FieldDelimiter)
		}
		serdeProps = []string{hiveProp("field.delim", t.FieldDelimiter), hiveProp("serialization.format", t.FieldDelimiter)}
		if len(cols) == 0 {
			cols = []hiveColumn{{"line", "STRING"}}
			serdeProps = append(serdeProps, hiveProp("serialization.last.column.takes.rest", "true"))
		}
	case "binary":
		if len(cols) > 0 {
			return "", errors.New("--format binary has one column, event BINARY; --column is not for it")
		}
		cols = []hiveColumn{{"event", "BINARY"}}
		serdeProps = []string{hiveProp("serialization.last.column.takes.rest", "true")}
		tblProps = []string{hiveProp("hive.serialization.decode.binary.as.base64", "false")}
	default:
		return "", fmt.Errorf("--format %q: want json, text or binary", t.Format)
	}
	root := strings.TrimRight(t.Root, "/")
	location := root + "/" + t.Scope + "/" + t.Stream

	var b strings.Builder
	fmt.Fprintf(&b, "-- Stream %s/%s: tier-2 SequenceFiles (key: offset, value: event bytes),\n", t.Scope, t.Stream)
	fmt.Fprintf(&b, "-- one partition per segment. Generated by 'sluice hive ddl'.\n")
	if t.Format == "json" {
		fmt.Fprintf(&b, "-- Hive's JSON SerDe reads Text values only, so %s holds each event as\n", hiveIdent(raw))
		fmt.Fprintf(&b, "-- one STRING and the view %s parses the JSON.\n", hiveIdent(table))
		cols = []hiveColumn{{"json", "STRING"}}
	}
	fmt.Fprintf(&b, "CREATE EXTERNAL TABLE IF NOT EXISTS %s (\n", hiveIdent(raw))
	for i, col := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", hiveIdent(col.Name), col.Type, sep)
	}
	fmt.Fprintf(&b, ")\n")
	fmt.Fprintf(&b, "PARTITIONED BY (%s BIGINT)\n", hiveIdent("segment"))
	fmt.Fprintf(&b, "ROW FORMAT SERDE %s\n", hiveString(lazySimpleSerDe))
	fmt.Fprintf(&b, "WITH SERDEPROPERTIES (%s)\n", strings.Join(serdeProps, ", "))
	fmt.Fprintf(&b, "STORED AS SEQUENCEFILE\n")
	fmt.Fprintf(&b, "LOCATION %s", hiveString(location))
	if len(tblProps) > 0 {
		fmt.Fprintf(&b, "\nTBLPROPERTIES (%s)", strings.Join(tblProps, ", "))
	}
	fmt.Fprintf(&b, ";\n\n")

	segs := append([]int64(nil), t.Segments...)
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	for _, n := range segs {
		fmt.Fprintf(&b, "ALTER TABLE %s ADD IF NOT EXISTS PARTITION (%s=%d) LOCATION %s;\n",
			hiveIdent(raw), hiveIdent("segment"), n, hiveString(fmt.Sprintf("%s/segment=%d", location, n)))
	}
	fmt.Fprintf(&b, "-- Segments created after this (the stream scales): MSCK REPAIR TABLE %s;\n", hiveIdent(raw))
	fmt.Fprintf(&b, "-- adds their segment=N directories, or run 'sluice hive ddl' again.\n")

	if t.Format == "json" {
		fmt.Fprintf(&b, "\nCREATE VIEW IF NOT EXISTS %s AS\nSELECT\n", hiveIdent(table))
		for _, col := range t.Columns {
			fmt.Fprintf(&b, "  CAST(get_json_object(%s, %s) AS %s) AS %s,\n",
				hiveIdent("json"), hiveString("$."+col.Name), col.Type, hiveIdent(col.Name))
		}
		fmt.Fprintf(&b, "  %s\nFROM %s;\n", hiveIdent("segment"), hiveIdent(raw))
	}
	return b.String(), nil
}

// hiveIdent back-quotes a Hive identifier (a back-quote inside is doubled).
func hiveIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// hiveString is a Hive string literal of s: single-quoted, with '\' and
// '\” escaped, and control characters as \uXXXX.
func hiveString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func hiveProp(k, v string) string { return hiveString(k) + "=" + hiveString(v) }
