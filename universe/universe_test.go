package universe_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/sluice-streams/sluice/universe"
)

// render loads the shipped package and renders it with the options file
// (nil for the defaults), checking the app on the way.
func render(t *testing.T, options []byte) *universe.App {
	t.Helper()
	p, err := universe.Load(universe.Files())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	opts, err := p.Options(options)
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	out, err := p.Render(opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	app, err := universe.CheckApp(out)
	if err != nil {
		t.Fatalf("CheckApp: %v\n%s", err, out)
	}
	return app
}

// testSecret stands for the content of the S3 credentials secret.
const testSecret = "s3cr3t-from-the-store"

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestShippedPackageChecks(t *testing.T) {
	if err := universe.Check(universe.Files()); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultsTree(t *testing.T) {
	p, err := universe.Load(universe.Files())
	if err != nil {
		t.Fatal(err)
	}
	d := p.Defaults()
	get := func(path ...string) any {
		var v any = d
		for _, k := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: %T is not an object", path, v)
			}
			v = m[k]
		}
		return v
	}
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"service", "name"}, "sluice"},
		{[]string{"service", "api_port"}, "0"},
		{[]string{"zookeeper", "hosts"}, "master.mesos:2181"},
		{[]string{"controller", "port"}, "10080"},
		{[]string{"node", "port"}, "12345"},
		{[]string{"node", "disk_type"}, "ROOT"},
		{[]string{"tier2", "kind"}, "fs"},
		{[]string{"tier2", "hdfs", "namenode_url"}, "hdfs://hdfs"},
		{[]string{"hdfs_head", "count"}, "1"},
		{[]string{"hdfs_head", "rpc_port"}, "8020"},
		{[]string{"hdfs_head", "data_port"}, "9866"},
		{[]string{"hdfs_head", "http_port"}, "9870"},
		{[]string{"tier2", "fs", "directory"}, "/mnt/sluice-tier2"},
		{[]string{"nfs_head", "count"}, "0"},
		{[]string{"nfs_head", "port"}, "12049"},
		{[]string{"s3_head", "count"}, "0"},
		{[]string{"s3_head", "port"}, "9000"},
		{[]string{"s3_head", "credentials_secret"}, ""},
	} {
		got := get(c.path...)
		if s, _ := got.(string); s != c.want {
			if n, ok := got.(json.Number); !ok || n.String() != c.want {
				t.Errorf("default %v = %v, want %s", c.path, got, c.want)
			}
		}
	}
	if anon, ok := get("s3_head", "anonymous").(bool); !ok || anon {
		t.Errorf("default s3_head.anonymous = %v, want false", get("s3_head", "anonymous"))
	}
	if len(d) != 8 {
		t.Errorf("options tree has %d top-level groups, want 8: %v", len(d), d)
	}
}

