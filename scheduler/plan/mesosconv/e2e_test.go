package mesosconv

import (
	"context"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/sluice-streams/sluice/scheduler/mesostest"
	"github.com/sluice-streams/sluice/scheduler/plan"
)

// driver is the smallest driver that can run the plan against the fake
// master: events from the stream go to the plan, decisions become
// calls. DRAIN is confirmed at once.
type driver struct {
	t      *testing.T
	m      *mesostest.Master
	p      *plan.Plan
	conv   Converter
	caller calls.Caller
	events chan *scheduler.Event
	drains []string
	rebal  [][]string
	// declined counts the offers the plan declined, by agent.
	declined   map[string]int
	offerAgent map[string]string // offer id -> agent id
}

func newDriver(t *testing.T, m *mesostest.Master, p *plan.Plan) *driver {
	d := &driver{t: t, m: m, p: p, events: make(chan *scheduler.Event, 1024), declined: map[string]int{}, offerAgent: map[string]string{}}
	d.conv = Converter{Framework: "sluice", Role: "sluice", Principal: "sluice-principal", Build: func(op plan.Op, agentID string, res mesos.Resources) mesos.TaskInfo {
		sh := true
		cmd := "sleep 600"
		return mesos.TaskInfo{Resources: res, Command: &mesos.CommandInfo{Shell: &sh, Value: &cmd}}
	}}
	d.caller = httpsched.NewCaller(httpcli.New(httpcli.Endpoint(m.URL())))
	role, principal := "sluice", "sluice-principal" // the fake master checks reservations' and volumes' principals
	resp, err := d.caller.Call(context.Background(), calls.Subscribe(&mesos.FrameworkInfo{User: "sluice", Name: "sluice", Role: &role, Principal: &principal}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Close() })
	go func() {
		defer close(d.events)
		for {
			ev := new(scheduler.Event)
			if err := resp.Decode(ev); err != nil {
				return
			}
			d.events <- ev
		}
	}()
	return d
}

func (d *driver) do(ds []plan.Decision) {
	d.t.Helper()
	for _, dec := range ds {
		switch dec.Kind {
		case plan.Drain:
			d.drains = append(d.drains, dec.Pod)
			d.do(d.p.OnDrained(dec.Pod))
			continue
		case plan.Rebalance:
			d.rebal = append(d.rebal, dec.Pods)
			continue
		case plan.Decline:
			for _, id := range dec.OfferIDs {
				d.declined[d.offerAgent[id]]++
			}
		}
		call, err := d.conv.Call(dec)
		if err != nil {
			d.t.Fatal(err)
		}
		resp, err := d.caller.Call(context.Background(), call)
		if resp != nil {
			resp.Close()
		}
		if err != nil {
			d.t.Fatalf("%v: %v", dec, err)
		}
	}
}

// until feeds events to the plan until cond holds (checked after each
// event), for at most 20 s.
func (d *driver) until(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case ev, ok := <-d.events:
			if !ok {
				d.t.Fatal("event stream ended")
			}
			d.handle(ev)
		case <-deadline.C:
			d.t.Fatalf("%s: not within 20s; progress %+v; operation errors %v", what, d.p.Progress(), d.m.OperationErrors())
		}
	}
}

func (d *driver) handle(ev *scheduler.Event) {
	switch ev.Type {
	case scheduler.Event_SUBSCRIBED:
		d.conv.FrameworkID = ev.Subscribed.FrameworkID.Value
		d.do(d.p.Start(time.Now()))
	case scheduler.Event_OFFERS:
		var os []plan.Offer
		for _, o := range ev.Offers.Offers {
			d.offerAgent[o.ID.Value] = o.AgentID.Value
			os = append(os, d.conv.Offer(o))
		}
		d.do(d.p.OnOffers(os))
	case scheduler.Event_RESCIND:
		d.p.OnRescind(ev.Rescind.OfferID.Value)
	case scheduler.Event_UPDATE:
		st := ev.Update.Status
		if len(st.UUID) > 0 {
			defer func() { // acknowledge once the plan has seen it
				resp, err := d.caller.Call(context.Background(), calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID).With(calls.Framework(d.conv.FrameworkID)))
				if resp != nil {
					resp.Close()
				}
				if err != nil {
					d.t.Fatal(err)
				}
			}()
		}
		d.do(d.p.OnStatus(Status(st)))
	case scheduler.Event_FAILURE:
		if a := ev.Failure.GetAgentID(); a != nil && ev.Failure.ExecutorID == nil {
			d.do(d.p.OnAgentLost(a.Value))
		}
	}
}

