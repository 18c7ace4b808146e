package layering

import (
	"bytes"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// Layers, top to bottom: a package may import its own layer and those
// below it.
const (
	programs = iota
	assembly // assembles roles into running processes, for programs and tests
	roles
	libraries
	protocolLayer
	utilities
	testSupport // any layer may be imported; only tests import it
)

var layerNames = []string{"program", "role assembly", "role", "library", "protocol package", "utility", "test-support package"}

// rule places the packages a pattern matches. Patterns: "a/b" is that
// package, "a/..." is a and everything under it, "s3*" is every top-level
// directory whose name starts with s3 and everything under it. The most
// specific (longest) matching pattern wins.
type rule struct {
	pattern string
	layer   int
	why     string
}

// rules is the module's layering. A new package that no pattern matches
// fails the test: give it a place here.
var rules = []rule{
	{"cmd/...", programs, "the binary; wiring only"},
	{"examples/...", programs, "example programs over the client library"},
	{"universe/...", programs, "the DC/OS package and its checks"},
	// The engine of `sluice bench`: it loads streams through the client and
	// probes the disk with node/diskprobe (a role's package), so it is a
	// part of the program, and nothing below may import it.
	{"internal/bench", programs, "the engine of sluice bench (client load, node/diskprobe)"},

	{"embed/...", assembly, "starts and stops the roles, for cmd/sluice and test harnesses; may import every role"},

	// Roles: each top-level directory is one role; no role imports another.
	{"node/...", roles, "the segment store"},
	{"controller/...", roles, "the controller and its REST API"},
	{"scheduler/...", roles, "the Mesos framework"},
	{"executor/...", roles, "the Mesos executor"},
	{"hdfsgateway/...", roles, "the HDFS head: tier 2 read-only over hdfs:// and webhdfs://"},
	{"nfsexport/...", roles, "the NFS head: tier 2 read-only over NFSv3"},
	{"s3gateway/...", roles, "the S3 head: tier 2 read-only over the S3 API"},
	{"kafka/...", roles, "future head"},

	{"client/...", libraries, "the client library and its clients of the node and REST API"},
	{"tier2/...", libraries, "tier-2 storage"},
	{"tier2/hive", libraries, "Hive DDL over tier 2's layout, for the CLI and heads alike: no role"},
	{"cluster/...", libraries, "the metadata store and the cluster's layout in it"},
	{"cluster/session", libraries, "keeps a role (leader, membership) on a session across expiries"},

	{"protocol/...", protocolLayer, "the wire protocol and the REST API's bodies"},

	{"internal/dirlock", utilities, "the data directory's lock (node, controller, standalone)"},
	{"internal/jsonhttp", utilities, "the JSON request builder (ctlclient, scheduler)"},
	{"internal/latency", utilities, "latency recording (node/diskprobe, internal/bench)"},
	{"internal/cpustat", utilities, "the machine's CPU time shares, steal included (internal/bench, internal/benchtest)"},
	{"internal/layering", utilities, "this test; no code"},
	{"internal/retry", utilities, "the backoffs and the context-aware sleep every retry loop uses"},
	{"internal/logs", utilities, "the one rule for a nil logger: discard"},
	{"internal/s3keys", utilities, "the S3 access keys' format (the S3 head, the scheduler's check)"},
	{"internal/connserve", utilities, "the TCP servers' accept loop, connection bound and Close (the HDFS head's sides)"},

	// Test support: each starts real components for tests, so it may
	// import roles; nothing but tests may import it.
	{"client/clienttest", testSupport, "starts a node and a controller in the test's process"},
	{"controller/rest/resttest", testSupport, "starts a node and a controller served over HTTP"},
	{"controller/internal/nodetest", testSupport, "starts a node on loopback"},
	{"internal/proctest", testSupport, "starts the real binary as child processes"},
	{"internal/porttest", testSupport, "loopback ports outside the ephemeral range, reserved across test processes"},
	{"internal/benchtest", testSupport, "runs the append benchmarks' loops on this disk; the heads' read benchmarks' shared pieces"},
	{"tier2/hadooptest", testSupport, "starts a MiniDFSCluster and Hadoop's readers (Java)"},
	{"tier2/hive/sparktest", testSupport, "runs SQL in Spark with Hive support (PySpark) for the Hive DDL's tests"},
	{"s3gateway/sparktest", testSupport, "runs Spark's s3a:// reads (PySpark, hadoop-aws) against the S3 head for its tests"},
	{"tier2/tier2test", testSupport, "the Storage conformance suite and an in-memory Storage"},
	{"tier2/view/viewtest", testSupport, "a map-based view.Catalog that tests change"},
	{"scheduler/mesostest", testSupport, "starts a fake Mesos master and agents"},
	{"cluster/clustertest", testSupport, "the Store conformance suite; starts a real ZooKeeper"},
	{"cluster/sessiontest", testSupport, "an in-memory Session on a bbolt store in a temp dir; starts no process"},
	{"node/vfs/vfstest", testSupport, "an error-injecting filesystem"},
	{"node/diskprobe/diskprobetest", testSupport, "this disk's limits for benchmarks"},
	{"tests/...", testSupport, "process-level tests: start the real binary, kill -9 it (crash, kill, e2e)"},
}

// allowed lists imports that break the rules on purpose: "from to" and
// the reason. Empty: the module has no such import today.
var allowed = map[string]string{}

// pkg is one package of the module and the module packages it imports,
// as paths relative to the module.
type pkg struct {
	path        string
	imports     []string // by the package's own files
	testImports []string // by its tests (TestImports and XTestImports)
}

// place returns the rule for p, or false if none matches.
func place(p string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if matches(r.pattern, p) && (!found || len(r.pattern) > len(best.pattern)) {
			best, found = r, true
		}
	}
	return best, found
}

