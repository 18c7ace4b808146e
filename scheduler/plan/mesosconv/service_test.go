package mesosconv

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// acceptedResources returns the resources of the first operation of the
// ACCEPT that c makes of op on offer o1.
func acceptedResources(t *testing.T, c Converter, op plan.Op) []mesos.Resource {
	t.Helper()
	call, err := c.Call(plan.Decision{Kind: plan.Accept, OfferIDs: []string{"o1"}, AgentID: "a1", Ops: []plan.Op{op}})
	if err != nil {
		t.Fatal(err)
	}
	mop := call.Accept.Operations[0]
	switch {
	case mop.Reserve != nil:
		return mop.Reserve.Resources
	case mop.Unreserve != nil:
		return mop.Unreserve.Resources
	case mop.Create != nil:
		return mop.Create.Volumes
	case mop.Destroy != nil:
		return mop.Destroy.Volumes
	case mop.Launch != nil:
		return mop.Launch.TaskInfos[0].Resources
	}
	return nil
}

// labelsOf returns the reservation labels of the resources of an
// ACCEPT's first operation.
func labelsOf(t *testing.T, c Converter, op plan.Op) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, r := range acceptedResources(t, c, op) {
		out = append(out, reservationLabels(r))
	}
	return out
}

// TestServiceLabel: new reservations carry the service id label;
// operations on a reservation made before it existed name it without
// the label, as offered; an offer's reservation with another service's
// label is not the framework's, even with the same name and id.
func TestServiceLabel(t *testing.T) {
	build := func(_ plan.Op, _ string, res mesos.Resources) mesos.TaskInfo { return mesos.TaskInfo{Resources: res} }
	c := Converter{Framework: "sluice", ServiceID: "aaaaaaaa00000001", Role: "sluice-role", FrameworkID: "fw", Build: build}
	newOp := plan.Op{Kind: plan.OpReserve, Pod: "node-1", ReservationID: "aaaaaaaa00000001.node-1.r2", Resources: plan.Resources{CPUs: 1, MemMB: 128}}
	for _, ls := range labelsOf(t, c, newOp) {
		if ls[plan.LabelService] != "aaaaaaaa00000001" || ls[plan.LabelFramework] != "sluice" {
			t.Fatalf("new reservation's labels: %v", ls)
		}
	}

	old := Converter{Framework: "sluice", Role: "sluice-role"} // before service ids
	oldOp := plan.Op{Pod: "node-0", ReservationID: "node-0.r1", Resources: plan.Resources{CPUs: 1, MemMB: 128}}
	other := Converter{Framework: "sluice", ServiceID: "bbbbbbbb00000002", Role: "sluice-role"}
	otherOp := plan.Op{Pod: "node-0", ReservationID: "node-0.r9", Resources: plan.Resources{CPUs: 1, MemMB: 64}}
	offered := append(scalars(oldOp.Resources, ptr(old.reservation(oldOp)), nil), scalars(otherOp.Resources, ptr(other.reservation(otherOp)), nil)...)
	po := c.Offer(mesos.Offer{ID: mesos.OfferID{Value: "o1"}, AgentID: mesos.AgentID{Value: "a1"}, Resources: offered})
	if len(po.Reservations) != 2 {
		t.Fatalf("offer: %+v", po.Reservations)
	}
	for _, r := range po.Reservations {
		if r.ReservationID == "node-0.r9" && r.Service != "bbbbbbbb00000002" || r.ReservationID == "node-0.r1" && r.Service != "" {
			t.Fatalf("offered reservation %s with service %q", r.ReservationID, r.Service)
		}
	}
	if _, ok := c.offered["node-0.r9"]; ok {
		t.Fatal("the converter took another service's reservation for its own")
	}
	for _, k := range []plan.OpKind{plan.OpUnreserve, plan.OpLaunch} {
		op := oldOp
		op.Kind = k
		op.TaskID = "node-0__2"
		for _, ls := range labelsOf(t, c, op) {
			if _, has := ls[plan.LabelService]; has || ls[plan.LabelReservation] != "node-0.r1" {
				t.Fatalf("%s of an old reservation names it with labels %v", k, ls)
			}
		}
	}
}
