package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/controller/rest/resttest"
	"github.com/sluice-streams/sluice/protocol/api"
)

func TestScopeCommands(t *testing.T) {
	rc := startController(t, t.TempDir(), resttest.StartNode(t))
	t.Setenv("SLUICE_CONTROLLER", rc.URL) // the env var stands for --controller

	if out := mustRun(t, "scope", "create", "sales"); out != "SCOPE\nsales\n" {
		t.Fatalf("create printed %q", out)
	}
	mustRun(t, "scope", "create", "hr")
	if out := mustRun(t, "scope", "list"); out != "SCOPE\nhr\nsales\n" {
		t.Fatalf("list printed %q", out)
	}
	var scopes []api.ScopeProperty
	out := mustRun(t, "-o", "json", "scope", "list")
	if err := json.Unmarshal([]byte(out), &scopes); err != nil || len(scopes) != 2 || scopes[1].ScopeName != "sales" {
		t.Fatalf("json list printed %q (%v)", out, err)
	}
	if out := mustRun(t, "scope", "delete", "hr"); out != "deleted scope hr\n" {
		t.Fatalf("delete printed %q", out)
	}
	if out := mustRun(t, "scope", "list"); out != "SCOPE\nsales\n" {
		t.Fatalf("list after delete printed %q", out)
	}
	if out := mustRun(t, "-o", "json", "scope", "create", "empty"); !strings.Contains(out, `"scopeName": "empty"`) {
		t.Fatalf("json create printed %q", out)
	}
	mustRun(t, "stream", "create", "sales/orders")

	for _, tc := range []struct {
		want string
		args []string
	}{
		{"scope sales: already exists", []string{"scope", "create", "sales"}},
		{`name "a b"`, []string{"scope", "create", "a b"}},
		{"reserved", []string{"scope", "create", "_internal"}},
		{"scope nope: not found", []string{"scope", "delete", "nope"}},
		{"scope sales has 1 streams", []string{"scope", "delete", "sales"}},
		{"scope create: want SCOPE, got none", []string{"scope", "create"}},
		{`scope list: want no argument, got ["x"]`, []string{"scope", "list", "x"}},
		{`unknown command "rename"`, []string{"scope", "rename"}},
		{"controller http://127.0.0.1:1 unreachable: ", []string{"--controller", "http://127.0.0.1:1", "scope", "list"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { mustFail(t, tc.want, tc.args...) })
	}
}

func TestStreamCommands(t *testing.T) {
	rc := startController(t, t.TempDir(), resttest.StartNode(t))
	c := []string{"--controller", rc.URL}
	run := func(args ...string) string { t.Helper(); return mustRun(t, append(c, args...)...) }
	fail := func(want string, args ...string) { t.Helper(); mustFail(t, want, append(c, args...)...) }
	run("scope", "create", "sales")

	// create, with each kind of policy; flags before or after SCOPE/STREAM.
	out := run("stream", "create", "sales/orders", "--segments", "2", "--tag", "team=billing,emea", "--tag", "tier=gold", "--retention-time", "7d")
	want := "STREAM        STATE  EPOCH  SCALING  RETENTION  TAGS\n" +
		"sales/orders  open   0      fixed 2  7d         team=billing,emea,tier=gold\n"
	if out != want {
		t.Fatalf("create printed\n%s\nwant\n%s", out, want)
	}
	// With -o json, create prints the stream as describe does.
	var created streamDescription
	out = run("-o", "json", "stream", "create", "--scale-by", "bytes", "--target", "512", "--factor", "3", "--min", "2", "--retention-size", "1GiB", "sales/clicks")
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created.Segments) != 2 || len(created.Head) != 2 {
		t.Fatalf("json create: %v\n%s", err, out)
	}
	info := created.Stream
	wantPolicy := api.ScalingPolicy{Type: api.ByRateInKBytesPerSec, TargetRate: 512, ScaleFactor: 3, MinSegments: 2}
	if info.ScalingPolicy != wantPolicy || *info.RetentionPolicy != (api.RetentionPolicy{Type: api.RetentionLimitedSizeMB, Value: 1024}) {
		t.Fatalf("created %+v %+v", info.ScalingPolicy, info.RetentionPolicy)
	}
	run("stream", "create", "sales/views", "--scale-by", "events", "--target", "100", "--retention-time", "48h", "--tag", "team=web")

	// list, with and without tags.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"sales/clicks", "sales/orders", "sales/views"}},
		{[]string{"--tag", "team"}, []string{"sales/orders", "sales/views"}},
		{[]string{"--tag", "team=web"}, []string{"sales/views"}},
		{[]string{"--tag", "team=billing,emea", "--tag", "tier=gold"}, []string{"sales/orders"}},
		{[]string{"--tag", "team=nobody"}, nil},
	} {
		out := run(append([]string{"stream", "list", "sales"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var got []string
		for _, l := range lines[1:] {
			got = append(got, strings.Fields(l)[0])
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("list %v: %q, want %v", tc.args, out, tc.want)
		}
	}
	var infos []api.StreamInfo
	if err := json.Unmarshal([]byte(run("-o", "json", "stream", "list", "sales", "--tag", "team=nobody")), &infos); err != nil || infos == nil || len(infos) != 0 {
		t.Fatalf("json list of nothing: %v %v", infos, err)
	}

	// scale, describe.
	out = run("stream", "scale", "sales/orders", "--seal", "0", "--ranges", "0-0.25,0.25-0.5")
	want = "SEGMENT                  NUMBER  EPOCH  KEYS\n" +
		"sales/orders/2.#epoch.1  2       1      [0, 0.25)\n" +
		"sales/orders/3.#epoch.1  3       1      [0.25, 0.5)\n"
	if out != want {
		t.Fatalf("scale printed\n%s\nwant\n%s", out, want)
	}
	out = run("stream", "describe", "sales/orders")
	for _, w := range []string{"STREAM     sales/orders\n", "STATE      open\n", "EPOCH      1\n", "SCALING    fixed 2\n",
		"HEAD       sales/orders:0.#epoch.0=0,1.#epoch.0=0\n", "sales/orders/1.#epoch.0  1       0      [0.5, 1)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("describe lacks %q:\n%s", w, out)
		}
	}
	var d streamDescription
	if err := json.Unmarshal([]byte(run("-o", "json", "stream", "describe", "sales/orders")), &d); err != nil || d.Stream.Epoch != 1 || len(d.Segments) != 3 || len(d.Head) != 2 {
		t.Fatalf("json describe: %+v %v", d, err)
	}
	if h := d.ScalingHistory; len(h) != 2 || h[0].Trigger != api.TriggerCreate || h[1].Trigger != api.TriggerManual || len(h[1].Segments) != 3 {
		t.Fatalf("json describe's scaling history: %+v", h)
	}
	if !strings.Contains(out, "SCALING HISTORY\nEPOCH  CREATED") || !strings.Contains(out, " 0:[0, 0.5) 1:[0.5, 1) ") ||
		!strings.Contains(out, " 2:[0, 0.25) 3:[0.25, 0.5) 1:[0.5, 1)  manual   -\n") {
		t.Errorf("describe's scaling history:\n%s", out)
	}

	// truncate, seal, delete.
	if out := run("stream", "truncate", "sales/orders", "--cut", "sales/orders:1.#epoch.0=0,2.#epoch.1=0,3.#epoch.1=0"); out != "truncated stream sales/orders\n" {
		t.Fatalf("truncate printed %q", out)
	}
	if out := run("stream", "describe", "sales/orders"); !strings.Contains(out, "HEAD       sales/orders:1.#epoch.0=0,2.#epoch.1=0,3.#epoch.1=0\n") {
		t.Fatalf("describe after truncate:\n%s", out)
	}
	fail("stream sales/orders is not sealed", "stream", "delete", "sales/orders")
	if out := run("stream", "seal", "sales/orders"); out != "sealed stream sales/orders\n" {
		t.Fatalf("seal printed %q", out)
	}
	if out := run("stream", "list", "sales", "--tag", "tier"); !strings.Contains(out, "sales/orders  sealed") {
		t.Fatalf("list after seal:\n%s", out)
	}
	run("stream", "seal", "sales/orders") // again: success
	if out := run("stream", "delete", "sales/orders"); out != "deleted stream sales/orders\n" {
		t.Fatalf("delete printed %q", out)
	}
	fail("stream sales/orders: not found", "stream", "describe", "sales/orders")

	// Bad input: one line each, and nothing changed.
	before := run("-o", "json", "stream", "list", "sales")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"stream sales/clicks: already exists", []string{"stream", "create", "sales/clicks"}},
		{"scope nope: not found", []string{"stream", "create", "nope/x"}},
		{"scope nope: not found", []string{"stream", "list", "nope"}},
		{"stream sales/nope: not found", []string{"stream", "describe", "sales/nope"}},
		{"stream sales/nope: not found", []string{"stream", "seal", "sales/nope"}},
		{"stream sales/nope: not found", []string{"stream", "delete", "sales/nope"}},
		{"stream sales/clicks is not sealed", []string{"stream", "delete", "sales/clicks"}},
		{`name "a b"`, []string{"stream", "create", "sales/a b"}},
		{"reserved", []string{"stream", "create", "sales/_x"}},
		{`stream create: "sales" is not SCOPE/STREAM`, []string{"stream", "create", "sales"}},
		{`stream describe: "a/b/c" is not SCOPE/STREAM`, []string{"stream", "describe", "a/b/c"}},
		{"stream seal: want SCOPE/STREAM, got none", []string{"stream", "seal"}},
		{"--segments 0: want at least 1", []string{"stream", "create", "sales/x", "--segments", "0"}},
		{"--target needs --scale-by", []string{"stream", "create", "sales/x", "--target", "5"}},
		{`--scale-by "cpu": want events or bytes`, []string{"stream", "create", "sales/x", "--scale-by", "cpu", "--target", "5"}},
		{"--scale-by needs --target", []string{"stream", "create", "sales/x", "--scale-by", "events"}},
		{"with --scale-by, use --min", []string{"stream", "create", "sales/x", "--scale-by", "events", "--target", "5", "--segments", "3"}},
		{"--factor 1: want at least 2", []string{"stream", "create", "sales/x", "--scale-by", "events", "--target", "5", "--factor", "1"}},
		{"exclude each other", []string{"stream", "create", "sales/x", "--retention-time", "7d", "--retention-size", "1GiB"}},
		{`invalid value "90m" for flag -retention-time: want whole days`, []string{"stream", "create", "sales/x", "--retention-time", "90m"}},
		{`--retention-size "lots"`, []string{"stream", "create", "sales/x", "--retention-size", "lots"}},
		{`--retention-size "9223372036854775807": 8796093022208 MiB, want at most 8589934592`, []string{"stream", "create", "sales/x", "--retention-size", "9223372036854775807"}},
		{`invalid value "107000000000d" for flag -retention-time: 107000000000 days: want at most 106751`, []string{"stream", "create", "sales/x", "--retention-time", "107000000000d"}},
		{`--tag "team": want k=v`, []string{"stream", "create", "sales/x", "--tag", "team"}},
		{`--tag "=x"`, []string{"stream", "list", "sales", "--tag", "=x"}},
		{"segments", []string{"stream", "create", "sales/x", "--segments", "many"}},
		{"key ranges leave a gap [0.4, 0.5)", []string{"stream", "scale", "sales/clicks", "--seal", "0", "--ranges", "0-0.25,0.25-0.4"}},
		{"key ranges overlap", []string{"stream", "scale", "sales/clicks", "--seal", "0", "--ranges", "0-0.3,0.2-0.5"}},
		{"segment 9 does not exist", []string{"stream", "scale", "sales/clicks", "--seal", "9", "--ranges", "0-1"}},
		{`--seal "x": "x" is not a segment number`, []string{"stream", "scale", "sales/clicks", "--seal", "x", "--ranges", "0-1"}},
		{`--ranges "0-0.5,half": "half" is not LOW-HIGH`, []string{"stream", "scale", "sales/clicks", "--seal", "0", "--ranges", "0-0.5,half"}},
		{`Required flags "seal, ranges" not set`, []string{"stream", "scale", "sales/clicks"}},
		{`--cut: stream cut "garbage"`, []string{"stream", "truncate", "sales/clicks", "--cut", "garbage"}},
		{"--cut: segment sales/views/0.#epoch.0 is not of stream sales/clicks", []string{"stream", "truncate", "sales/clicks", "--cut", "sales/views:0.#epoch.0=0"}},
		{"stream cut: key ranges leave a gap [0.5, 1)", []string{"stream", "truncate", "sales/clicks", "--cut", "sales/clicks:0.#epoch.0=0"}},
		{"offset 7 of sales/clicks/0.#epoch.0 is beyond its length 0", []string{"stream", "truncate", "sales/clicks", "--cut", "sales/clicks:0.#epoch.0=7,1.#epoch.0=0"}},
		{`Required flag "cut" not set`, []string{"stream", "truncate", "sales/clicks"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { mustFail(t, tc.want, append(c, tc.args...)...) })
	}
	if after := run("-o", "json", "stream", "list", "sales"); after != before {
		t.Fatalf("bad input changed the streams:\n%s\nthen\n%s", before, after)
	}
}

func TestStreamHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"stream", "--help"}, []string{"create", "list", "describe", "scale", "seal", "truncate", "delete"}},
		{[]string{"stream", "create", "--help"}, []string{"SCOPE/STREAM", "--segments", "--scale-by", "--target", "--factor", "--min", "--retention-time", "--retention-size", "--tag"}},
		{[]string{"stream", "scale", "--help"}, []string{"--seal", "--ranges"}},
		{[]string{"stream", "truncate", "--help"}, []string{"--cut"}},
		{[]string{"scope", "--help"}, []string{"create", "list", "delete"}},
		{[]string{"scope", "create", "--help"}, []string{"SCOPE"}},
	} {
		out := mustRun(t, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}