func matches(pattern, p string) bool {
	switch {
	case strings.HasSuffix(pattern, "/..."):
		dir := strings.TrimSuffix(pattern, "/...")
		return p == dir || strings.HasPrefix(p, dir+"/")
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(top(p), strings.TrimSuffix(pattern, "*"))
	default:
		return p == pattern
	}
}

// top is the first element of p: the role a roles-layer package belongs to.
func top(p string) string {
	first, _, _ := strings.Cut(p, "/")
	return first
}

// check returns every violation of the rules in pkgs, sorted.
func check(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		from, ok := place(p.path)
		if !ok {
			out = append(out, fmt.Sprintf("%s has no place in the layering rules (internal/layering)", p.path))
			continue
		}
		for _, imp := range p.imports {
			if why, ok := allowed[p.path+" "+imp]; ok && why != "" {
				continue
			}
			to, ok := place(imp)
			switch {
			case !ok:
				// reported where imp itself is listed
			case to.layer == testSupport && from.layer != testSupport:
				out = append(out, fmt.Sprintf("%s imports %s: only tests may import a test-support package", p.path, imp))
			case from.layer == testSupport || to.layer == testSupport:
			case to.layer < from.layer:
				out = append(out, fmt.Sprintf("%s imports %s: a %s imports a %s above it", p.path, imp, layerNames[from.layer], layerNames[to.layer]))
			case from.layer == roles && to.layer == roles && top(p.path) != top(imp):
				out = append(out, fmt.Sprintf("%s imports %s: the role %s imports the role %s", p.path, imp, top(p.path), top(imp)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestModuleImportsPointDown checks the module as it is.
func TestModuleImportsPointDown(t *testing.T) {
	pkgs := modulePackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, v := range check(pkgs) {
		t.Error(v)
	}
	// Test files may import anything, but every package they import must
	// still have a place, so a new one cannot slip in through a test.
	for _, p := range pkgs {
		for _, imp := range p.testImports {
			if _, ok := place(imp); !ok {
				t.Errorf("a test of %s imports %s, which has no place in the layering rules", p.path, imp)
			}
		}
	}
	for k, why := range allowed {
		if why == "" {
			t.Errorf("allowed import %q has no reason", k)
		}
	}
}

// TestCheckReportsViolations shows each rule catching a violation in a
// made-up import graph.
func TestCheckReportsViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want []string
	}{
		{
			name: "downward imports are fine",
			pkgs: []pkg{
				{path: "cmd/sluice", imports: []string{"controller", "node", "client"}},
				{path: "controller", imports: []string{"client/segclient", "cluster/layout", "protocol"}},
				{path: "node/membership", imports: []string{"node", "cluster/layout", "cluster/zkstore"}},
				{path: "client/ctlclient", imports: []string{"internal/jsonhttp", "protocol/api"}},
				{path: "client/clienttest", imports: []string{"controller", "node/server"}},
				{path: "controller/rest/resttest", imports: []string{"controller/internal/nodetest", "embed"}},
				{path: "cmd/sluice", imports: []string{"embed"}},
				{path: "embed", imports: []string{"controller", "node", "embed/noderole", "cluster/boltstore"}},
				{path: "hdfsgateway/namenode", imports: []string{"tier2/view", "hdfsgateway/blocks", "client/ctlclient"}},
			},
		},
		{
			name: "a role imports the role assembly",
			pkgs: []pkg{{path: "controller", imports: []string{"embed"}}},
			want: []string{"controller imports embed: a role imports a role assembly above it"},
		},
		{
			name: "the role assembly imports the binary",
			pkgs: []pkg{{path: "embed", imports: []string{"cmd/sluice"}}},
			want: []string{"embed imports cmd/sluice: a role assembly imports a program above it"},
		},
		{
			name: "a library imports a role",
			pkgs: []pkg{{path: "cluster/layout", imports: []string{"controller/assignment"}}},
			want: []string{"cluster/layout imports controller/assignment: a library imports a role above it"},
		},
		{
			name: "the protocol imports a library",
			pkgs: []pkg{{path: "protocol/api", imports: []string{"client/ctlclient"}}},
			want: []string{"protocol/api imports client/ctlclient: a protocol package imports a library above it"},
		},
		{
			name: "a role imports the binary",
			pkgs: []pkg{{path: "executor", imports: []string{"cmd/sluice"}}},
			want: []string{"executor imports cmd/sluice: a role imports a program above it"},
		},
		{
			name: "a library imports the bench engine",
			pkgs: []pkg{{path: "client", imports: []string{"internal/bench"}}},
			want: []string{"client imports internal/bench: a library imports a program above it"},
		},
		{
			name: "a role imports another role",
			pkgs: []pkg{
				{path: "node/membership", imports: []string{"controller/assignment"}},
				{path: "s3gateway", imports: []string{"node"}},
				{path: "hdfsgateway/namenode", imports: []string{"node/container"}},
				{path: "hdfsgateway", imports: []string{"controller"}},
			},
			want: []string{
				"hdfsgateway imports controller: the role hdfsgateway imports the role controller",
				"hdfsgateway/namenode imports node/container: the role hdfsgateway imports the role node",
				"node/membership imports controller/assignment: the role node imports the role controller",
				"s3gateway imports node: the role s3gateway imports the role node",
			},
		},
		{
			name: "code outside tests imports test support",
			pkgs: []pkg{{path: "node", imports: []string{"internal/proctest"}}},
			want: []string{"node imports internal/proctest: only tests may import a test-support package"},
		},
		{
			name: "a package without a place",
			pkgs: []pkg{{path: "newthing", imports: []string{"protocol"}}},
			want: []string{"newthing has no place in the layering rules (internal/layering)"},
		},
		{
			name: "tests may import anything",
			pkgs: []pkg{{path: "client", testImports: []string{"controller/rest", "client/clienttest"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(tc.pkgs); !slices.Equal(got, tc.want) {
				t.Errorf("check reported\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// modulePackages lists the module's packages with `go list`, keeping only
// imports inside the module.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	mod := goCmd(t, "list", "-m", "-f", "{{.Path}}\t{{.Dir}}")
	modPath, modDir, ok := strings.Cut(strings.TrimSpace(mod), "\t")
	if !ok {
		t.Fatalf("go list -m printed %q", mod)
	}
	list := exec.Command("go", "list", "-e", "-f",
		"{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}\t{{with .Error}}{{.Err}}{{end}}", "./...")
	list.Dir = modDir
	var stderr bytes.Buffer
	list.Stderr = &stderr
	outb, err := list.Output()
	if err != nil {
		t.Fatalf("go list ./... in %s: %v\n%s", modDir, err, stderr.Bytes())
	}
	rel := func(p string) (string, bool) {
		if p == modPath {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, modPath+"/")
		return r, ok
	}
	inModule := func(field string) []string {
		var out []string
		for _, p := range strings.Fields(field) {
			if r, ok := rel(p); ok {
				out = append(out, r)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("go list printed %q", line)
		}
		if f[3] != "" {
			t.Fatalf("go list: %s: %s", f[0], f[3])
		}
		p, ok := rel(f[0])
		if !ok {
			t.Fatalf("go list ./... printed %s, outside module %s", f[0], modPath)
		}
		pkgs = append(pkgs, pkg{path: path.Clean(p), imports: inModule(f[1]), testImports: inModule(f[2])})
	}
	return pkgs
}

func goCmd(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}
