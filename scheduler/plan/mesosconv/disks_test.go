package mesosconv

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

var (
	pathDisk  = mesostest.AgentDisk{Type: mesos.Resource_DiskInfo_Source_PATH, Root: "/srv/path0", SizeMB: 2000}
	mountDisk = mesostest.AgentDisk{Type: mesos.Resource_DiskInfo_Source_MOUNT, Root: "/mnt/disk0", SizeMB: 3000}
)

func diskSpec(typ plan.DiskType) plan.Spec {
	return plan.Spec{
		Framework: "sluice", Role: "sluice", Nodes: 1,
		Node:         plan.Resources{CPUs: 0.5, MemMB: 128, DiskMB: 256},
		NodeDiskType: typ,
		Timing:       plan.Timing{ShortRefuse: 100 * time.Millisecond},
	}
}

// TestNodeDiskTypes deploys a node on each disk type, on an agent that
// has all three, and removes it again: the volume is on the disk of the
// type asked for (a MOUNT disk whole), and the master accepts every
// RESERVE, CREATE, LAUNCH, DESTROY and UNRESERVE.
func TestNodeDiskTypes(t *testing.T) {
	for _, tc := range []struct {
		typ      plan.DiskType
		wantSrc  mesos.Resource_DiskInfo_Source_Type // 0 (UNKNOWN): no Source
		wantRoot string
		wantSize float64
	}{
		{plan.DiskRoot, 0, "", 256},
		{plan.DiskPath, mesos.Resource_DiskInfo_Source_PATH, pathDisk.Root, 256},
		{plan.DiskMount, mesos.Resource_DiskInfo_Source_MOUNT, mountDisk.Root, mountDisk.SizeMB},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond})
			if err := m.AddAgent(mesostest.AgentSpec{ID: "a1", CPUs: 2, MemMB: 2048, DiskMB: 4096, Disks: []mesostest.AgentDisk{pathDisk, mountDisk}}); err != nil {
				t.Fatal(err)
			}
			p := plan.New(diskSpec(tc.typ))
			d := newDriver(t, m, p)
			d.until("deployed", func() bool { return p.Progress().Status == plan.Complete })

			av, err := m.Agent("a1")
			if err != nil {
				t.Fatal(err)
			}
			if len(av.Volumes) != 1 {
				t.Fatalf("volumes %+v", av.Volumes)
			}
			vol := av.Volumes[0].Resource
			src := vol.GetDisk().GetSource()
			root := src.GetPath().GetRoot() + src.GetMount().GetRoot()
			if src.GetType() != tc.wantSrc || root != tc.wantRoot || vol.GetScalar().GetValue() != tc.wantSize {
				t.Fatalf("volume on %v %q of %g MB, want %v %q of %g MB", src.GetType(), root, vol.GetScalar().GetValue(), tc.wantSrc, tc.wantRoot, tc.wantSize)
			}
			node, _ := p.Pod("node-0")
			tv, ok := m.Task(node.TaskID)
			if !ok {
				t.Fatalf("no task %s", node.TaskID)
			}
			var onVolume bool
			for _, r := range tv.Resources {
				if r.IsPersistentVolume() {
					onVolume = r.GetDisk().GetSource().GetType() == tc.wantSrc && r.GetScalar().GetValue() == tc.wantSize
				}
			}
			if !onVolume {
				t.Fatalf("task resources %v: want the volume on %v", tv.Resources, tc.wantSrc)
			}

			// Scale to no node: DESTROY and UNRESERVE give the disk back.
			d.do(p.SetCounts(0, 0))
			d.until("node removed", func() bool {
				av, _ := m.Agent("a1")
				return len(av.Reserved) == 0
			})
			if errs := m.OperationErrors(); len(errs) != 0 {
				t.Fatalf("the master refused operations: %v", errs)
			}
		})
	}
}

// TestMountDiskTooSmall: an agent whose only MOUNT disk is smaller than
// the ask is declined, however much root disk it has; a node goes to
// the agent with a MOUNT disk big enough, and takes all of it.
func TestMountDiskTooSmall(t *testing.T) {
	m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond})
	small := mesostest.AgentDisk{Type: mesos.Resource_DiskInfo_Source_MOUNT, Root: "/mnt/small", SizeMB: 100}
	if err := m.AddAgent(mesostest.AgentSpec{ID: "a1", CPUs: 2, MemMB: 2048, DiskMB: 4096, Disks: []mesostest.AgentDisk{small}}); err != nil {
		t.Fatal(err)
	}
	p := plan.New(diskSpec(plan.DiskMount))
	d := newDriver(t, m, p)
	d.until("a1 declined", func() bool { return d.declined["a1"] > 0 })
	if node, _ := p.Pod("node-0"); node.AgentID != "" {
		t.Fatalf("node-0 placed on %s", node.AgentID)
	}
	if av, _ := m.Agent("a1"); len(av.Reserved) != 0 {
		t.Fatalf("a1 reserved %v", av.Reserved)
	}

	if err := m.AddAgent(mesostest.AgentSpec{ID: "a2", CPUs: 2, MemMB: 2048, Disks: []mesostest.AgentDisk{mountDisk}}); err != nil {
		t.Fatal(err)
	}
	d.until("deployed", func() bool { return p.Progress().Status == plan.Complete })
	node, _ := p.Pod("node-0")
	if node.AgentID != "a2" || node.Volume.SizeMB != mountDisk.SizeMB || node.Volume.Source == nil || *node.Volume.Source != (plan.DiskSource{Type: plan.DiskMount, Root: mountDisk.Root}) {
		t.Fatalf("node-0 %+v, volume %+v", node, node.Volume)
	}
	if errs := m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}
