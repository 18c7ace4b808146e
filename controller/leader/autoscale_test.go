package leader_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/cluster/sessiontest"
)

// autoScaler is a Resumer that is also an AutoScaler, counting its steps.
type autoScaler struct {
	resumer
	steps atomic.Int64
}

func (a *autoScaler) AutoScaleStep(context.Context) error { a.steps.Add(1); return nil }
func (a *autoScaler) AutoScaleInterval() time.Duration    { return 10 * time.Millisecond }

// TestOnlyTheLeaderAutoScales: the auto-scaling loop runs on the leader
// alone; when its session expires it stops there and runs on the new
// leader.
func TestOnlyTheLeaderAutoScales(t *testing.T) {
	srv := sessiontest.NewServer(t)
	o := newOpener(srv)
	s1 := srv.Open()
	var a1, a2 autoScaler
	c1 := startOn(t, s1, o, "c1", &a1)
	waitFor(t, "c1 leads and auto-scales", func() bool { return c1.IsLeader() && a1.steps.Load() > 2 })
	c2 := startOn(t, srv.Open(), o, "c2", &a2)
	at := a1.steps.Load()
	waitFor(t, "c1 auto-scales on", func() bool { return a1.steps.Load() > at+2 })
	if c2.IsLeader() || a2.steps.Load() != 0 {
		t.Fatalf("the follower auto-scaled %d times", a2.steps.Load())
	}

	s1.Expire()
	waitFor(t, "c2 leads and auto-scales", func() bool { return c2.IsLeader() && a2.steps.Load() > 2 })
	if c1.IsLeader() {
		t.Fatal("c1 still leads")
	}
	// c1 has stopped: its count no longer moves while c2's does (but for
	// a step that may have begun as its leadership ended).
	stopped := a1.steps.Load()
	at = a2.steps.Load()
	waitFor(t, "c2 auto-scales on", func() bool { return a2.steps.Load() > at+5 })
	if n := a1.steps.Load(); n > stopped+1 {
		t.Fatalf("the old leader went on auto-scaling: %d steps, %d when it lost its session", n, stopped)
	}
}