func TestDefaultApp(t *testing.T) {
	app := render(t, nil)
	p, _ := universe.Load(universe.Files())
	uri := p.Resource["assets"].(map[string]any)["uris"].(map[string]any)["sluice-linux-amd64"].(string)

	if app.ID != "sluice" || app.User != "nobody" || app.CPUs != 0.5 || app.Mem != 512 {
		t.Errorf("id/user/cpus/mem = %q %q %v %v", app.ID, app.User, app.CPUs, app.Mem)
	}
	if len(app.Fetch) != 1 || app.Fetch[0].URI != uri || !app.Fetch[0].Extract {
		t.Errorf("fetch = %+v, want the extracted %s", app.Fetch, uri)
	}
	h := app.HealthChecks[0]
	if h.Path != "/v1/health" || !strings.Contains(h.Protocol, "HTTP") || *h.PortIndex != 0 {
		t.Errorf("health check = %+v", h)
	}
	if app.PortDefinitions[0].Port != 0 {
		t.Errorf("api port = %d, want 0 (Marathon picks)", app.PortDefinitions[0].Port)
	}
	wantLabels := map[string]string{
		universe.LabelFrameworkName: "sluice",
		universe.LabelServiceName:   "sluice",
		universe.LabelPortIndex:     "0",
		universe.LabelScheme:        "http",
	}
	for k, v := range wantLabels {
		if app.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, app.Labels[k], v)
		}
	}
	wantEnv := map[string]string{
		"SLUICE_ZK":              "master.mesos:2181",
		"SLUICE_ZK_ROOT":         "/dcos-service-sluice",
		"SLUICE_TIER2_KIND":      "fs",
		"SLUICE_TIER2_HDFS_URI":  "hdfs://hdfs/sluice",
		"SLUICE_TIER2_FS_URI":    "file:///mnt/sluice-tier2",
		"SLUICE_ARTIFACT_URI":    uri,
		"SLUICE_CONTROLLERS":     "1",
		"SLUICE_CONTROLLER_CPUS": "1",
		"SLUICE_NODE_CPUS":       "2",
		"SLUICE_NODES":           "3",
		"SLUICE_NODE_DISK_TYPE":  "ROOT",
		"SLUICE_MESOS_MASTER":    "http://leader.mesos:5050",
		"SLUICE_HEADS":           "1",
		"SLUICE_HEAD_RPC_PORT":   "8020",
		"SLUICE_HEAD_DATA_PORT":  "9866",
		"SLUICE_HEAD_HTTP_PORT":  "9870",
		"SLUICE_NFS_HEADS":       "0",
		"SLUICE_NFS_HEAD_PORT":   "12049",
		"SLUICE_S3_HEADS":        "0",
		"SLUICE_S3_HEAD_PORT":    "9000",
		"SLUICE_S3_ANONYMOUS":    "false",
	}
	for k, v := range wantEnv {
		if app.Env[k] != v {
			t.Errorf("env %s = %v, want %q", k, app.Env[k], v)
		}
	}
	if _, ok := app.Env["SLUICE_S3_CREDENTIALS"]; ok || len(app.Secrets) != 0 || app.Env["SLUICE_S3_CREDENTIALS_SECRET"] != "" {
		t.Errorf("no credentials_secret, yet env %v, %v, secrets %v", app.Env["SLUICE_S3_CREDENTIALS"], app.Env["SLUICE_S3_CREDENTIALS_SECRET"], app.Secrets)
	}
}

// TestHeadOptionsFlowThrough: the NFS and S3 head options reach the
// app's env, and credentials_secret reaches the scheduler as the
// secret's path (--s3-credentials-secret), never as its content: the
// scheduler's app declares no secret and has no SLUICE_S3_CREDENTIALS,
// so the keys never pass through the scheduler (each S3 head task gets
// a Mesos secret reference the agent resolves).
func TestHeadOptionsFlowThrough(t *testing.T) {
	app := render(t, readFile(t, "testdata/options-heads.json"))
	wantEnv := map[string]string{
		"SLUICE_NFS_HEADS":     "2",
		"SLUICE_NFS_HEAD_CPUS": "1",
		"SLUICE_NFS_HEAD_MEM":  "2048",
		"SLUICE_NFS_HEAD_PORT": "2049",
		"SLUICE_S3_HEADS":      "3",
		"SLUICE_S3_HEAD_CPUS":  "0.5",
		"SLUICE_S3_HEAD_MEM":   "1024",
		"SLUICE_S3_HEAD_PORT":  "0",
		"SLUICE_S3_ANONYMOUS":  "true",
		"SLUICE_HEADS":         "1",
	}
	for k, v := range wantEnv {
		if app.Env[k] != v {
			t.Errorf("env %s = %v, want %q", k, app.Env[k], v)
		}
	}
	if got := app.Env["SLUICE_S3_CREDENTIALS_SECRET"]; got != "sluice/s3-credentials" {
		t.Errorf("SLUICE_S3_CREDENTIALS_SECRET = %v, want the secret's path", got)
	}
	if _, ok := app.Env["SLUICE_S3_CREDENTIALS"]; ok || len(app.Secrets) != 0 {
		t.Errorf("the scheduler's app gets the keys: env %v, secrets %+v", app.Env["SLUICE_S3_CREDENTIALS"], app.Secrets)
	}
	if !strings.Contains(app.Cmd, `--s3-credentials-secret "$SLUICE_S3_CREDENTIALS_SECRET"`) {
		t.Errorf("cmd does not pass the secret's path: %s", app.Cmd)
	}
}

