package hive

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/sluice-streams/sluice/tier2"
)

// ErrInvalid is matched (errors.Is) by DDL's errors: the Table cannot be
// made into DDL as given.
var ErrInvalid = errors.New("hive: invalid table")

// The event formats.
const (
	FormatJSON   = "json"   // one JSON object per event
	FormatText   = "text"   // delimited text
	FormatBinary = "binary" // opaque bytes
)

// NullMarker is the binary format's serialization.null.format: the bytes
// that Hive's simple SerDe reads as NULL. An event is any bytes (up to
// protocol.MaxEventSize), so no marker is impossible as an event; instead
// every row has its value (a record without one is not a chunk's), so a
// NULL can only be an event equal to the marker, and the view maps NULL
// back to these bytes. The marker is printable ASCII without a quote or a
// backslash, the same in every metastore and SQL dialect, and unlikely, so
// that the raw table's NULLs are rare.
const NullMarker = "sluice:no-event-is-null:9d1e4b7a"

// Table is what the DDL is made of.
type Table struct {
	Scope, Stream  string
	Name           string   // the table's name; "" for <scope>_<stream>, other than [A-Za-z0-9_] as '_'
	Root           string   // the tier-2 root URI (file:///..., hdfs://host:port/...)
	Format         string   // FormatJSON, FormatText or FormatBinary
	Columns        []Column // json: required; text: default "line STRING"; binary: none
	FieldDelimiter string   // text: the one byte between fields
	Segments       []int64  // the partitions to add, any order
}

// Column is one column of the table: a name ([A-Za-z_][A-Za-z0-9_]*, not
// "segment") and a Hive type (STRING, DECIMAL(10,2), ARRAY<STRING>, ...).
type Column struct{ Name, Type string }

