package hive

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

func TestDDLGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		table  Table
	}{
		{"json.hql", Table{Scope: "sensors", Stream: "temps", Root: "hdfs://namenode:8020/sluice/", Format: FormatJSON,
			Columns:  []Column{{"sensor", "STRING"}, {"celsius", "DOUBLE"}, {"at", "TIMESTAMP"}},
			Segments: []int64{2, 0, 1}}},
		{"text.hql", Table{Scope: "logs", Stream: "web-access.v1", Root: "file:///var/lib/sluice/tier2", Format: FormatText,
			FieldDelimiter: "\t", Columns: []Column{{"host", "STRING"}, {"status", "INT"}, {"path", "STRING"}},
			Segments: []int64{0}}},
		{"text-default.hql", Table{Scope: "logs", Stream: "raw", Root: "file:///t2", Format: FormatText, FieldDelimiter: ",", Segments: []int64{0, 1}}},
		{"binary.hql", Table{Scope: "iot", Stream: "frames", Root: "file:///t2", Format: FormatBinary, Segments: []int64{0, 3, 4}}},
		{"escaping.hql", Table{Scope: "a.b", Stream: "c-d", Name: "we`ird", Root: "file:///it's/a\\path", Format: FormatText,
			FieldDelimiter: "'", Segments: []int64{7}}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := DDL(tc.table)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, got)
		})
	}
}

func TestDDLErrors(t *testing.T) {
	base := Table{Scope: "s", Stream: "t", Root: "file:///r", FieldDelimiter: ","}
	bad := base
	bad.Format, bad.Name = FormatBinary, "x\nDROP TABLE y"
	if _, err := DDL(bad); err == nil || !strings.Contains(err.Error(), "control characters") || !errors.Is(err, ErrInvalid) {
		t.Errorf("--table with a newline: err = %v, want ErrInvalid about control characters", err)
	}
	for _, tc := range []struct {
		format string
		cols   []string
		delim  string
		want   string
	}{
		{"json", nil, ",", `--format json needs the columns: --column "name TYPE"`},
		{"json", []string{"tags ARRAY<STRING>"}, ",", "--format json takes primitive types"},
		{"csv", nil, ",", `--format "csv": want json, text or binary`},
		{"text", []string{"1x STRING"}, ",", "the name must be letters"},
		{"text", []string{"x"}, ",", `want "name TYPE"`},
		{"text", []string{"x STRING); DROP TABLE y; --"}, ",", `want "name TYPE"`},
		{"text", []string{"segment INT"}, ",", "segment is the partition column"},
		{"text", nil, "::", "want one byte"},
		{"text", nil, "", "--field-delimiter is empty"},
		{"binary", []string{"x STRING"}, ",", "--column is not for it"},
		{"text", nil, "1", "Hive reads a digit as a byte value"},
	} {
		tb := base
		tb.Format, tb.Columns, tb.FieldDelimiter = tc.format, ParseColumns(tc.cols), tc.delim
		_, err := DDL(tb)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s %v %q: err = %v, want ErrInvalid with %q", tc.format, tc.cols, tc.delim, err, tc.want)
		}
	}
}

func TestParseColumns(t *testing.T) {
	got := ParseColumns([]string{"  id BIGINT ", "price\tDECIMAL(10, 2)", "bare", "m MAP<STRING, INT>"})
	want := []Column{{"id", "BIGINT"}, {"price", "DECIMAL(10, 2)"}, {"bare", ""}, {"m", "MAP<STRING, INT>"}}
	if len(got) != len(want) {
		t.Fatalf("ParseColumns = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestLocationFollowsTier2Layout: the table's and the partitions'
// locations are where tier 2 puts the stream's and the segments' chunks.
func TestLocationFollowsTier2Layout(t *testing.T) {
	for _, root := range []string{"hdfs://nn:8020/sluice", "hdfs://nn:8020/sluice/", "file:///t2//"} {
		loc := Location(root, "sc", "st")
		want := strings.TrimRight(root, "/") + "/sc/st"
		if loc != want {
			t.Errorf("Location(%q) = %q, want %q", root, loc, want)
		}
		ddl, err := DDL(Table{Scope: "sc", Stream: "st", Root: root, Format: FormatBinary, Segments: []int64{5}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ddl, "LOCATION '"+want+"';\n") || !strings.Contains(ddl, "PARTITION (`segment`=5) LOCATION '"+want+"/segment=5';") {
			t.Errorf("DDL over %q does not point at %s and %s/segment=5:\n%s", root, want, want, ddl)
		}
	}
}
