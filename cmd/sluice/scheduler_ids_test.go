package main

import (
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/scheduler"
)

// parseScheduler runs `sluice scheduler`'s flags through
// schedulerConfig.
func parseScheduler(args ...string) (scheduler.Config, error) {
	o := &schedulerOptions{}
	var cfg scheduler.Config
	app := &cli.App{Name: "scheduler", Flags: schedulerFlags(o), Writer: io.Discard, ErrWriter: io.Discard,
		Action: func(*cli.Context) error {
			var err error
			cfg, err = schedulerConfig(o, logrus.New())
			return err
		}}
	err := app.Run(append([]string{"scheduler"}, args...))
	return cfg, err
}

// mustParseScheduler is parseScheduler failing t on an error.
func mustParseScheduler(t *testing.T, args ...string) scheduler.Config {
	t.Helper()
	cfg, err := parseScheduler(args...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSchedulerRoleAndUninstallFlags: without --role the role comes from
// the name (and says so); --role wins; a role Mesos refuses is refused;
// SDK_UNINSTALL=true, as Cosmos sets it, is --uninstall.
func TestSchedulerRoleAndUninstallFlags(t *testing.T) {
	t.Setenv(scheduler.UninstallEnv, "")
	for _, c := range []struct {
		args    []string
		role    string
		derived bool
	}{
		{nil, "sluice-role", true},
		{[]string{"--name", "sluice-b"}, "sluice-b-role", true},
		{[]string{"--name", "/prod/sluice"}, "prod__sluice-role", true},
		{[]string{"--name", "sluice-b", "--role", "shared"}, "shared", false},
	} {
		cfg, err := parseScheduler(c.args...)
		if err != nil || cfg.Role != c.role || cfg.RoleDerived != c.derived || cfg.Uninstall {
			t.Fatalf("%v: role %q derived %v uninstall %v, %v; want %q %v", c.args, cfg.Role, cfg.RoleDerived, cfg.Uninstall, err, c.role, c.derived)
		}
	}
	if _, err := parseScheduler("--role", "bad role"); err == nil || !strings.Contains(err.Error(), `"bad role"`) {
		t.Fatalf("a role with a space: %v", err)
	}
	if cfg, err := parseScheduler("--uninstall"); err != nil || !cfg.Uninstall {
		t.Fatalf("--uninstall: %v %v", cfg.Uninstall, err)
	}
	t.Setenv(scheduler.UninstallEnv, "true")
	if cfg, err := parseScheduler(); err != nil || !cfg.Uninstall {
		t.Fatalf("%s=true: %v %v", scheduler.UninstallEnv, cfg.Uninstall, err)
	}
}
