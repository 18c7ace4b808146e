package membership_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sluice-streams/sluice/cluster/layout"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// TestHandOverSurvivesTheOwnerFailing: a node asked to move a container
// fails to write the hand-over (tier 2 refuses the rename), keeps the
// container frozen, is restarted, hosts it again and releases it; the
// target then builds it from the hand-over with every event and every
// writer's event number.
func TestHandOverSurvivesTheOwnerFailing(t *testing.T) {
	c := newCluster(t)
	store := tier2test.NewFaulty(tier2test.NewMem())
	dirA := t.TempDir()
	a := c.startWith("a", dirA, store)
	b := c.startWith("b", t.TempDir(), store)
	m := layout.New(containers)
	m.Containers[1] = layout.Owner{Node: "a", Epoch: 1}
	c.publish(m)
	waitFor(t, "a to host container 1", func() bool { return hostsAt(a.node, 1, 1) })
	seg := segmentIn(t, "ho", 1)
	ca := dial(t, a.addr)
	if err := ca.CreateSegment(t.Context(), seg); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 20; i++ {
		if err := appendEvent(t, ca, seg, "w", i, "event"); err != nil {
			t.Fatal(err)
		}
	}
	want := readAll(t, ca, seg)

	// (The storage writer renames its recovery records too: count only
	// the hand-over's renames.)
	var tried atomic.Bool
	store.Arm(tier2test.OpRename, tier2test.Fault{Match: func(p string) bool {
		if strings.Contains(p, "_sluice/handover") {
			tried.Store(true)
			return true
		}
		return false
	}})
	m.Containers[1].MoveTo = "b"
	c.publish(m)
	waitFor(t, "a's first attempt to fail", tried.Load)
	if err := appendEvent(t, ca, seg, "w", 21, "refused"); !errors.Is(err, protocol.ErrWrongHost) {
		t.Fatalf("append while the container is being handed over: %v, want ErrWrongHost", err)
	}

	a.stop()
	store.DisarmAll()
	a = c.startWith("a", dirA, store)
	key := layout.HandoverKey + "/1"
	waitFor(t, "a to confirm the release after its restart", func() bool {
		kv, err := c.leader.Get(t.Context(), key)
		var r layout.Released
		return err == nil && json.Unmarshal(kv.Value, &r) == nil && r.Epoch == 1
	})
	if hostsAt(a.node, 1, 1) {
		t.Fatal("a still hosts the released container")
	}

	// The leader's step: b owns it under epoch 2, from the hand-over of 1.
	m.Containers[1] = layout.Owner{Node: "b", Epoch: 2, From: 1}
	c.publish(m)
	waitFor(t, "b to host container 1 under epoch 2", func() bool { return hostsAt(b.node, 1, 2) })
	cb := dial(t, b.addr)
	if got := readAll(t, cb, seg); !bytes.Equal(got, want) {
		t.Fatalf("b reads %d bytes, a held %d", len(got), len(want))
	}
	last, err := cb.SetupAppend(t.Context(), "w", seg)
	if err != nil || last != 20 {
		t.Fatalf("writer w on b: last event %d, %v; want 20", last, err)
	}
	if err := appendEvent(t, cb, seg, "w", 21, "after the move"); err != nil {
		t.Fatal(err)
	}
}
