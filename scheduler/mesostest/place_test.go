package mesostest

import (
	"errors"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// TestAgentPlace: offers carry the agent's attributes and fault domain;
// SUBSCRIBED carries the master's domain; an agent of a remote region is
// offered only to a REGION_AWARE framework (Mesos' allocator,
// isCapableOfReceivingAgent); a domain needs both region and zone, and
// a master with a domain.
func TestAgentPlace(t *testing.T) {
	bare := NewMaster(t, Options{})
	if err := bare.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64, Region: "eu", Zone: "eu-1"}); !errors.Is(err, errDomain) {
		t.Fatalf("agent with a domain, master without: %v", err)
	}
	for _, regionAware := range []bool{false, true} {
		m := NewMaster(t, Options{Region: "eu", Zone: "eu-1"})
		if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 64, Region: "eu"}); !errors.Is(err, errDomain) {
			t.Fatalf("region without zone: %v", err)
		}
		for _, a := range []AgentSpec{
			{ID: "near", CPUs: 1, MemMB: 64, Region: "eu", Zone: "eu-2", Attributes: map[string]string{"rack": "r1", "disk": "ssd"}},
			{ID: "far", CPUs: 1, MemMB: 64, Region: "us", Zone: "us-1"},
			{ID: "plain", CPUs: 1, MemMB: 64},
		} {
			if err := m.AddAgent(a); err != nil {
				t.Fatal(err)
			}
		}
		info := &mesos.FrameworkInfo{User: "u", Name: "place", Role: strPtr("sluice")}
		if regionAware {
			info.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_REGION_AWARE}}
		}
		s := subscribeWith(t, m, info)
		offered := map[string]mesos.Offer{}
		want := map[bool]int{false: 2, true: 3}[regionAware]
		s.next(func(e *scheduler.Event) bool {
			if e.Type == scheduler.Event_OFFERS {
				for _, o := range e.Offers.Offers {
					offered[o.AgentID.Value] = o
				}
			}
			return len(offered) >= want
		})
		// Every agent is offered in the one allocation pass that follows
		// SUBSCRIBE: what is outstanding now is all there is.
		if got := len(m.Offers()); got != want {
			t.Fatalf("region aware %v: %d offers outstanding, want %d", regionAware, got, want)
		}
		if _, ok := offered["far"]; ok != regionAware {
			t.Fatalf("region aware %v: remote agent offered %v", regionAware, ok)
		}
		near := offered["near"]
		fd := near.GetDomain().GetFaultDomain()
		if fd == nil || fd.Region.Name != "eu" || fd.Zone.Name != "eu-2" || len(near.Attributes) != 2 ||
			near.Attributes[0].Name != "disk" || near.Attributes[0].GetText().GetValue() != "ssd" || near.Attributes[1].GetText().GetValue() != "r1" {
			t.Fatalf("near offer: domain %+v attributes %+v", fd, near.Attributes)
		}
		if p := offered["plain"]; p.Domain != nil || len(p.Attributes) != 0 {
			t.Fatalf("plain offer: %+v %+v", p.Domain, p.Attributes)
		}
	}
}

// TestSubscribedMasterDomain: SUBSCRIBED's master_info names the
// master's region, what a framework tells remote agents by.
func TestSubscribedMasterDomain(t *testing.T) {
	m := NewMaster(t, Options{Region: "eu", Zone: "eu-1"})
	caller := httpsched.NewCaller(httpcli.New(httpcli.Endpoint(m.URL())))
	resp, err := caller.Call(ctx(t), calls.Subscribe(&mesos.FrameworkInfo{User: "u", Name: "d", Role: strPtr("sluice")}))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	var ev scheduler.Event
	if err := resp.Decode(&ev); err != nil || ev.Type != scheduler.Event_SUBSCRIBED {
		t.Fatalf("first event %v: %v", ev.Type, err)
	}
	mi := ev.Subscribed.GetMasterInfo()
	if mi == nil || mi.GetDomain().GetFaultDomain().GetRegion().Name != "eu" || mi.GetPort() == 0 {
		t.Fatalf("master_info %+v", mi)
	}
}

// TestLaunchChecks: Mesos' task and executor validation. A task with no
// resources and one whose executor's resources do not fit the offer
// beside it are TASK_ERROR; an executor below Mesos' minimum (0.01 cpus,
// 32 MB) runs, with the warning a real master logs.
func TestLaunchChecks(t *testing.T) {
	m := NewMaster(t, Options{})
	if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 1, MemMB: 256}); err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
	launch := func(ti mesos.TaskInfo) {
		o := s.nextOffer(func(o mesos.Offer) bool { return true })
		s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)).With(calls.RefuseSeconds(0)))
	}
	none := executorTask("none", "a1", nil, "")
	launch(none)
	if st := s.update("none", mesos.TASK_ERROR); !strings.Contains(st.GetMessage(), "Task uses no resources") {
		t.Fatalf("no resources: %q", st.GetMessage())
	}
	big := executorTask("big", "a1", mesos.Resources{scalar("cpus", 0.5), scalar("mem", 128)}, "")
	big.Executor.Resources = mesos.Resources{scalar("cpus", 0.6), scalar("mem", 32)} // 1.1 cpus in all
	launch(big)
	if st := s.update("big", mesos.TASK_ERROR); !strings.Contains(st.GetMessage(), "more resources than offered") {
		t.Fatalf("executor beyond the offer: %q", st.GetMessage())
	}
	if len(m.Warnings()) != 0 {
		t.Fatalf("warnings before any executor ran: %v", m.Warnings())
	}
	thin := executorTask("thin", "a1", mesos.Resources{scalar("cpus", 0.5), scalar("mem", 128)}, "")
	thin.Executor.Resources = mesos.Resources{scalar("cpus", 0.005), scalar("mem", 16)}
	launch(thin)
	s.update("thin", mesos.TASK_RUNNING)
	w := m.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], "less CPUs (0.005)") || !strings.Contains(w[1], "less memory (16 MB)") {
		t.Fatalf("warnings %q", w)
	}
	ex := m.Executors()
	if len(ex) != 1 || ex[0].ID != "exec-thin" || len(ex[0].Resources) != 2 {
		t.Fatalf("executors %+v", ex)
	}
}
