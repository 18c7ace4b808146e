package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/mesosauth"
)

// TestSchedulerSecretFlags: --secret-file and the credential variables
// reach the driver's Config.Auth; a plain secret without --principal is
// refused before anything starts, with no secret in the message.
func TestSchedulerSecretFlags(t *testing.T) {
	t.Setenv(mesosauth.ServiceAccountEnv, "")
	t.Setenv(mesosauth.SecretEnv, "")
	if c, err := parseScheduler(); err != nil || c.Auth != nil {
		t.Fatalf("no credential: %v, auth %v", err, c.Auth)
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("file-Secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseScheduler("--principal", "sluice-principal", "--secret-file", file)
	if err != nil || c.Auth == nil || c.Auth.Scheme() != mesosauth.SchemeBasic || c.Auth.Principal() != "sluice-principal" {
		t.Fatalf("--secret-file: %v, auth %v", err, c.Auth)
	}
	if _, err := scheduler.New(c); err != nil {
		t.Fatalf("the driver refuses the configuration: %v", err)
	}
	t.Setenv(mesosauth.SecretEnv, "env-Secret")
	if c, err := parseScheduler("--principal", "p2"); err != nil || c.Auth == nil || c.Auth.Principal() != "p2" {
		t.Fatalf("%s: %v, auth %v", mesosauth.SecretEnv, err, c.Auth)
	}
	_, err = parseScheduler("--principal", "", "--secret-file", file)
	if err == nil || !strings.Contains(err.Error(), "needs --principal") || strings.Contains(err.Error(), "file-Secret") {
		t.Fatalf("a secret without a principal: %v", err)
	}
}
