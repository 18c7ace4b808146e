package mesosconv

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestPrincipals: new reservations and volumes carry the converter's
// principal; operations on a reservation an offer showed name it as it
// was offered, so that a reservation made without a principal (by an
// older scheduler, on a master without authentication) is still
// launched on, destroyed and unreserved.
func TestPrincipals(t *testing.T) {
	c := Converter{Framework: "sluice", Role: "sluice", Principal: "sluice-principal", FrameworkID: "fw",
		Build: func(_ plan.Op, _ string, res mesos.Resources) mesos.TaskInfo { return mesos.TaskInfo{Resources: res} }}
	old := Converter{Framework: "sluice", Role: "sluice"} // no principal
	oldOp := plan.Op{Pod: "node-0", ReservationID: "node-0.r1", Resources: plan.Resources{CPUs: 1, MemMB: 128}}
	oldVol := &plan.Volume{ID: "node-0.r1.vol", ContainerPath: "wal", SizeMB: 256}
	offered := append(scalars(oldOp.Resources, ptr(old.reservation(oldOp)), nil), old.volume(oldOp, oldVol))
	c.Offer(mesos.Offer{ID: mesos.OfferID{Value: "o1"}, AgentID: mesos.AgentID{Value: "a1"}, Resources: offered})

	principals := func(op plan.Op) (res, vol []string) {
		t.Helper()
		for _, r := range acceptedResources(t, c, op) {
			res = append(res, r.Reservations[len(r.Reservations)-1].GetPrincipal())
			if p := r.GetDisk().GetPersistence(); p != nil {
				vol = append(vol, p.GetPrincipal())
			}
		}
		return res, vol
	}
	check := func(what string, op plan.Op, want string, wantVols int) {
		t.Helper()
		res, vol := principals(op)
		if len(vol) != wantVols {
			t.Fatalf("%s: %d volumes, want %d", what, len(vol), wantVols)
		}
		for _, p := range append(res, vol...) {
			if p != want {
				t.Fatalf("%s: principals %q of reservations and %q of volumes, want %q", what, res, vol, want)
			}
		}
	}

	newOp := plan.Op{Pod: "node-1", ReservationID: "node-1.r2", Resources: plan.Resources{CPUs: 1, MemMB: 128, DiskMB: 256}}
	newVol := &plan.Volume{ID: "node-1.r2.vol", ContainerPath: "wal", SizeMB: 256}
	check("RESERVE", withKind(newOp, plan.OpReserve, nil), "sluice-principal", 0)
	check("CREATE", withKind(newOp, plan.OpCreate, newVol), "sluice-principal", 1)
	launch := withKind(newOp, plan.OpLaunch, newVol)
	launch.Resources.DiskMB = 0 // the volume is the disk
	check("LAUNCH on a new reservation", launch, "sluice-principal", 1)

	check("LAUNCH on an old reservation", withKind(oldOp, plan.OpLaunch, oldVol), "", 1)
	check("DESTROY of an old volume", withKind(oldOp, plan.OpDestroy, oldVol), "", 1)
	unres := withKind(oldOp, plan.OpUnreserve, nil)
	unres.Resources.DiskMB = oldVol.SizeMB
	check("UNRESERVE of an old reservation", unres, "", 0)
}

func withKind(op plan.Op, k plan.OpKind, v *plan.Volume) plan.Op {
	op.Kind, op.Volume = k, v
	if k == plan.OpLaunch {
		op.TaskID = op.Pod + "__1"
	}
	return op
}

func ptr[T any](v T) *T { return &v }
