package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/embed"
)

// The standalone's head flags fill the NFS and S3 heads' configs, and the
// S3 keys come from the flag, the environment and a file together.
func TestHeadFlagsFillTheConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# team keys\nAKFILE:file-secret\n\nAKTWO:two-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_S3_CREDENTIALS", "AKENV:env-secret")
	cfg := embed.DefaultStandaloneConfig()
	var keys s3Keys
	parseFlags(t, standaloneFlags(&cfg, &keys), "--nfs-addr", "127.0.0.1:1", "--s3-addr", "127.0.0.1:2", "--no-nfs-head",
		"--s3-credentials-file", file, "--s3-region", "eu-west-1", "--s3-domain", "s3.example.com",
		"--s3-allowed-hosts", "nas.lan, agent-7", "--s3-allowed-hosts", "*")
	if cfg.NFS.Listen != "127.0.0.1:1" || cfg.S3.Listen != "127.0.0.1:2" || !cfg.NoNFS || cfg.NoS3 ||
		cfg.S3.Region != "eu-west-1" || cfg.S3.Domain != "s3.example.com" || !slices.Equal(cfg.S3.AllowedHosts, []string{"nas.lan", "agent-7", "*"}) {
		t.Fatalf("config %+v %+v", cfg.NFS, cfg.S3)
	}
	got, err := keys.load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"AKENV": "env-secret", "AKFILE": "file-secret", "AKTWO": "two-secret"}
	if !maps.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

// A key given twice, a malformed one, or a missing file is one error
// naming where it came from, without the secret or the key.
func TestS3KeysAreChecked(t *testing.T) {
	dir := t.TempDir()
	twice := filepath.Join(dir, "twice")
	if err := os.WriteFile(twice, []byte("AKONE:s3cret-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		keys s3Keys
		want string
	}{
		{s3Keys{prefix: "s3-", inline: "AKONE:s3cret-b", file: twice}, "--s3-credentials-file " + twice + ": an access key is given in --s3-credentials (or SLUICE_S3_CREDENTIALS) too"},
		{s3Keys{inline: "no-colon"}, "--credentials (or SLUICE_S3_CREDENTIALS)"},
		{s3Keys{file: filepath.Join(dir, "missing")}, "--credentials-file"},
	} {
		_, err := tt.keys.load()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("load %+v: %v; want an error saying %q", tt.keys, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "AKONE")) {
			t.Errorf("load %+v: the error %q repeats a secret", tt.keys, err)
		}
	}
}

// Flags the S3 head cannot serve with stop `sluice s3-gateway` before it
// starts, with one line naming the flag's value: a region with a space or
// a slash, a domain with a port (which no Host would ever match).
func TestS3GatewayFlagsAreChecked(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--region", "bad region/x", "--domain", "s3.example.com:9000"}, `region "bad region/x"`},
		{[]string{"--domain", "s3.example.com:9000"}, `domain "s3.example.com:9000": want a host name without port`},
		{[]string{"--allowed-hosts", "nas.lan,nas.lan:9000"}, `allowed host "nas.lan:9000": want a host name without port, or *`},
	} {
		args := append([]string{"--controller", "http://127.0.0.1:1", "s3-gateway", "--anonymous", "--listen", "127.0.0.1:0"}, tt.args...)
		code, stdout, stderr := runArgs(t, args...)
		if code != 1 || stdout != "" {
			t.Fatalf("%q: exit %d, stdout %q", args, code, stdout)
		}
		oneErrorLine(t, stderr, tt.want)
	}
}