func running(p *plan.Plan, pod string) func() bool {
	return func() bool { pd, ok := p.Pod(pod); return ok && pd.State == plan.TaskRunning }
}

// TestPlanOnFakeMaster runs the plan through the protobuf conversion
// against the fake master: deploy, relaunch in place, agent loss and
// return, scale down (drain, kill, destroy, unreserve) and scale up.
func TestPlanOnFakeMaster(t *testing.T) {
	m := mesostest.NewMaster(t, mesostest.Options{AllocationInterval: 20 * time.Millisecond})
	for _, id := range []string{"a1", "a2", "a3"} {
		if err := m.AddAgent(mesostest.AgentSpec{ID: id, CPUs: 2, MemMB: 2048, DiskMB: 4096}); err != nil {
			t.Fatal(err)
		}
	}
	p := plan.New(plan.Spec{
		Framework: "sluice", Role: "sluice", Controllers: 1, Nodes: 2,
		Controller: plan.Resources{CPUs: 0.5, MemMB: 128},
		Node:       plan.Resources{CPUs: 0.5, MemMB: 128, DiskMB: 256},
		Timing:     plan.Timing{ShortRefuse: 100 * time.Millisecond},
	})
	d := newDriver(t, m, p)
	d.until("deployed", func() bool { return p.Progress().Status == plan.Complete })

	node0, _ := p.Pod("node-0")
	av, err := m.Agent(node0.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(av.Volumes) != 1 || av.Volumes[0].PersistenceID != node0.Volume.ID || av.Volumes[0].ContainerPath != "wal" {
		t.Fatalf("node-0's agent volumes %+v, pod %+v", av.Volumes, node0)
	}

	// Relaunch in place after a crash.
	if err := m.FailTask(node0.TaskID); err != nil {
		t.Fatal(err)
	}
	d.until("node-0 relaunched", func() bool {
		pd, _ := p.Pod("node-0")
		return pd.TaskID != node0.TaskID && pd.State == plan.TaskRunning
	})
	again, _ := p.Pod("node-0")
	if again.AgentID != node0.AgentID || again.ReservationID != node0.ReservationID {
		t.Fatalf("node-0 moved: %+v -> %+v", node0, again)
	}
	if tv, ok := m.Task(again.TaskID); !ok || tv.AgentID != node0.AgentID || tv.State != mesos.TASK_RUNNING {
		t.Fatalf("master's view of %s: %+v", again.TaskID, tv)
	}

	// Agent loss: node-1 waits for its agent, then runs there again.
	node1, _ := p.Pod("node-1")
	if err := m.KillAgent(node1.AgentID); err != nil {
		t.Fatal(err)
	}
	d.until("node-1 lost", func() bool { pd, _ := p.Pod("node-1"); return pd.AgentLost })
	if err := m.RestartAgent(node1.AgentID); err != nil {
		t.Fatal(err)
	}
	d.until("node-1 back", running(p, "node-1"))
	if pd, _ := p.Pod("node-1"); pd.AgentID != node1.AgentID || pd.ReservationID != node1.ReservationID {
		t.Fatalf("node-1 moved: %+v", pd)
	}

	// Scale down: drained, killed, volume destroyed, reservation freed.
	d.do(p.SetCounts(1, 1))
	d.until("node-1 removed", func() bool {
		_, ok := p.Pod("node-1")
		av, _ := m.Agent(node1.AgentID)
		return !ok && len(av.Reserved) == 0
	})
	if len(d.drains) != 1 || d.drains[0] != "node-1" {
		t.Fatalf("drains %v", d.drains)
	}

	// Scale up: a new node, then a rebalance naming it.
	d.do(p.SetCounts(1, 2))
	d.until("rebalanced", func() bool { return len(d.rebal) == 1 })
	if d.rebal[0][0] != "node-1" || p.Progress().Status != plan.Complete {
		t.Fatalf("rebalance %v, progress %+v", d.rebal, p.Progress())
	}
	if errs := m.OperationErrors(); len(errs) != 0 {
		t.Fatalf("the master refused operations: %v", errs)
	}
}
