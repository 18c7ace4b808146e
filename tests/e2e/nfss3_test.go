package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStandaloneNFSAndS3Heads: `sluice standalone` serves its tier 2
// through the NFS and S3 heads to the real clients: Debian's nfs-ls and
// nfs-cat, and the AWS CLI (from .cache/s3clients, scripts/s3-deps.sh).
// Every chunk is listed and read byte-identical; writes are refused with
// each protocol's read-only error; the S3 head, given no keys, serves
// unsigned requests and says so; a deleted stream leaves both listings.
func TestStandaloneNFSAndS3Heads(t *testing.T) {
	aws := awsCLI(t)
	s := startHeadStandalone(t, false)
	s.write(t, "ns", "text", textEvents(3000))
	s.write(t, "ns", "gone", binaryEvents())
	want := s.tree(t)
	if len(want.files) < 4 {
		t.Fatalf("tier 2 has %d chunks, want several", len(want.files))
	}
	waitFor(t, "the standalone to say its S3 head serves unsigned requests", waitTimeout, func() (bool, string) {
		return strings.Contains(s.p.Logs(), "s3 head: serving unsigned requests"), "not said yet"
	})

	// NFS: the listing of / is the view's, every chunk reads the same.
	if got, wantLs := nfsListing(t, s.nfs, "/"), want.listing(); !slices.Equal(got, wantLs) {
		t.Fatalf("nfs-ls -R through the head:\n%s\nthe view:\n%s", strings.Join(got, "\n"), strings.Join(wantLs, "\n"))
	}
	for _, p := range want.chunkPaths() {
		got, err := run(t, "nfs-cat", nfsURL(s.nfs, p))
		if err != nil || !bytes.Equal(got, want.files[p]) {
			t.Fatalf("nfs-cat %s: %d bytes (%v), tier 2 has %d", p, len(got), err, len(want.files[p]))
		}
	}
	local := filepath.Join(t.TempDir(), "new.seq")
	if err := os.WriteFile(local, []byte("not welcome"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "nfs-cp", local, nfsURL(s.nfs, "/ns/text/new.seq")); err == nil || !strings.Contains(err.Error(), "ROFS") && !strings.Contains(err.Error(), "Read-only") {
		t.Fatalf("nfs-cp into the export: %v; want a read-only error", err)
	}

	// S3: a sync of the scope's bucket is tier 2's files, unsigned.
	dir := t.TempDir()
	endpoint := "http://" + s.s3
	if _, err := run(t, aws, "s3", "sync", "s3://ns", dir, "--endpoint-url", endpoint, "--no-sign-request", "--only-show-errors"); err != nil {
		t.Fatal(err)
	}
	synced := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := "/ns/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if w, ok := want.files[rel]; !ok || !bytes.Equal(b, w) {
			return fmt.Errorf("aws s3 sync: %s (%d bytes) is not tier 2's file (in tier 2: %v)", rel, len(b), ok)
		}
		synced++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if synced != len(want.files) {
		t.Fatalf("aws s3 sync copied %d files, tier 2 has %d", synced, len(want.files))
	}
	if _, err := run(t, aws, "s3", "cp", local, "s3://ns/text/new.seq", "--endpoint-url", endpoint, "--no-sign-request"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("aws s3 cp into the bucket: %v; want AccessDenied", err)
	}

	// A deleted stream leaves both listings once the catalog is
	// refreshed (its TTL is 1 s).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ctl.SealStream(ctx, "ns", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.ctl.DeleteStream(ctx, "ns", "gone"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted stream to leave the NFS listing", waitTimeout, func() (bool, string) {
		out, err := run(t, "nfs-ls", nfsURL(s.nfs, "/ns"))
		return err == nil && !strings.Contains(string(out), "gone") && strings.Contains(string(out), "text"), string(out)
	})
	waitFor(t, "the deleted stream to leave the S3 listing", waitTimeout, func() (bool, string) {
		out, err := run(t, aws, "s3", "ls", "s3://ns/", "--endpoint-url", endpoint, "--no-sign-request")
		return err == nil && !strings.Contains(string(out), "gone/") && strings.Contains(string(out), "text/"), string(out)
	})
}

