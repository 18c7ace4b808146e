package main

import (
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/controller/rest/resttest"
)

// TestHiveDDLCommand checks the command's part: the segments of every
// epoch and the tier-2 root asked of the controller, --location and
// --table, errors on one line. The DDL's text and checks are tier2/hive's.
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
	// --location wins over the controller's root; --table names the table
	// (binary: the view; the table over the files is <name>_raw).
	out = run("hive", "ddl", "sensors/temps", "--format", "binary", "--location", "file:///mnt/t2", "--table", "frames")
	if !strings.Contains(out, "CREATE EXTERNAL TABLE IF NOT EXISTS `frames_raw` (") || !strings.Contains(out, "LOCATION 'file:///mnt/t2/sensors/temps'") ||
		!strings.Contains(out, "CREATE VIEW IF NOT EXISTS `frames` AS") || strings.Contains(out, "hdfs://") {
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
