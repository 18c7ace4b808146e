package s3gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAnonymousClients reads through a head that serves unsigned
// requests (Config.Anonymous, as the standalone without credentials)
// with each client's unsigned mode, as docs/S3.md shows them: the AWS
// CLI's --no-sign-request, boto3's UNSIGNED, DuckDB without a key. Writes
// are refused all the same.
func TestAnonymousClients(t *testing.T) {
	f := newFixture(t, Config{Anonymous: true, Credentials: map[string]string{}})
	py := venvPython(t)
	aws := filepath.Join(filepath.Dir(py), "aws")
	run := runCmd
	want := f.keys("logs")
	out, stderr, err := run(aws, "--endpoint-url", f.srv.URL, "--no-sign-request", "s3", "ls", "--recursive", "s3://logs")
	if err != nil {
		t.Fatalf("aws s3 ls: %v\n%s", err, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if fs := strings.Fields(line); len(fs) == 4 {
			got = append(got, fs[3])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("aws s3 ls: %q, want %q", got, want)
	}
	out, stderr, err = run(aws, "--endpoint-url", f.srv.URL, "--no-sign-request", "s3", "cp", "s3://logs/"+want[0], "-")
	if data, _ := os.ReadFile(f.chunks["logs/"+want[0]]); err != nil || out != string(data) {
		t.Fatalf("aws s3 cp: %v %s", err, stderr)
	}
	if _, stderr, err = run(aws, "--endpoint-url", f.srv.URL, "--no-sign-request", "s3", "rm", "s3://logs/"+want[0]); err == nil || !strings.Contains(stderr, "AccessDenied") {
		t.Fatalf("aws s3 rm: %v %s", err, stderr)
	}

	boto3 := `
import boto3, hashlib, sys
from botocore import UNSIGNED
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", config=Config(signature_version=UNSIGNED))
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="logs"):
    for o in page.get("Contents", []):
        body = s3.get_object(Bucket="logs", Key=o["Key"])["Body"].read()
        print(o["Key"], hashlib.sha256(body).hexdigest())
`
	out, stderr, err = run(py, "-c", boto3, f.srv.URL)
	if err != nil {
		t.Fatalf("boto3 unsigned: %v\n%s", err, stderr)
	}
	f.checkSums(t, "boto3 unsigned", out, "")

	duck := `
import duckdb, duckdb_extension_httpfs, glob, hashlib, os, sys
ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions", "*", "httpfs.duckdb_extension"))[0]
con = duckdb.connect()
con.execute(f"LOAD '{ext}'")
con.execute(f"SET s3_endpoint = '{sys.argv[1]}'")
con.execute("SET s3_url_style = 'path'")
con.execute("SET s3_use_ssl = false")
for name, content in con.execute("SELECT filename, content FROM read_blob('s3://logs/**/*.seq') ORDER BY filename").fetchall():
    print(name, hashlib.sha256(content).hexdigest())
`
	out, stderr, err = run(py, "-c", duck, strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatalf("duckdb unsigned: %v\n%s", err, stderr)
	}
	f.checkSums(t, "duckdb unsigned", out, "s3://logs/")
}

// checkSums checks lines "<key> <sha256>" (keys with prefix before them)
// against every chunk of bucket logs.
func (f *fixture) checkSums(t *testing.T, who, out, prefix string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, s, _ := strings.Cut(line, " ")
		k = strings.TrimPrefix(k, prefix)
		got = append(got, k)
		if p := f.chunks["logs/"+k]; p == "" || sum(t, p) != s {
			t.Errorf("%s: %s: sha256 %s", who, k, s)
		}
	}
	if want := f.keys("logs"); !slices.Equal(got, want) {
		t.Errorf("%s read %q, want %q", who, got, want)
	}
}

// runCmd runs a client command with the clients' clean environment.
func runCmd(name string, args ...string) (string, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(cleanEnv(), "AWS_DEFAULT_REGION=us-east-1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
