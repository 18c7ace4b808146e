package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/controller/rest/resttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/hive")

// golden compares got with testdata/hive/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "hive", name)
	if *update {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if got != string(want) {
		t.Fatalf("%s differs (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHiveDDLGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		table  hiveTable
	}{
		{"json.hql", hiveTable{Scope: "sensors", Stream: "temps", Root: "hdfs://namenode:8020/sluice/", Format: "json",
			Columns:  []hiveColumn{{"sensor", "STRING"}, {"celsius", "DOUBLE"}, {"at", "TIMESTAMP"}},
			Segments: []int64{2, 0, 1}}},
		{"text.hql", hiveTable{Scope: "logs", Stream: "web-access.v1", Root: "file:///var/lib/sluice/tier2", Format: "text",
			FieldDelimiter: "\t", Columns: []hiveColumn{{"host", "STRING"}, {"status", "INT"}, {"path", "STRING"}},
			Segments: []int64{0}}},
		{"text-default.hql", hiveTable{Scope: "logs", Stream: "raw", Root: "file:///t2", Format: "text", FieldDelimiter: ",", Segments: []int64{0, 1}}},
		{"binary.hql", hiveTable{Scope: "iot", Stream: "frames", Root: "file:///t2", Format: "binary", Segments: []int64{0, 3, 4}}},
		{"escaping.hql", hiveTable{Scope: "a.b", Stream: "c-d", Table: "we`ird", Root: "file:///it's/a\\path", Format: "text",
			FieldDelimiter: "'", Segments: []int64{7}}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := hiveDDL(tc.table)
			must(t, err)
			golden(t, tc.golden, got)
		})
	}
}

func TestHiveDDLErrors(t *testing.T) {
	base := hiveTable{Scope: "s", Stream: "t", Root: "file:///r", FieldDelimiter: ","}
	bad := base
	bad.Format, bad.Table = "binary", "x\nDROP TABLE y"
	if _, err := hiveDDL(bad); err == nil || !strings.Contains(err.Error(), "control characters") {
		t.Errorf("--table with a newline: err = %v", err)
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
		tb.Format, tb.Columns, tb.FieldDelimiter = tc.format, parseHiveColumns(tc.cols), tc.delim
		_, err := hiveDDL(tb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v %q: err = %v, want %q", tc.format, tc.cols, tc.delim, err, tc.want)
		}
	}
}

func TestHiveDDLCommand(t *testing.T) {
	node := resttest.StartNode(t)
	withTier2 := resttest.StartController(t, node, resttest.WithTier2("hdfs://nn:8020/sluice"))
	c := []string{"--controller", withTier2.URL}
	run := func(args ...string) string { t.Helper(); return mustRun(t, append(c, args...)...) }
	run("scope", "create", "sensors")
	run("stream", "create", "sensors/temps", "--segments", "2")
	run("stream", "scale", "sensors/temps", "--seal", "0", "--ranges", "0-0.25,0.25-0.5")

	// Every segment of every epoch is a partition; the root is the
	// controller's.
	out := run("hive", "ddl", "sensors/temps", "--format", "json", "--column", "sensor STRING", "--column", "celsius DOUBLE")
	for _, want := range []string{
		"CREATE EXTERNAL TABLE IF NOT EXISTS `sensors_temps_raw` (",
		"LOCATION 'hdfs://nn:8020/sluice/sensors/temps';",
		"PARTITION (`segment`=0) LOCATION 'hdfs://nn:8020/sluice/sensors/temps/segment=0';",
		"PARTITION (`segment`=1) LOCATION",
		"PARTITION (`segment`=2) LOCATION",
		"PARTITION (`segment`=3) LOCATION 'hdfs://nn:8020/sluice/sensors/temps/segment=3';",
		"MSCK REPAIR TABLE `sensors_temps_raw`",
		"CAST(get_json_object(`json`, '$.celsius') AS DOUBLE) AS `celsius`,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ddl lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "`segment`=4") {
		t.Errorf("ddl has a segment that does not exist:\n%s", out)
	}
	// --location wins over the controller's root; --table names the table.
	out = run("hive", "ddl", "sensors/temps", "--format", "binary", "--location", "file:///mnt/t2", "--table", "frames")
	if !strings.Contains(out, "CREATE EXTERNAL TABLE IF NOT EXISTS `frames` (") || !strings.Contains(out, "LOCATION 'file:///mnt/t2/sensors/temps'") ||
		strings.Contains(out, "hdfs://") {
		t.Errorf("ddl with --location and --table:\n%s", out)
	}

	for _, tc := range []struct {
		want string
		args []string
	}{
		{`hive ddl: --format "xml": want json, text or binary`, []string{"hive", "ddl", "sensors/temps", "--format", "xml"}},
		{"hive ddl: --format json needs the columns", []string{"hive", "ddl", "sensors/temps", "--format", "json"}},
		{"stream sensors/nope: not found", []string{"hive", "ddl", "sensors/nope"}},
		{`"sensors" is not SCOPE/STREAM`, []string{"hive", "ddl", "sensors"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { mustFail(t, tc.want, append(c, tc.args...)...) })
	}

	// A controller without tier 2 (the command's own, as started by
	// 'sluice controller'): --location is needed.
	rc := startController(t, t.TempDir(), node)
	mustRun(t, "--controller", rc.URL, "scope", "create", "s")
	mustRun(t, "--controller", rc.URL, "stream", "create", "s/t")
	mustFail(t, "tier 2 is not configured on this controller; give the tier-2 root with --location", "--controller", rc.URL, "hive", "ddl", "s/t")
	mustFail(t, "stream s/nope: not found", "--controller", rc.URL, "hive", "ddl", "s/nope")
	out = mustRun(t, "--controller", rc.URL, "hive", "ddl", "s/t", "--location", "file:///t2")
	if !strings.Contains(out, "ALTER TABLE `s_t` ADD IF NOT EXISTS PARTITION (`segment`=0) LOCATION 'file:///t2/s/t/segment=0';") {
		t.Errorf("ddl of s/t:\n%s", out)
	}
}
