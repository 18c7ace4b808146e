package scheduler

import (
	"errors"
	"testing"

	"github.com/sluice-streams/sluice/cluster/sessiontest"
	"github.com/sluice-streams/sluice/scheduler/mesosauth"
)

// TestAuthPrincipal: the authenticated principal becomes the
// framework's (and so the reservations') when none is configured; a
// different configured one is refused, as the master would refuse it.
func TestAuthPrincipal(t *testing.T) {
	auth, err := mesosauth.Load(mesosauth.Source{Principal: "authed", Getenv: func(k string) string {
		if k == mesosauth.SecretEnv {
			return "s3cret"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := sessiontest.NewServer(t)
	cfg := sessionConfig(t, "a", srv.Open())
	cfg.Auth = auth
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.frameworkInfo().GetPrincipal(); p != "authed" || d.cfg.Spec.Framework != "sluice" {
		t.Fatalf("FrameworkInfo.principal %q, want the authenticated %q", p, "authed")
	}
	cfg.Principal = "other"
	if _, err := New(cfg); !errors.Is(err, ErrConfig) {
		t.Fatalf("a principal other than the authenticated one: %v, want ErrConfig", err)
	}
}
