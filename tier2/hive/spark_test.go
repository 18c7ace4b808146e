//go:build spark

package hive_test

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/hadooptest"
	"github.com/sluice-streams/sluice/tier2/hdfs"
	"github.com/sluice-streams/sluice/tier2/hive"
	"github.com/sluice-streams/sluice/tier2/hive/sparktest"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// binaryEvents are the events the binary format must give back unchanged:
// every byte value alone and together, the bytes Hive's simple SerDe
// splits rows and fields on ('\n', '\r', '\x01'), its escape and null
// marker (`\N`), strings that look like base64 (which a BINARY column
// would decode), empty events, invalid UTF-8, the format's own null
// marker, and large random ones.
func binaryEvents() [][]byte {
	var evs [][]byte
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
		evs = append(evs, []byte{byte(i)})
	}
	evs = append(evs, all, append(append([]byte{}, all...), all...))
	for _, s := range []string{
		"\n", "\r", "\r\n", "a\nb", "a\rb\r\n", "\n\n\n", "\x01", "a\x01b", "\x01\x02\x03", "\x02\x03\x04",
		`\N`, `\N\N`, `\`, `a\`, `\\`, "N", `\n`, `a\,b`, "a,b",
		"abcd", "QUJD", "SGVsbG8=", "aGk=", "AAAA", "////", "++++", "AAAAAAAAAAAAAAAA", "TWFu", "YWJjZA==",
		"", "", "",
		"\xff", "\xfe\xff", "\xc3\x28", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80", "\xc0\x80", "h\xe9llo", "\x00", "\x00\x00",
		"héllo, wörld ✓", "NULL", "null",
		hive.NullMarker, hive.NullMarker + "x", "x" + hive.NullMarker,
	} {
		evs = append(evs, []byte(s))
	}
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{1000, 70000, 300000} {
		b := make([]byte, n)
		r.Read(b)
		evs = append(evs, b)
	}
	return evs
}

func hexes(evs [][]byte) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = hex.EncodeToString(e)
	}
	slices.Sort(out)
	return out
}

// split spreads events over chunks of two segments, in each compression.
func split(evs [][]byte) []tier2test.Chunk {
	comps := []seqfile.Compression{seqfile.None, seqfile.Record, seqfile.Block}
	var chunks []tier2test.Chunk
	for i := 0; i < 6; i++ {
		chunks = append(chunks, tier2test.Chunk{Segment: int64(i % 2), Compression: comps[i%3]})
	}
	for i, ev := range evs {
		chunks[i%6].Events = append(chunks[i%6].Events, ev)
	}
	return chunks
}

// TestDDLInSpark runs the DDL of every format in Spark SQL with Hive
// support over chunks written as the node writes them, in a directory
// (tier2/fs) and on HDFS (tier2/hdfs on a MiniDFSCluster), and reads the
// events back: the binary format's byte for byte, the text and json
// formats' counts and groups as written.
func TestDDLInSpark(t *testing.T) {
	spark := sparktest.Find(t)
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	nn := hadooptest.StartHDFS(t)
	onHDFS, err := hdfs.New(hdfs.Options{NameNodes: []string{nn}, Root: "/sluice"})
	if err != nil {
		t.Fatal(err)
	}
	defer onHDFS.Close()
	hdfsRoot := "hdfs://" + nn + "/sluice"

	bin := binaryEvents()
	tier2test.WriteChunks(t, st, "iot", "frames", split(bin))
	tier2test.WriteChunks(t, onHDFS, "iot", "frames", split(bin))
	var bin1 int
	for i := range bin {
		if i%6%2 == 1 {
			bin1++
		}
	}

	// text: tab-separated fields, and the default one-column table over
	// lines that hold the delimiter.
	var access [][]byte
	hosts := map[string]int{}
	for i := 0; i < 300; i++ {
		h := fmt.Sprintf("h%d", i%7)
		hosts[h]++
		access = append(access, []byte(fmt.Sprintf("%s\t%d\t/p/%d", h, 200+i%3, i)))
	}
	tier2test.WriteChunks(t, st, "logs", "access", split(access))
	var lines [][]byte
	for i := 0; i < 100; i++ {
		lines = append(lines, []byte(fmt.Sprintf("a,b,%d", i%4)))
	}
	lines = append(lines, []byte(`\N`)) // Hive's default null marker: NULL in text
	tier2test.WriteChunks(t, st, "logs", "raw", split(lines))

	// json: readings of three sensors.
	var temps [][]byte
	sensors := map[string]int{}
	for i := 0; i < 240; i++ {
		s := fmt.Sprintf("s%d", i%3)
		sensors[s]++
		temps = append(temps, []byte(fmt.Sprintf(`{"sensor":%q,"celsius":%d.5,"at":"2026-11-30 10:00:%02d"}`, s, i%40, i%60)))
	}
	tier2test.WriteChunks(t, st, "sensors", "temps", split(temps))

	var stmts []string
	for _, tb := range []hive.Table{
		{Scope: "iot", Stream: "frames", Format: hive.FormatBinary},
		{Scope: "logs", Stream: "access", Format: hive.FormatText, FieldDelimiter: "\t",
			Columns: []hive.Column{{Name: "host", Type: "STRING"}, {Name: "status", Type: "INT"}, {Name: "path", Type: "STRING"}}},
		{Scope: "logs", Stream: "raw", Format: hive.FormatText, FieldDelimiter: ","},
		{Scope: "sensors", Stream: "temps", Format: hive.FormatJSON,
			Columns: []hive.Column{{Name: "sensor", Type: "STRING"}, {Name: "celsius", Type: "DOUBLE"}, {Name: "at", Type: "TIMESTAMP"}}},
	} {
		tb.Root, tb.Segments = root, []int64{1, 0}
		ddl, err := hive.DDL(tb)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, sparktest.Statements(ddl)...)
	}
	hdfsDDL, err := hive.DDL(hive.Table{Scope: "iot", Stream: "frames", Name: "hdfs_frames", Root: hdfsRoot, Format: hive.FormatBinary, Segments: []int64{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	stmts = append(stmts, sparktest.Statements(hdfsDDL)...)

	// The form the binary format had before: a BINARY column, which Hive's
	// simple SerDe decodes when it looks like base64, and \N read as NULL
	// (the table property meant to stop the decoding is ignored).
	stmts = append(stmts, "CREATE EXTERNAL TABLE naive (event BINARY) PARTITIONED BY (segment BIGINT)"+
		" ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe'"+
		" WITH SERDEPROPERTIES ('serialization.last.column.takes.rest'='true') STORED AS SEQUENCEFILE"+
		" LOCATION '"+hive.Location(root, "iot", "frames")+"' TBLPROPERTIES ('hive.serialization.decode.binary.as.base64'='false')",
		"ALTER TABLE naive ADD PARTITION (segment=0) LOCATION '"+hive.Location(root, "iot", "frames")+"/segment=0'",
		"ALTER TABLE naive ADD PARTITION (segment=1) LOCATION '"+hive.Location(root, "iot", "frames")+"/segment=1'")
	// The new DDL under the old table's name leaves that table in place
	// (CREATE VIEW IF NOT EXISTS): docs/HIVE.md says to drop it first.
	again, err := hive.DDL(hive.Table{Scope: "iot", Stream: "frames", Name: "naive", Root: root, Format: hive.FormatBinary, Segments: []int64{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	stmts = append(stmts, sparktest.Statements(again)...)

	res := spark.Run(t, sparktest.Request{Statements: stmts, Queries: map[string]string{
		"naive":            "SELECT event FROM naive",
		"naive-kept":       "SELECT count(*) FROM naive WHERE event IS NULL",
		"binary":           "SELECT event FROM iot_frames",
		"binary-types":     "SELECT typeof(event) FROM iot_frames LIMIT 1",
		"binary-hdfs":      "SELECT event FROM hdfs_frames",
		"binary-seg1":      "SELECT count(*) FROM iot_frames WHERE segment = 1",
		"binary-raw-nulls": "SELECT count(*) FROM iot_frames_raw WHERE event IS NULL",
		"access":           "SELECT host, count(*), sum(status) FROM logs_access GROUP BY host ORDER BY host",
		"raw":              "SELECT line, count(*) FROM logs_raw GROUP BY line ORDER BY line",
		"temps":            "SELECT sensor, count(*), min(celsius), max(at) FROM sensors_temps GROUP BY sensor ORDER BY sensor",
		"temps-seg0":       "SELECT count(*) FROM sensors_temps WHERE segment = 0",
	}, SequenceFiles: map[string]sparktest.SequenceFile{
		"plain":     {Path: hive.Location(root, "sensors", "temps")},
		"recursive": {Path: hive.Location(root, "sensors", "temps"), Conf: map[string]string{"mapreduce.input.fileinputformat.input.dir.recursive": "true"}},
		"glob":      {Path: hive.Location(root, "sensors", "temps") + "/*/*.seq"},
	}})

	// binary: every event back, byte for byte, from a directory and HDFS.
	want := hexes(bin)
	for _, name := range []string{"binary", "binary-hdfs"} {
		var got [][]byte
		for _, row := range res[name] {
			b, ok := row[0].([]byte)
			if !ok {
				t.Fatalf("%s: a cell is %T %v, want bytes", name, row[0], row[0])
			}
			got = append(got, b)
		}
		if len(got) != len(bin) {
			t.Errorf("%s: %d events read, %d written", name, len(got), len(bin))
		}
		have := hexes(got)
		if slices.Equal(want, have) {
			continue
		}
		for _, w := range want {
			if !slices.Contains(have, w) {
				t.Errorf("%s: event %q written, not read back", name, short(w))
			}
		}
		for _, h := range have {
			if !slices.Contains(want, h) {
				t.Errorf("%s: event %q read back, never written", name, short(h))
			}
		}
	}
	if fmt.Sprint(res["binary-types"]) != "[[binary]]" {
		t.Errorf("binary: the view's event is %v, want binary", res["binary-types"])
	}
	if n := fmt.Sprint(res["binary-seg1"]); n != fmt.Sprintf("[[%d]]", bin1) {
		t.Errorf("binary: segment 1 has %s events, want %d", n, bin1)
	}
	// The raw table reads exactly the events equal to the marker as NULL.
	if n := fmt.Sprint(res["binary-raw-nulls"]); n != "[[1]]" {
		t.Errorf("binary: the raw table has %s NULLs, want 1 (the event equal to the marker)", n)
	}

	// The naive table is not exact, for the reasons above: the test's
	// events are the ones that tell.
	var naive [][]byte
	nulls := 0
	for _, row := range res["naive"] {
		if row[0] == nil {
			nulls++
			continue
		}
		naive = append(naive, row[0].([]byte))
	}
	changed := 0
	for _, h := range hexes(naive) {
		if !slices.Contains(want, h) {
			changed++
		}
	}
	t.Logf("binary: a BINARY column read %d of %d events as NULL and %d as bytes never written", nulls, len(bin), changed)
	if nulls == 0 || slices.Equal(hexes(naive), want) {
		t.Errorf("binary: a BINARY column read every event exactly (%d NULLs): the view is no longer needed?", nulls)
	}
	if got := fmt.Sprint(res["naive-kept"]); got != "[[1]]" {
		t.Errorf("binary: after the new DDL under its name, the old table has %s NULLs, want 1 (left in place)", got)
	}
	if !slices.Contains(hexes(naive), hex.EncodeToString([]byte("ABC"))) {
		t.Errorf("binary: a BINARY column did not decode QUJD as base64: the view is no longer needed?")
	}

	// SequenceFileInputFormat outside Hive: over the stream's directory it
	// takes each segment=N for a MapFile and fails; recursive, or over a
	// glob of the chunks, it reads every event.
	t.Logf("SequenceFileInputFormat over the stream's directory: %v", res["plain"])
	if got := fmt.Sprint(res["plain"]); !strings.Contains(got, "segment=0/data") {
		t.Errorf("SequenceFileInputFormat over the stream's directory: %s, want the MapFile error (segment=0/data)", got)
	}
	for _, name := range []string{"recursive", "glob"} {
		if got, want := fmt.Sprint(res[name]), fmt.Sprintf("[[%d]]", len(temps)); got != want {
			t.Errorf("SequenceFileInputFormat, %s: %s records, want %s", name, got, want)
		}
	}

	// text and json: counts and groups as written.
	var wantAccess []string
	for i := 0; i < 7; i++ {
		h := fmt.Sprintf("h%d", i)
		sum := 0
		for j := 0; j < 300; j++ {
			if j%7 == i {
				sum += 200 + j%3
			}
		}
		wantAccess = append(wantAccess, fmt.Sprintf("[%s %d %d]", h, hosts[h], sum))
	}
	if got := fmt.Sprint(res["access"]); got != "["+strings.Join(wantAccess, " ")+"]" {
		t.Errorf("text: GROUP BY host = %s, want %v", got, wantAccess)
	}
	if got, want := fmt.Sprint(res["raw"]), "[[<nil> 1] [a,b,0 25] [a,b,1 25] [a,b,2 25] [a,b,3 25]]"; got != want {
		t.Errorf("text, one line column: GROUP BY line = %s, want %s", got, want)
	}
	var wantTemps []string
	for i := 0; i < 3; i++ {
		wantTemps = append(wantTemps, fmt.Sprintf("[s%d %d 0.5 2026-11-30 10:00:%02d]", i, sensors[fmt.Sprintf("s%d", i)], 57+i))
	}
	if got := fmt.Sprint(res["temps"]); got != "["+strings.Join(wantTemps, " ")+"]" {
		t.Errorf("json: GROUP BY sensor = %s, want %v", got, wantTemps)
	}
	if got, want := fmt.Sprint(res["temps-seg0"]), "[[120]]"; got != want {
		t.Errorf("json: segment 0 has %s readings, want %s", got, want)
	}
}

func short(h string) string {
	if len(h) > 80 {
		return h[:80] + "..."
	}
	return h
}
