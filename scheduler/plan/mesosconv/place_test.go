package mesosconv

import (
	"fmt"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// TestOfferPlace: an offer's unreserved ports, text and scalar
// attributes and fault domain reach the plan; an agent of another
// region than the master's is Remote.
func TestOfferPlace(t *testing.T) {
	rt, text, scalar := mesos.RANGES, mesos.TEXT, mesos.SCALAR
	o := mesos.Offer{
		ID: mesos.OfferID{Value: "o1"}, AgentID: mesos.AgentID{Value: "a1"}, Hostname: "h1",
		Resources: mesos.Resources{
			{Name: "ports", Type: &rt, Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 31005}, {Begin: 9090, End: 9090}}}},
		},
		Attributes: []mesos.Attribute{
			{Name: "rack", Type: text, Text: &mesos.Value_Text{Value: "r7"}},
			{Name: "ssd", Type: scalar, Scalar: &mesos.Value_Scalar{Value: 2}},
			{Name: "span", Type: rt, Ranges: &mesos.Value_Ranges{}},
		},
		Domain: &mesos.DomainInfo{FaultDomain: &mesos.DomainInfo_FaultDomain{
			Region: mesos.DomainInfo_FaultDomain_RegionInfo{Name: "eu"},
			Zone:   mesos.DomainInfo_FaultDomain_ZoneInfo{Name: "eu-1"},
		}},
	}
	for _, tc := range []struct {
		master string
		remote bool
	}{{"", false}, {"eu", false}, {"us", true}} {
		c := Converter{Framework: "sluice", Role: "sluice", Region: tc.master}
		got := c.Offer(o)
		if fmt.Sprint(got.Ports) != "[{31000 31005} {9090 9090}]" || got.Region != "eu" || got.Zone != "eu-1" ||
			fmt.Sprint(got.Attributes) != "map[rack:r7 ssd:2]" || got.Remote != tc.remote {
			t.Fatalf("master region %q: %+v", tc.master, got)
		}
	}
}

// TestLaunchPorts: a LAUNCH's ports are one unreserved "ports"
// resource with exactly those ports.
func TestLaunchPorts(t *testing.T) {
	c := Converter{Framework: "sluice", Role: "sluice", FrameworkID: "fw",
		Build: func(_ plan.Op, _ string, res mesos.Resources) mesos.TaskInfo { return mesos.TaskInfo{Resources: res} }}
	call, err := c.Call(plan.Decision{Kind: plan.Accept, OfferIDs: []string{"o1"}, AgentID: "a1", Ops: []plan.Op{
		{Kind: plan.OpLaunch, Pod: "hdfs-head-0", TaskID: "t", Resources: plan.Resources{CPUs: 1, MemMB: 64}, Ports: []int{31002, 8020, 31001}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var ports []mesos.Resource
	for _, r := range call.Accept.Operations[0].Launch.TaskInfos[0].Resources {
		if r.Name == "ports" {
			ports = append(ports, r)
		}
	}
	if len(ports) != 1 || !ports[0].IsUnreserved() || fmt.Sprint(ports[0].GetRanges().GetRange()) != "[{8020 8020} {31001 31002}]" {
		t.Fatalf("ports %v", ports)
	}
}

// TestReservedPorts: a RESERVE's ports are reserved with the rest and
// labelled; the offer shows them in the reservation; a LAUNCH on them
// names them reserved, an UNRESERVE gives them back.
func TestReservedPorts(t *testing.T) {
	c := Converter{Framework: "sluice", Role: "sluice", FrameworkID: "fw",
		Build: func(_ plan.Op, _ string, res mesos.Resources) mesos.TaskInfo { return mesos.TaskInfo{Resources: res} }}
	ops := []plan.Op{
		{Kind: plan.OpReserve, Pod: "node-0", ReservationID: "node-0.r1", Resources: plan.Resources{CPUs: 1, MemMB: 64, DiskMB: 10}, Ports: []int{7000}},
		{Kind: plan.OpLaunch, Pod: "node-0", ReservationID: "node-0.r1", TaskID: "t", Resources: plan.Resources{CPUs: 1, MemMB: 64}, Ports: []int{7000}, ReservedPorts: true},
		{Kind: plan.OpUnreserve, Pod: "node-0", ReservationID: "node-0.r1", Resources: plan.Resources{CPUs: 1, MemMB: 64, DiskMB: 10}, Ports: []int{7000}},
	}
	call, err := c.Call(plan.Decision{Kind: plan.Accept, OfferIDs: []string{"o1"}, AgentID: "a1", Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	mops := call.Accept.Operations
	for i, rs := range []mesos.Resources{mops[0].Reserve.Resources, mops[1].Launch.TaskInfos[0].Resources, mops[2].Unreserve.Resources} {
		var ports []mesos.Resource
		for _, r := range rs {
			if r.Name == "ports" {
				ports = append(ports, r)
			}
		}
		if len(ports) != 1 || reservationLabels(ports[0])[plan.LabelReservation] != "node-0.r1" || ports[0].ReservationRole() != "sluice" {
			t.Fatalf("op %d: ports %v", i, ports)
		}
	}
	got := Offer(mesos.Offer{ID: mesos.OfferID{Value: "o2"}, AgentID: mesos.AgentID{Value: "a1"}, Resources: mops[0].Reserve.Resources}, "sluice", "sluice")
	if len(got.Reservations) != 1 || fmt.Sprint(got.Reservations[0].Ports) != "[{7000 7000}]" || len(got.Ports) != 0 {
		t.Fatalf("offer %+v", got)
	}
}
