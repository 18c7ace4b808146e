package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-streams/sluice/scheduler"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestSchedulerPlacementFlags: each --KIND-placement reaches the plan's
// spec for its kind; none given leaves every kind unconstrained; a
// constraint the plan cannot parse stops the scheduler at start with
// ErrConfig naming the kind.
func TestSchedulerPlacementFlags(t *testing.T) {
	t.Setenv(scheduler.S3CredentialsEnv, "")
	if d := mustParseScheduler(t); len(d.Spec.Placement) != 0 {
		t.Fatalf("defaults: %v", d.Spec.Placement)
	}
	c := mustParseScheduler(t, "--controller-placement", "hostname:UNIQUE", "--node-placement", `[["@zone","GROUP_BY","3"]]`,
		"--hdfs-head-placement", "rack:LIKE:r[12]", "--nfs-head-placement", "@region:IS:eu", "--s3-head-placement", "hostname:MAX_PER:2")
	want := map[plan.PodKind]string{plan.Controller: "hostname:UNIQUE", plan.Node: `[["@zone","GROUP_BY","3"]]`,
		plan.HDFSHead: "rack:LIKE:r[12]", plan.NFSHead: "@region:IS:eu", plan.S3Head: "hostname:MAX_PER:2"}
	if fmt.Sprint(c.Spec.Placement) != fmt.Sprint(want) {
		t.Fatalf("placement %v, want %v", c.Spec.Placement, want)
	}
	bad := mustParseScheduler(t, "--node-placement", "@zone:SPREAD")
	if _, err := scheduler.New(bad); !errors.Is(err, scheduler.ErrConfig) || !errors.Is(err, plan.ErrPlacement) {
		t.Fatalf("bad constraint: %v", err)
	}
}