// TestSecretReferencesChecked: CheckApp refuses an env secret reference
// to an undeclared secret, a declared secret no env uses, one without a
// source, and an env object that is not a reference.
func TestSecretReferencesChecked(t *testing.T) {
	p, err := universe.Load(universe.Files())
	if err != nil {
		t.Fatal(err)
	}
	opts, err := p.Options(readFile(t, "testdata/options-heads.json"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := p.Render(opts)
	if err != nil {
		t.Fatal(err)
	}
	// The package declares no secret any more (the agents resolve the
	// S3 heads' one): give the app one, as an operator's edit would.
	withSecret := strings.Replace(string(good), `"fetch": [`, `"secrets": { "s3credentials": { "source": "sluice/s3-credentials" } }, "fetch": [`, 1)
	withSecret = strings.Replace(withSecret, `"SLUICE_S3_HEADS":`, `"SLUICE_S3_CREDENTIALS": { "secret": "s3credentials" }, "SLUICE_S3_HEADS":`, 1)
	if _, err := universe.CheckApp([]byte(withSecret)); err != nil {
		t.Fatalf("an app with a secret: %v", err)
	}
	good = []byte(withSecret)
	for _, c := range []struct{ name, old, new string }{
		{"undeclared", `{ "secret": "s3credentials" }`, `{ "secret": "other" }`},
		{"unused", `{ "secret": "s3credentials" }`, `"x"`},
		{"no source", `"source": "sluice/s3-credentials"`, `"source": ""`},
		{"not a reference", `{ "secret": "s3credentials" }`, `{ "secret": "s3credentials", "x": 1 }`},
	} {
		bad := strings.Replace(string(good), c.old, c.new, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not in the rendered app", c.name, c.old)
		}
		if _, err := universe.CheckApp([]byte(bad)); !errors.Is(err, universe.ErrApp) {
			t.Errorf("%s: CheckApp = %v, want ErrApp", c.name, err)
		}
	}
}

func TestHDFSOptionsFlowThrough(t *testing.T) {
	app := render(t, readFile(t, "testdata/options-hdfs.json"))
	if app.ID != "streams/sluice-hdfs" || app.Labels[universe.LabelServiceName] != "streams/sluice-hdfs" {
		t.Errorf("id %q, service label %q", app.ID, app.Labels[universe.LabelServiceName])
	}
	wantEnv := map[string]string{
		"SLUICE_TIER2_KIND":      "hdfs",
		"SLUICE_TIER2_HDFS_URI":  "hdfs://namenode.example.internal:8020/data/sluice",
		"SLUICE_HDFS_CONFIG_URL": "http://hdfs-config.example.internal/v1/endpoints?format=xml&v=2",
		"SLUICE_ZK_ROOT":         "/streams/sluice-hdfs",
		"SLUICE_LOG_LEVEL":       "debug",
		"SLUICE_NODES":           "5",
		"SLUICE_NODE_DISK":       "51200",
		"SLUICE_NODE_DISK_TYPE":  "MOUNT",
		"SLUICE_CONTROLLERS":     "1", // not in the file: the default stays
		"SLUICE_ZK":              "master.mesos:2181",
		"SLUICE_HEADS":           "2",
		"SLUICE_HEAD_MEM":        "2048",
		"SLUICE_HEAD_CPUS":       "1",
		"SLUICE_HEAD_RPC_PORT":   "0",
		"SLUICE_HEAD_DATA_PORT":  "9866",
		"SLUICE_HEAD_HTTP_PORT":  "50070",
	}
	for k, v := range wantEnv {
		if app.Env[k] != v {
			t.Errorf("env %s = %v, want %q", k, app.Env[k], v)
		}
	}
}

// TestSchedulerCommandLine runs the rendered cmd the way Marathon does
// (sh -c in the sandbox, with the app's env and $PORT0) against a stand-in
// sluice that prints its arguments, and checks the command line the
// scheduler gets: the contract written down in README.md. The S3 keys
// (a secret's content in the env) are never on it.
func TestSchedulerCommandLine(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh on PATH: Marathon runs cmd with sh -c")
	}
	for _, c := range []struct {
		name    string
		options string
		want    map[string]string
	}{
		{"defaults", "", map[string]string{
			"--name": "sluice", "--role": "", "--principal": "sluice-principal", "--user": "nobody",
			"--mesos-master": "http://leader.mesos:5050", "--zk": "master.mesos:2181", "--zk-root": "/dcos-service-sluice",
			"--api-port": "31005", "--controllers": "1", "--controller-cpus": "1", "--controller-mem": "1024",
			"--controller-port": "10080", "--nodes": "3", "--node-cpus": "2", "--node-mem": "4096",
			"--node-disk": "10240", "--node-disk-type": "ROOT", "--node-port": "12345", "--containers": "4",
			// Kind fs: no HDFS configuration to fetch.
			"--tier2": "file:///mnt/sluice-tier2", "--hdfs-config-url": "",
			"--heads": "1", "--head-cpus": "1", "--head-mem": "1024",
			"--head-rpc-port": "8020", "--head-data-port": "9866", "--head-http-port": "9870",
			"--nfs-heads": "0", "--nfs-head-cpus": "1", "--nfs-head-mem": "1024", "--nfs-head-port": "12049",
			"--s3-heads": "0", "--s3-head-cpus": "1", "--s3-head-mem": "1024", "--s3-head-port": "9000",
			"--s3-anonymous": "false", "--s3-credentials-secret": "",
			"--controller-placement": "", "--node-placement": "", "--hdfs-head-placement": "", "--nfs-head-placement": "", "--s3-head-placement": "",
		}},
		{"placement", "testdata/options-placement.json", map[string]string{
			"--name": "sluice-placed", "--controller-placement": "hostname:LIKE:master-[0-9]+[.]example[.]internal",
			"--node-placement": "@zone:GROUP_BY:3, hostname:UNIQUE", "--hdfs-head-placement": "rack:IS:r1",
			"--nfs-head-placement": "hostname:MAX_PER:1", "--s3-head-placement": "@region:IS:eu-west",
		}},
		{"heads", "testdata/options-heads.json", map[string]string{
			"--name": "sluice-heads", "--heads": "1",
			"--nfs-heads": "2", "--nfs-head-mem": "2048", "--nfs-head-port": "2049",
			"--s3-heads": "3", "--s3-head-cpus": "0.5", "--s3-head-port": "0", "--s3-anonymous": "true",
			"--s3-credentials-secret": "sluice/s3-credentials",
		}},
		{"hdfs-ha", "testdata/options-hdfs-ha.json", map[string]string{
			// DC/OS's HDFS service through its nameservice, its
			// configuration fetched from its endpoints.
			"--tier2": "hdfs://hdfs/sluice", "--hdfs-config-url": "http://api.hdfs.marathon.l4lb.thisdcos.directory/v1/endpoints",
		}},
		{"fs", "testdata/options-fs.json", map[string]string{
			// No HDFS configuration to fetch: the tasks would fail to
			// launch without an HDFS service.
			"--tier2": "file:///mnt/shared/sluice", "--hdfs-config-url": "",
		}},
		{"hdfs", "testdata/options-hdfs.json", map[string]string{
			"--name": "streams/sluice-hdfs", "--zk-root": "/streams/sluice-hdfs", "--nodes": "5",
			"--node-disk": "51200", "--node-disk-type": "MOUNT",
			"--tier2":           "hdfs://namenode.example.internal:8020/data/sluice",
			"--hdfs-config-url": "http://hdfs-config.example.internal/v1/endpoints?format=xml&v=2",
			"--heads":           "2", "--head-mem": "2048", "--head-rpc-port": "0", "--head-http-port": "50070",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []byte
			if c.options != "" {
				opts = readFile(t, c.options)
			}
			app := render(t, opts)
			sandbox := t.TempDir()
			fake := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"
			if err := os.WriteFile(filepath.Join(sandbox, "sluice"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(sh, "-c", app.Cmd)
			cmd.Dir = sandbox
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT0=31005", "MESOS_SANDBOX=" + sandbox}
			for k, v := range app.Env {
				if s, ok := v.(string); ok {
					cmd.Env = append(cmd.Env, k+"="+s)
					continue
				}
				cmd.Env = append(cmd.Env, k+"=AKID:"+testSecret) // Marathon puts the secret's content there
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("cmd: %v\n%s", err, app.Cmd)
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(args) < 4 || args[0] != "--log-level" || args[2] != "scheduler" {
				t.Fatalf("args = %q, want --log-level LEVEL scheduler ...", args)
			}
			got := map[string]string{}
			rest := args[3:]
			for i := 0; i < len(rest); i++ {
				if strings.Contains(rest[i], testSecret) {
					t.Fatalf("the S3 secret is on the command line: %q", rest)
				}
				flag, value, one := strings.Cut(rest[i], "=") // a boolean flag comes as --flag=VALUE
				if !one {
					if i+1 == len(rest) {
						t.Fatalf("flag %s has no value in %q", rest[i], rest)
					}
					i++
					value = rest[i]
				}
				if !strings.HasPrefix(flag, "--") {
					t.Fatalf("%q is not a flag in %q", flag, rest)
				}
				if _, dup := got[flag]; dup {
					t.Fatalf("flag %s given twice", flag)
				}
				got[flag] = value
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if got["--artifact-uri"] != app.Fetch[0].URI {
				t.Errorf("--artifact-uri = %q, want the fetched %q", got["--artifact-uri"], app.Fetch[0].URI)
			}
		})
	}
}

func TestBadOptionsRejected(t *testing.T) {
	p, err := universe.Load(universe.Files())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, options string }{
		{"unknown group", `{"servce": {"name": "x"}}`},
		{"unknown option", `{"node": {"disks": 3}}`},
		{"quote in name", `{"service": {"name": "a\"b"}}`},
		{"upper-case name", `{"service": {"name": "Sluice"}}`},
		{"tier2 kind", `{"tier2": {"kind": "s3"}}`},
		{"disk type", `{"node": {"disk_type": "SSD"}}`},
		{"zero nodes", `{"node": {"count": 0}}`},
		{"negative heads", `{"hdfs_head": {"count": -1}}`},
		{"head port too big", `{"hdfs_head": {"rpc_port": 65536}}`},
		{"head port negative", `{"hdfs_head": {"http_port": -1}}`},
		{"unknown head option", `{"hdfs_head": {"port": 8020}}`},
		{"negative nfs heads", `{"nfs_head": {"count": -1}}`},
		{"nfs port too big", `{"nfs_head": {"port": 65536}}`},
		{"unknown nfs option", `{"nfs_head": {"rpc_port": 2049}}`},
		{"negative s3 heads", `{"s3_head": {"count": -2}}`},
		{"s3 port negative", `{"s3_head": {"port": -1}}`},
		{"s3 anonymous as string", `{"s3_head": {"anonymous": "yes"}}`},
		{"s3 secret with a quote", `{"s3_head": {"credentials_secret": "a\"b"}}`},
		{"s3 secret with a space", `{"s3_head": {"credentials_secret": "a b"}}`},
		{"s3 keys in the options", `{"s3_head": {"credentials": "AKID:secret"}}`},
		{"fractional count", `{"controller": {"count": 1.5}}`},
		{"count as string", `{"controller": {"count": "2"}}`},
		{"space in zk hosts", `{"zookeeper": {"hosts": "a:2181, b:2181"}}`},
		{"relative fs directory", `{"tier2": {"fs": {"directory": "tier2"}}}`},
		{"namenode with path", `{"tier2": {"hdfs": {"namenode_url": "hdfs://nn:8020/x"}}}`},
		{"log level", `{"service": {"log_level": "loud"}}`},
		{"quote in a placement", `{"node": {"placement_constraint": "hostname:LIKE:\"x\""}}`},
		{"backslash in a placement", `{"controller": {"placement_constraint": "a\\b:IS:x"}}`},
		{"placement as an array", `{"node": {"placement_constraint": [["hostname", "UNIQUE"]]}}`},
		{"not an object", `[1]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := p.Options([]byte(c.options)); !errors.Is(err, universe.ErrSchema) {
				t.Fatalf("Options(%s) = %v, want ErrSchema", c.options, err)
			}
		})
	}
	if _, err := p.Options([]byte(`{"service": {"name": "a", "name": "b"}}`)); !errors.Is(err, universe.ErrJSON) {
		t.Fatalf("repeated key: %v, want ErrJSON", err)
	}
}

// copyFiles copies the shipped package into a map the cases can change.
func copyFiles(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(universe.Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(universe.Files(), path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBrokenPackageFails(t *testing.T) {
	const (
		pkg  = universe.PackageFile
		cfg  = universe.ConfigFile
		tmpl = universe.TemplateFile
		res  = universe.ResourceFile
	)
	for _, c := range []struct {
		name     string
		file     string
		old, new string
		want     error
	}{
		{"package: no version", pkg, `"version": "0.1.0",`, ``, universe.ErrSchema},
		{"package: packaging 3.0", pkg, `"packagingVersion": "4.0"`, `"packagingVersion": "3.0"`, universe.ErrSchema},
		{"package: no upgradesFrom", pkg, `"upgradesFrom": ["*"],`, ``, universe.ErrSchema},
		{"package: bad version", pkg, `"version": "0.1.0"`, `"version": "0.1.0+build"`, universe.ErrSchema},
		{"package: upper-case name", pkg, `"name": "sluice"`, `"name": "Sluice"`, universe.ErrSchema},
		{"package: tag with space", pkg, `"streaming",`, `"stream ing",`, universe.ErrSchema},
		{"package: unknown field", pkg, `"framework": true,`, `"framework": true, "frameworks": true,`, universe.ErrSchema},
		{"package: framework not boolean", pkg, `"framework": true`, `"framework": "yes"`, universe.ErrSchema},
		{"package: dcos version", pkg, `"minDcosReleaseVersion": "1.10"`, `"minDcosReleaseVersion": "1.10-dev"`, universe.ErrSchema},
		{"package: releaseVersion (the published schema refuses it)", pkg, `"framework": true,`, `"framework": true, "releaseVersion": 0,`, universe.ErrSchema},
		{"package: license url not http(s)", pkg, shippedLicenses, `"licenses": [{"name": "x", "url": "ftp://example.invalid/LICENSE"}],`, universe.ErrSchema},
		{"package: license without url", pkg, shippedLicenses, `"licenses": [{"name": "x"}],`, universe.ErrSchema},
		{"package: non-ASCII", pkg, `Durable`, "Dur\u00e4ble", universe.ErrNotASCII},
		{"package: trailing comma", pkg, `"selected": false,`, `"selected": false,,`, universe.ErrJSON},
		{"resource: unknown field", res, `"assets": {`, `"asset": {}, "assets": {`, universe.ErrSchema},
		{"resource: uri not a string", res, `"https://github.com/sluice-streams/sluice/releases/download/v0.1.0/sluice-0.1.0-linux-amd64.tar.gz"`, `42`, universe.ErrSchema},
		{"resource: icon over http", res, `"icon-small": "https://`, `"icon-small": "http://`, universe.ErrSchema},
		{"resource: unknown image", res, `"icon-small":`, `"icon-tiny": "https://example.invalid/i.png", "icon-small":`, universe.ErrSchema},
		{"resource: repeated key", res, `"uris": {`, `"uris": {}, "uris": {`, universe.ErrJSON},
		{"config: unicode escape", cfg, `Name of the service`, `Name of the servic\u00e9`, universe.ErrNotASCII},
		{"config: tab is fine but NUL is not", cfg, `Name of the service`, "Name of the\x00service", universe.ErrNotASCII},
		{"config: not draft 4 (enum not an array)", cfg, `"enum": ["ROOT", "PATH", "MOUNT"],`, `"enum": "ROOT",`, universe.ErrSchema},
		{"config: not draft 4 (minimum a string)", cfg, `"minimum": 1024,`, `"minimum": "1024",`, universe.ErrSchema},
		{"config: not draft 4 (empty required)", cfg, `"required": ["directory"]`, `"required": []`, universe.ErrSchema},
		{"config: leaf without default", cfg, `"default": "master.mesos:2181"`, `"title": "hosts"`, universe.ErrSchema},
		{"config: option without description", cfg, `"description": "Number of nodes.",`, ``, universe.ErrSchema},
		{"config: default breaks its pattern", cfg, `"default": "sluice"`, `"default": "Sluice!"`, universe.ErrSchema},
		{"config: repeated key deep inside", cfg, `"default": 12345`, `"default": 12345, "default": 1`, universe.ErrJSON},
		{"template: option typo", tmpl, `"{{{service.user}}}"`, `"{{{service.usr}}}"`, universe.ErrTemplate},
		{"template: section typo", tmpl, `{{^zookeeper.root}}/dcos-service-{{{service.name}}}{{/zookeeper.root}}`, `{{^zookeeper.rot}}/dcos-service-{{{service.name}}}{{/zookeeper.rot}}`, universe.ErrTemplate},
		{"template: unclosed tag", tmpl, `"{{{service.user}}}"`, `"{{{service.user}}"`, universe.ErrTemplate},
		{"template: braces left unrendered", tmpl, `{` + "\n" + `  "id"`, `{{=<% %>=}}{` + "\n" + `  "id"`, universe.ErrTemplate},
		{"template: non-ASCII", tmpl, `"instances": 1,`, "\"instances\": 1, \"user\u00a0\": 1,", universe.ErrNotASCII},
		{"template: two instances", tmpl, `"instances": 1,`, `"instances": 2,`, universe.ErrApp},
		{"template: no portIndex", tmpl, `"portIndex": 0,`, ``, universe.ErrApp},
		{"template: TCP health check", tmpl, `"protocol": "MESOS_HTTP",`, `"protocol": "MESOS_TCP",`, universe.ErrApp},
		{"template: no service label", tmpl, `"DCOS_SERVICE_NAME": "{{{service.name}}}",`, ``, universe.ErrApp},
		{"template: framework label differs", tmpl, `"DCOS_PACKAGE_FRAMEWORK_NAME": "{{{service.name}}}"`, `"DCOS_PACKAGE_FRAMEWORK_NAME": "x{{{service.name}}}"`, universe.ErrApp},
		{"template: port index label out of range", tmpl, `"DCOS_SERVICE_PORT_INDEX": "0"`, `"DCOS_SERVICE_PORT_INDEX": "1"`, universe.ErrApp},
		{"template: env value a number", tmpl, `"SLUICE_NODES": "{{{node.count}}}"`, `"SLUICE_NODES": {{{node.count}}}`, universe.ErrApp},
		{"template: over capacity", tmpl, `"maximumOverCapacity": 0`, `"maximumOverCapacity": 1`, universe.ErrApp},
		{"template: no upgrade strategy", tmpl, `"minimumHealthCapacity": 0,`, ``, universe.ErrApp},
		{"template: misspelled field", tmpl, `"healthChecks":`, `"healthcheck":`, universe.ErrApp},
		{"template: missing comma", tmpl, `"instances": 1,`, `"instances": 1`, universe.ErrApp},
		{"template: cmd and args", tmpl, `"instances": 1,`, `"instances": 1, "args": ["x"],`, universe.ErrApp},
		{"template: zero cpus", tmpl, `"cpus": {{{service.cpus}}},`, `"cpus": 0,`, universe.ErrApp},
		{"template: relative fetch uri", tmpl, `"uri": "{{{resource.assets.uris.sluice-linux-amd64}}}"`, `"uri": "sluice.tar.gz"`, universe.ErrApp},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := copyFiles(t)
			before := string(files[c.file].Data)
			after := strings.Replace(before, c.old, c.new, 1)
			if after == before {
				t.Fatalf("the case changes nothing: %q not found in %s", c.old, c.file)
			}
			files[c.file].Data = []byte(after)
			err := universe.Check(files)
			if !errors.Is(err, c.want) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestEveryFileIsASCII covers what Load does not read: the README, the
// schemas' notes, the test data and the Go files.
func TestEveryFileIsASCII(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Ext(path) == ".png" {
			return nil // the icons (TestIcons)
		}
		n++
		for i, c := range readFile(t, path) {
			if c > 0x7e || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
				t.Errorf("%s: byte 0x%02x at offset %d", path, c, i)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("walked only %d files", n)
	}
}

// TestNoHeads: a count of 0 is valid and reaches the scheduler.
func TestNoHeads(t *testing.T) {
	app := render(t, []byte(`{"hdfs_head": {"count": 0}}`))
	if app.Env["SLUICE_HEADS"] != "0" || !strings.Contains(app.Cmd, `--heads "$SLUICE_HEADS"`) {
		t.Fatalf("SLUICE_HEADS %v; cmd %s", app.Env["SLUICE_HEADS"], app.Cmd)
	}
}
