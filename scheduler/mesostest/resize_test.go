package mesostest

import (
	"fmt"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// reservedCPUs lists the agent's reserved cpus resources, each as
// "<pod label>=<value>", in the agent's order.
func reservedCPUs(t *testing.T, m *Master, agent string) string {
	t.Helper()
	av, err := m.Agent(agent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range av.Reserved {
		if r.Name != "cpus" {
			continue
		}
		pod := ""
		for _, l := range r.Reservations[len(r.Reservations)-1].GetLabels().GetLabels() {
			if l.Key == "pod" {
				pod = l.GetValue()
			}
		}
		out = append(out, fmt.Sprintf("%s=%g", pod, r.GetScalar().GetValue()))
	}
	return strings.Join(out, " ")
}

// TestResizeReservation: as in Mesos (src/common/resources.cpp: two
// resources are added into one only when their reservation stacks,
// labels included, are equal; a part of a resource may be subtracted),
// a RESERVE with the same labels grows a reservation into one resource,
// one with other labels stays apart, an UNRESERVE of part of it leaves
// the rest reserved, and an UNRESERVE of more than is reserved is
// refused.
func TestResizeReservation(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 100}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	accept := func(ops ...mesos.Offer_Operation) {
		t.Helper()
		o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
		s.call(calls.Accept(calls.OfferOperations(ops).WithOffers(o.ID)))
	}
	accept(calls.OpReserve(reserve(scalar("cpus", 1), "node-0")))
	accept(calls.OpReserve(reserve(scalar("cpus", 0.5), "node-0")), calls.OpReserve(reserve(scalar("cpus", 0.25), "node-1")))
	if got := reservedCPUs(t, m, "a1"); got != "node-0=1.5 node-1=0.25" {
		t.Fatalf("reserved cpus %q after growing node-0's reservation", got)
	}
	accept(calls.OpUnreserve(reserve(scalar("cpus", 1), "node-0")))
	if got := reservedCPUs(t, m, "a1"); got != "node-0=0.5 node-1=0.25" {
		t.Fatalf("reserved cpus %q after shrinking node-0's reservation", got)
	}
	if errs := m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("operation errors %v", errs)
	}
	accept(calls.OpUnreserve(reserve(scalar("cpus", 1), "node-0")))
	if errs := strings.Join(m.OperationErrors(), "\n"); !strings.Contains(errs, "UNRESERVE") {
		t.Fatalf("operation errors %q: want the UNRESERVE of more than is reserved refused", errs)
	}
	if got := reservedCPUs(t, m, "a1"); got != "node-0=0.5 node-1=0.25" {
		t.Fatalf("reserved cpus %q after a refused UNRESERVE", got)
	}
}