// TestS3GatewayProcessNeedsKeys runs `sluice s3-gateway` as its own
// process: with a key from SLUICE_S3_CREDENTIALS it serves signed
// requests (the AWS CLI) and refuses unsigned ones; with neither keys
// nor --anonymous it does not start, and says why in one line.
func TestS3GatewayProcessNeedsKeys(t *testing.T) {
	aws := awsCLI(t)
	s := startHeadStandalone(t, true)
	s.write(t, "gw", "keep", textEvents(500))
	want := s.tree(t)

	g := start(t, "s3-gateway", []string{"SLUICE_S3_CREDENTIALS=AKE2E:e2e-secret"}, "--controller", s.ctl.BaseURL(),
		"s3-gateway", "--listen", "127.0.0.1:0")
	endpoint := "http://" + g.Line(t, "s3 head listening on ", waitTimeout)
	signed := []string{"AWS_ACCESS_KEY_ID=AKE2E", "AWS_SECRET_ACCESS_KEY=e2e-secret", "AWS_DEFAULT_REGION=us-east-1"}
	p := want.chunkPaths()[0]
	got, err := runEnv(t, signed, aws, "s3", "cp", "s3:/"+p, "-", "--endpoint-url", endpoint)
	if err != nil || !bytes.Equal(got, want.files[p]) {
		t.Fatalf("aws s3 cp s3:/%s -: %d bytes (%v), tier 2 has %d", p, len(got), err, len(want.files[p]))
	}
	if _, err := run(t, aws, "s3", "ls", "s3://gw/", "--endpoint-url", endpoint, "--no-sign-request"); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("an unsigned listing of a head with keys: %v; want AccessDenied", err)
	}
	g.Stop(t, waitTimeout)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sluiceBin, "--controller", s.ctl.BaseURL(), "s3-gateway", "--listen", "127.0.0.1:0")
	cmd.Env = withoutEnv(os.Environ(), "SLUICE_S3_CREDENTIALS")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "no credentials") {
		t.Fatalf("s3-gateway without keys: %v\nstderr: %s\nwant a non-zero exit and one line saying it has no credentials", err, stderr.Bytes())
	}
}

// listing is the tree as "<path> <size>" lines (0 for directories),
// relative to the root, sorted: what nfsListing returns.
func (tr tree) listing() []string {
	var out []string
	for _, d := range tr.dirs {
		out = append(out, strings.TrimPrefix(d, "/")+" 0")
	}
	for p, b := range tr.files {
		out = append(out, fmt.Sprintf("%s %d", strings.TrimPrefix(p, "/"), len(b)))
	}
	slices.Sort(out)
	return out
}

// nfsURL is libnfs's URL of p on the NFS head at addr: NFS and MOUNT on
// the head's one port, NFSv3, no nested exports.
func nfsURL(addr, p string) string {
	_, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("nfs://127.0.0.1%s?version=3&nfsport=%s&mountport=%s&auto-traverse-mounts=0", p, port, port)
}

// nfsListing runs nfs-ls -R on the head's export p and returns "<path>
// <size>" lines, sorted.
func nfsListing(t *testing.T, addr, p string) []string {
	t.Helper()
	out, err := run(t, "nfs-ls", "-R", nfsURL(addr, p))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			t.Fatalf("nfs-ls -R: line %q", l)
		}
		lines = append(lines, f[len(f)-1]+" "+f[len(f)-2])
	}
	slices.Sort(lines)
	return lines
}

// awsCLI is the AWS CLI of .cache/s3clients (scripts/s3-deps.sh, which
// `make test` runs); the test fails, saying how to install it, without.
func awsCLI(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".cache", "s3clients", "bin", "aws")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the AWS CLI is not installed at %s: run `bash scripts/s3-deps.sh` from the repository root (`make test` does)", bin)
	}
	return bin
}

// run runs a client command with the test's environment less anything
// that points the AWS CLI elsewhere, and returns its standard output; the
// error carries its standard error.
func run(t *testing.T, name string, args ...string) ([]byte, error) {
	return runEnv(t, nil, name, args...)
}

func runEnv(t *testing.T, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "AWS_"), "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"), append([]string{"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true"}, env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// withoutEnv is env less the variables whose names start with one of
// prefixes.
func withoutEnv(env []string, prefixes ...string) []string {
	var out []string
	for _, kv := range env {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			out = append(out, kv)
		}
	}
	return out
}