var (
	columnName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// hiveType admits Hive's type syntax (STRING, DECIMAL(10,2),
	// ARRAY<STRUCT<a:INT>>) and nothing that could end the statement.
	hiveType  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\s*[(<][A-Za-z0-9_ ,:<>()]*[)>])?$`)
	primitive = regexp.MustCompile(`(?i)^(string|tinyint|smallint|int|integer|bigint|float|double|boolean|date|timestamp|binary|decimal(\(\s*\d+\s*(,\s*\d+\s*)?\))?|varchar\(\s*\d+\s*\)|char\(\s*\d+\s*\))$`)
	notIdent  = regexp.MustCompile(`[^A-Za-z0-9_]`)
)

// ParseColumns splits each "name TYPE" at its first space; DDL checks the
// parts.
func ParseColumns(specs []string) []Column {
	var out []Column
	for _, f := range specs {
		f = strings.TrimSpace(f)
		name, typ := f, ""
		if i := strings.IndexFunc(f, unicode.IsSpace); i >= 0 {
			name, typ = f[:i], strings.TrimSpace(f[i:])
		}
		out = append(out, Column{Name: name, Type: typ})
	}
	return out
}

// Location is the tier-2 location of a stream's table: the directory
// holding its segment=N directories under root.
func Location(root, scope, stream string) string {
	return strings.TrimRight(root, "/") + "/" + tier2.StreamDir(scope, stream)
}

// partitionLocation is the directory of one segment's chunks under root.
func partitionLocation(root, scope, stream string, segment int64) string {
	return strings.TrimRight(root, "/") + "/" + tier2.SegmentDir(scope, stream, segment)
}

// invalid is an error of DDL: its message as given, matching ErrInvalid.
type invalid struct{ msg string }

func (e *invalid) Error() string        { return e.msg }
func (e *invalid) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalid{msg: fmt.Sprintf(format, args...)}
}

// The SerDe every format uses: Hive's lazy simple SerDe is the one among
// Hive's own that takes BytesWritable values (the tier-2 SequenceFiles'
// values) as well as Text.
const lazySimpleSerDe = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"

// DDL returns the statements that make Hive read the stream in place: an
// external table partitioned by segment over Location(t.Root, t.Scope,
// t.Stream), one ADD PARTITION per segment, and for json a view that
// parses the events. It checks the table first; its errors match
// ErrInvalid.
func DDL(t Table) (string, error) {
	table := t.Name
	if table == "" {
		table = notIdent.ReplaceAllString(t.Scope+"_"+t.Stream, "_")
	}
	if strings.TrimSpace(table) == "" {
		return "", invalidf("--table: the table name is empty")
	}
	if strings.ContainsFunc(table, unicode.IsControl) {
		return "", invalidf("--table %q: control characters are not allowed", table)
	}
	for _, col := range t.Columns {
		if !columnName.MatchString(col.Name) {
			return "", invalidf("--column %q: the name must be letters, digits and '_', not starting with a digit", col.Name+" "+col.Type)
		}
		if strings.EqualFold(col.Name, "segment") {
			return "", invalidf("--column %q: segment is the partition column", col.Name+" "+col.Type)
		}
		if !hiveType.MatchString(col.Type) {
			return "", invalidf("--column %q: want \"name TYPE\" with a Hive type (STRING, BIGINT, DECIMAL(10,2), ...)", col.Name+" "+col.Type)
		}
	}
	cols := t.Columns
	raw := table // the table over the files
	var serdeProps []string
	switch t.Format {
	case FormatJSON:
		if len(cols) == 0 {
			return "", invalidf(`--format json needs the columns: --column "name TYPE" for each field to read (e.g. --column "sensor STRING" --column "celsius DOUBLE")`)
		}
		for _, col := range cols {
			if !primitive.MatchString(col.Type) || strings.EqualFold(col.Type, "binary") {
				return "", invalidf("--column %q: --format json takes primitive types (STRING, BIGINT, DOUBLE, DECIMAL(p,s), TIMESTAMP, ...); read nested values as STRING and parse them with get_json_object", col.Name+" "+col.Type)
			}
		}
		raw = table + "_raw"
		serdeProps = []string{prop("serialization.last.column.takes.rest", "true")}
	case FormatText:
		if t.FieldDelimiter == "" {
			return "", invalidf("--field-delimiter is empty")
		}
		if len([]byte(t.FieldDelimiter)) != 1 {
			return "", invalidf("--field-delimiter %q: want one byte (Hive's simple SerDe splits on one)", t.FieldDelimiter)
		}
		if c := t.FieldDelimiter[0]; c >= '0' && c <= '9' {
			return "", invalidf("--field-delimiter %q: Hive reads a digit as a byte value, not as the character", t.FieldDelimiter)
		}
		serdeProps = []string{prop("field.delim", t.FieldDelimiter), prop("serialization.format", t.FieldDelimiter)}
		if len(cols) == 0 {
			cols = []Column{{"line", "STRING"}}
			serdeProps = append(serdeProps, prop("serialization.last.column.takes.rest", "true"))
		}
	case FormatBinary:
		if len(cols) > 0 {
			return "", invalidf("--format binary has one column, event BINARY; --column is not for it")
		}
		raw = table + "_raw"
		cols = []Column{{"event", "STRING"}}
		serdeProps = []string{prop("serialization.last.column.takes.rest", "true"), prop("serialization.null.format", NullMarker)}
	default:
		return "", invalidf("--format %q: want json, text or binary", t.Format)
	}
	location := Location(t.Root, t.Scope, t.Stream)

	var b strings.Builder
	fmt.Fprintf(&b, "-- Stream %s/%s: tier-2 SequenceFiles (key: offset, value: event bytes),\n", t.Scope, t.Stream)
	fmt.Fprintf(&b, "-- one partition per segment. Generated by 'sluice hive ddl'.\n")
	if t.Format == FormatJSON {
		fmt.Fprintf(&b, "-- Hive's JSON SerDe reads Text values only, so %s holds each event as\n", ident(raw))
		fmt.Fprintf(&b, "-- one STRING and the view %s parses the JSON.\n", ident(table))
		cols = []Column{{"json", "STRING"}}
	}
	if t.Format == FormatBinary {
		fmt.Fprintf(&b, "-- Hive's simple SerDe decodes a BINARY column that looks like base64, so\n")
		fmt.Fprintf(&b, "-- %s holds each event as one STRING, with a null marker of its own\n", ident(raw))
		fmt.Fprintf(&b, "-- (an event is never NULL), and the view %s gives the bytes back unchanged.\n", ident(table))
	}
	fmt.Fprintf(&b, "CREATE EXTERNAL TABLE IF NOT EXISTS %s (\n", ident(raw))
	for i, col := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", ident(col.Name), col.Type, sep)
	}
	fmt.Fprintf(&b, ")\n")
	fmt.Fprintf(&b, "PARTITIONED BY (%s BIGINT)\n", ident("segment"))
	fmt.Fprintf(&b, "ROW FORMAT SERDE %s\n", literal(lazySimpleSerDe))
	fmt.Fprintf(&b, "WITH SERDEPROPERTIES (%s)\n", strings.Join(serdeProps, ", "))
	fmt.Fprintf(&b, "STORED AS SEQUENCEFILE\n")
	fmt.Fprintf(&b, "LOCATION %s;\n\n", literal(location))

	segs := append([]int64(nil), t.Segments...)
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	for _, n := range segs {
		fmt.Fprintf(&b, "ALTER TABLE %s ADD IF NOT EXISTS PARTITION (%s=%d) LOCATION %s;\n",
			ident(raw), ident("segment"), n, literal(partitionLocation(t.Root, t.Scope, t.Stream, n)))
	}
	fmt.Fprintf(&b, "-- Segments created after this (the stream scales): MSCK REPAIR TABLE %s;\n", ident(raw))
	fmt.Fprintf(&b, "-- adds their segment=N directories, or run 'sluice hive ddl' again.\n")

	if t.Format == FormatJSON {
		fmt.Fprintf(&b, "\nCREATE VIEW IF NOT EXISTS %s AS\nSELECT\n", ident(table))
		for _, col := range t.Columns {
			fmt.Fprintf(&b, "  CAST(get_json_object(%s, %s) AS %s) AS %s,\n",
				ident("json"), literal("$."+col.Name), col.Type, ident(col.Name))
		}
		fmt.Fprintf(&b, "  %s\nFROM %s;\n", ident("segment"), ident(raw))
	}
	if t.Format == FormatBinary {
		fmt.Fprintf(&b, "\nCREATE VIEW IF NOT EXISTS %s AS\nSELECT\n", ident(table))
		fmt.Fprintf(&b, "  COALESCE(CAST(%s AS BINARY), CAST(%s AS BINARY)) AS %s,\n",
			ident("event"), literal(NullMarker), ident("event"))
		fmt.Fprintf(&b, "  %s\nFROM %s;\n", ident("segment"), ident(raw))
	}
	return b.String(), nil
}

// ident back-quotes a Hive identifier (a back-quote inside is doubled).
func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// literal is a Hive string literal of s: single-quoted, with backslashes
// and single quotes escaped, and control characters as \uXXXX.
func literal(s string) string {
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

func prop(k, v string) string { return literal(k) + "=" + literal(v) }
