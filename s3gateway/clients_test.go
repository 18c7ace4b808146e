package s3gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// venvPython is the Python of the S3 clients' virtual environment
// (scripts/s3-deps.sh, which `make test` runs); the test fails, telling
// how to make it, if it is missing.
func venvPython(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	py := filepath.Join(dir, ".cache", "s3clients", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("the S3 clients (boto3, AWS CLI, DuckDB) are not installed at %s: run `bash scripts/s3-deps.sh` from the repository root (`make test` does)", py)
	}
	return py
}

// runPython runs a script of testdata with the venv's Python and env
// added, and returns its standard output.
func runPython(t testing.TB, script string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command(venvPython(t), filepath.Join("testdata", script))
	cmd.Env = append(cleanEnv(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	return out
}

// cleanEnv is the process environment less anything that would point
// the AWS clients elsewhere (profiles, keys, proxies).
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := bytes.Cut([]byte(kv), []byte("="))
		switch {
		case bytes.HasPrefix(k, []byte("AWS_")), bytes.EqualFold(k, []byte("http_proxy")), bytes.EqualFold(k, []byte("https_proxy")),
			bytes.EqualFold(k, []byte("no_proxy")), bytes.EqualFold(k, []byte("all_proxy")):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
}

type boto3Object struct {
	Size         int64  `json:"size"`
	ETag         string `json:"etag"`
	SHA256       string `json:"sha256"`
	Range        string `json:"range"`
	RangeStatus  int    `json:"range_status"`
	ContentRange string `json:"content_range"`
}

type boto3Result struct {
	Buckets           []string               `json:"buckets"`
	Keys              []string               `json:"keys"`
	Pages             int                    `json:"pages"`
	TopPrefixes       []string               `json:"top_prefixes"`
	SegmentPrefixes   []string               `json:"segment_prefixes"`
	V1Keys            []string               `json:"v1_keys"`
	StartAfter        []string               `json:"start_after"`
	EqPrefixes        []string               `json:"eq_prefixes"`
	Objects           map[string]boto3Object `json:"objects"`
	IfNoneMatch       string                 `json:"if_none_match"`
	IfMatchOther      string                 `json:"if_match_other"`
	IfMatch           int                    `json:"if_match"`
	HeadMissing       string                 `json:"head_missing"`
	GetMissing        string                 `json:"get_missing"`
	NoBucket          string                 `json:"no_bucket"`
	Put               string                 `json:"put"`
	Delete            string                 `json:"delete"`
	DeleteObjects     string                 `json:"delete_objects"`
	Copy              string                 `json:"copy"`
	CreateBucket      string                 `json:"create_bucket"`
	Multipart         string                 `json:"multipart"`
	WrongSecret       string                 `json:"wrong_secret"`
	PresignedSHA256   string                 `json:"presigned_sha256"`
	PresignedTampered int                    `json:"presigned_tampered"`
}

// TestBoto3 lists, heads and reads every chunk through boto3, path-style
// and virtual-hosted-style, and checks the refusals it gets.
func TestBoto3(t *testing.T) {
	f := newFixture(t, Config{})
	for _, style := range []string{"path", "virtual"} {
		t.Run(style, func(t *testing.T) {
			out := runPython(t, "boto3_client.py", "S3_ENDPOINT="+f.srv.URL, "S3_KEY="+testKey, "S3_SECRET="+testSecret,
				"S3_STYLE="+style, "S3_BUCKET=logs")
			var res boto3Result
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			f.checkBoto3(t, res)
			f.checkVirtual(t, style == "virtual")
		})
	}
}

func (f *fixture) checkBoto3(t *testing.T, res boto3Result) {
	t.Helper()
	want := f.keys("logs")
	if !slices.Equal(res.Buckets, []string{"logs", "metrics"}) {
		t.Errorf("buckets %q", res.Buckets)
	}
	if !slices.Equal(res.Keys, want) || !slices.Equal(res.V1Keys, want) {
		t.Errorf("keys %q (V1 %q), want %q", res.Keys, res.V1Keys, want)
	}
	if res.Pages != (len(want)+1)/2 {
		t.Errorf("%d pages of 2 for %d keys", res.Pages, len(want))
	}
	if !slices.Equal(res.TopPrefixes, []string{"clicks/", "views/"}) {
		t.Errorf("top-level prefixes %q (an empty stream has none)", res.TopPrefixes)
	}
	if !slices.Equal(res.StartAfter, want[2:]) {
		t.Errorf("start-after %q: %q", want[1], res.StartAfter)
	}
	if !slices.Equal(res.EqPrefixes, []string{"clicks/segment=", "views/segment="}) {
		t.Errorf("delimiter '=': %q", res.EqPrefixes)
	}
	if !slices.Equal(res.SegmentPrefixes, []string{"clicks/segment=0/", "clicks/segment=1/"}) {
		t.Errorf("segment prefixes %q", res.SegmentPrefixes)
	}
	for _, k := range want {
		o, ok := res.Objects[k]
		p := f.chunks["logs/"+k]
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || o.Size != int64(len(data)) || o.SHA256 != sum(t, p) {
			t.Errorf("%s: %+v, want %d bytes, sha256 %s", k, o, len(data), sum(t, p))
			continue
		}
		if o.RangeStatus != 206 || o.Range != hexOf(data[10:20]) || o.ContentRange != "bytes 10-19/"+itoa(len(data)) {
			t.Errorf("%s range: %+v", k, o)
		}
	}
	for name, c := range map[string][2]string{
		"if-none-match": {res.IfNoneMatch, "304"}, "if-match other": {res.IfMatchOther, "PreconditionFailed"},
		"head missing": {res.HeadMissing, "404"}, "get missing": {res.GetMissing, "NoSuchKey"},
		"no bucket": {res.NoBucket, "NoSuchBucket"}, "put": {res.Put, "AccessDenied"}, "delete": {res.Delete, "AccessDenied"},
		"delete objects": {res.DeleteObjects, "AccessDenied"}, "copy": {res.Copy, "AccessDenied"},
		"create bucket": {res.CreateBucket, "AccessDenied"}, "multipart": {res.Multipart, "AccessDenied"},
		"wrong secret": {res.WrongSecret, "SignatureDoesNotMatch"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s: %q, want %q", name, c[0], c[1])
		}
	}
	if res.IfMatch != 200 {
		t.Errorf("if-match: %d", res.IfMatch)
	}
	if res.PresignedSHA256 != sum(t, f.chunks["logs/"+want[0]]) || res.PresignedTampered != 403 {
		t.Errorf("presigned: %s, tampered %d", res.PresignedSHA256, res.PresignedTampered)
	}
}

func hexOf(b []byte) string {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return string(out)
}

// awsCLI runs the venv's AWS CLI against the fixture with a config file
// setting the addressing style (and, for virtual-hosted style, the
// fixture's server as the HTTP proxy so that <bucket>.localhost needs no
// resolver). It returns standard output and the error, if any, with
// standard error.
func (f *fixture) awsCLI(t testing.TB, style string, secret string, args ...string) ([]byte, string, error) {
	t.Helper()
	py := venvPython(t)
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("[default]\nregion = us-east-1\ns3 =\n    addressing_style = "+style+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint := f.srv.URL
	env := append(cleanEnv(), "AWS_CONFIG_FILE="+cfg, "AWS_ACCESS_KEY_ID="+testKey, "AWS_SECRET_ACCESS_KEY="+secret)
	if style == "virtual" {
		endpoint = "http://localhost:" + f.srv.URL[strings.LastIndexByte(f.srv.URL, ':')+1:]
		env = append(env, "HTTP_PROXY="+f.srv.URL)
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(py), "aws"), append([]string{"--endpoint-url", endpoint}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}

// TestAWSCLI lists, copies and syncs every chunk with the AWS CLI and
// compares them byte for byte; copying into the bucket is refused.
func TestAWSCLI(t *testing.T) {
	f := newFixture(t, Config{})
	for _, style := range []string{"path", "virtual"} {
		t.Run(style, func(t *testing.T) {
			out, stderr, err := f.awsCLI(t, style, testSecret, "s3", "ls", "--recursive", "s3://logs")
			if err != nil {
				t.Fatalf("s3 ls: %v\n%s", err, stderr)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				fs := strings.Fields(line) // date time size key
				if len(fs) != 4 {
					t.Fatalf("s3 ls line %q", line)
				}
				got = append(got, fs[3])
			}
			if want := f.keys("logs"); !slices.Equal(got, want) {
				t.Fatalf("s3 ls: %q, want %q", got, want)
			}
			k := f.keys("logs")[1]
			out, stderr, err = f.awsCLI(t, style, testSecret, "s3", "cp", "s3://logs/"+k, "-")
			if err != nil {
				t.Fatalf("s3 cp: %v\n%s", err, stderr)
			}
			if want, _ := os.ReadFile(f.chunks["logs/"+k]); !bytes.Equal(out, want) {
				t.Fatalf("s3 cp -: %d bytes, want %d", len(out), len(want))
			}
			dir := t.TempDir()
			if _, stderr, err = f.awsCLI(t, style, testSecret, "s3", "sync", "--no-progress", "s3://logs", dir); err != nil {
				t.Fatalf("s3 sync: %v\n%s", err, stderr)
			}
			var synced []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					synced = append(synced, filepath.ToSlash(rel))
				}
				return err
			})
			slices.Sort(synced)
			if want := f.keys("logs"); !slices.Equal(synced, want) {
				t.Fatalf("s3 sync wrote %q, want %q", synced, want)
			}
			for _, k := range synced {
				if a, b := sum(t, filepath.Join(dir, k)), sum(t, f.chunks["logs/"+k]); a != b {
					t.Errorf("synced %s differs", k)
				}
			}
			src := filepath.Join(t.TempDir(), "f")
			os.WriteFile(src, []byte("data"), 0o644)
			if _, stderr, err = f.awsCLI(t, style, testSecret, "s3", "cp", src, "s3://logs/clicks/new"); err == nil || !strings.Contains(stderr, "AccessDenied") {
				t.Errorf("s3 cp to the bucket: %v\n%s", err, stderr)
			}
			if _, stderr, err = f.awsCLI(t, style, testSecret, "s3", "rm", "s3://logs/"+k); err == nil || !strings.Contains(stderr, "AccessDenied") {
				t.Errorf("s3 rm: %v\n%s", err, stderr)
			}
			if _, stderr, err = f.awsCLI(t, style, "wrong", "s3", "ls", "s3://logs"); err == nil || !strings.Contains(stderr, "SignatureDoesNotMatch") {
				t.Errorf("s3 ls with a wrong secret: %v\n%s", err, stderr)
			}
			f.checkVirtual(t, style == "virtual")
		})
	}
}

type duckdbResult struct {
	Files map[string]struct {
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	} `json:"files"`
	Glob         []string `json:"glob"`
	SingleSHA256 string   `json:"single_sha256"`
}

// TestDuckDB reads every chunk with DuckDB's read_blob over s3:// (and
// globs), path-style and virtual-hosted-style.
func TestDuckDB(t *testing.T) {
	f := newFixture(t, Config{})
	for _, style := range []string{"path", "vhost"} {
		t.Run(style, func(t *testing.T) {
			out := runPython(t, "duckdb_client.py", "S3_ENDPOINT="+f.srv.URL, "S3_KEY="+testKey, "S3_SECRET="+testSecret,
				"S3_STYLE="+style, "S3_BUCKET=logs")
			var res duckdbResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got, seg0 []string
			for name, o := range res.Files {
				k := strings.TrimPrefix(name, "s3://logs/")
				got = append(got, k)
				if p := f.chunks["logs/"+k]; p == "" || o.SHA256 != sum(t, p) {
					t.Errorf("%s: sha256 %s", name, o.SHA256)
				}
			}
			slices.Sort(got)
			want := f.keys("logs")
			if !slices.Equal(got, want) {
				t.Errorf("read_blob read %q, want %q", got, want)
			}
			for _, k := range want {
				if strings.Contains(k, "/segment=0/") {
					seg0 = append(seg0, "s3://logs/"+k)
				}
			}
			if !slices.Equal(res.Glob, seg0) {
				t.Errorf("glob: %q, want %q", res.Glob, seg0)
			}
			if res.SingleSHA256 != sum(t, f.chunks["logs/"+want[0]]) {
				t.Errorf("read_blob of one key: %s", res.SingleSHA256)
			}
			f.checkVirtual(t, style == "vhost")
		})
	}
}

// checkVirtual checks that virtual-hosted-style requests reached the
// server as such (Host logs.localhost:<port>) once a virtual subtest ran.
func (f *fixture) checkVirtual(t *testing.T, virtual bool) {
	t.Helper()
	vh := "logs.localhost:" + f.srv.URL[strings.LastIndexByte(f.srv.URL, ':')+1:]
	if virtual && !f.sawHost(vh) {
		t.Errorf("no request came virtual-hosted-style (Host %s)", vh)
	}
	if !virtual && f.sawHost(vh) {
		t.Errorf("a path-style run sent Host %s", vh)
	}
}
