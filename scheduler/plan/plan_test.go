package plan

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

var t0 = time.Unix(1_700_000_000, 0)

func testSpec(c, n int) Spec {
	return Spec{
		Framework: "sluice", Role: "sluice", Controllers: c, Nodes: n,
		Controller: Resources{CPUs: 0.5, MemMB: 256},
		Node:       Resources{CPUs: 1, MemMB: 512, DiskMB: 1024},
	}
}

// headSpec is testSpec(1, 1) with heads HDFS heads.
func headSpec(heads int) Spec {
	s := testSpec(1, 1)
	s.Heads, s.Head = heads, Resources{CPUs: 0.5, MemMB: 512}
	return s
}

func big(id, agent string, rs ...OfferedReservation) Offer {
	return Offer{ID: id, AgentID: agent, Unreserved: Resources{CPUs: 4, MemMB: 4096, DiskMB: 10000}, Reservations: rs}
}

func small(id, agent string) Offer {
	return Offer{ID: id, AgentID: agent, Unreserved: Resources{CPUs: 0.1, MemMB: 64, DiskMB: 10}}
}

// reserved is the reservation the plan made for pod (as Mesos would
// offer it back), with its volume when withVolume.
func reserved(p *Plan, pod string, withVolume bool) OfferedReservation {
	pd, ok := p.Pod(pod)
	if !ok || pd.ReservationID == "" {
		panic("no reservation for " + pod)
	}
	r := OfferedReservation{Framework: "sluice", Pod: pod, ReservationID: pd.ReservationID, Resources: pd.Reserved}
	if withVolume {
		v := *pd.Volume
		r.Volume = &v
	} else {
		r.Resources.DiskMB += pd.Volume.SizeMB
	}
	return r
}

type step struct {
	say string
	do  func(p *Plan) []Decision
}

func offers(os ...Offer) func(*Plan) []Decision {
	return func(p *Plan) []Decision { return p.OnOffers(os) }
}

func status(pod string, state TaskState) func(*Plan) []Decision {
	return func(p *Plan) []Decision {
		pd, _ := p.Pod(pod)
		return p.OnStatus(Status{TaskID: pd.TaskID, AgentID: pd.AgentID, State: state})
	}
}

// deploy brings testSpec(1, 2) up: controller-0 on a1, node-0 on a1,
// node-1 on a2, all running.
var deploy = []step{
	{"start", func(p *Plan) []Decision { return p.Start(t0) }},
	{"offers, one too small; nodes wait for the controller", offers(big("o1", "a1"), big("o2", "a2"), small("o3", "a4"))},
	{"controller-0 running", status("controller-0", TaskRunning)},
	{"offers", offers(big("o4", "a1"), big("o5", "a2"), big("o6", "a3"))},
	{"node-0 running", status("node-0", TaskRunning)},
	{"node-1 running", status("node-1", TaskRunning)},
}

func then(base []step, more ...step) []step { return append(append([]step(nil), base...), more...) }

var scenarios = map[string][]step{
	"deploy": deploy,
	"relaunch_in_place": then(deploy,
		step{"node-0 fails", status("node-0", TaskFailed)},
		step{"an offer from another agent is no use to node-0", offers(big("o7", "a2"))},
		step{"its own agent offers its reservation and volume", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o8", "a1", reserved(p, "node-0", true))})
		}},
		step{"running again", status("node-0", TaskRunning)},
	),
	"agent_lost": then(deploy,
		step{"agent a2 lost", func(p *Plan) []Decision { return p.OnAgentLost("a2") }},
		step{"lost update arrives too", status("node-1", TaskLost)},
		step{"other agents' offers are declined", offers(big("o7", "a3"))},
		step{"a2 is back with the reservation", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o8", "a2", reserved(p, "node-1", true))})
		}},
		step{"running on a2 again", status("node-1", TaskRunning)},
	),
	"scale_down": then(deploy,
		step{"nodes 2 -> 1", func(p *Plan) []Decision { return p.SetCounts(1, 1) }},
		step{"drain confirmed", func(p *Plan) []Decision { return p.OnDrained("node-1") }},
		step{"killed", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "node-1__1", AgentID: "a2", State: TaskKilled})
		}},
		step{"a2 offers the orphaned reservation", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o7", "a2", OfferedReservation{
				Framework: "sluice", Pod: "node-1", ReservationID: "node-1.r2",
				Resources: Resources{CPUs: 1, MemMB: 512}, Volume: &Volume{ID: "node-1.r2.vol", ContainerPath: "wal", SizeMB: 1024},
			})})
		}},
		step{"nothing left to do", offers(big("o8", "a2"))},
	),
	"scale_up": then(deploy,
		step{"nodes 2 -> 3", func(p *Plan) []Decision { return p.SetCounts(1, 3) }},
		step{"offers: a1 and a2 host nodes already", offers(big("o7", "a1"), big("o8", "a2"), big("o9", "a3"))},
		step{"node-2 running: rebalance", status("node-2", TaskRunning)},
	),
	"failover_reconcile": {
		{"restore a deployed plan and start", func(p *Plan) []Decision { return p.Start(t0.Add(time.Hour)) }},
		{"offers are held while reconciling", offers(big("o1", "a1"), big("o2", "a3"))},
		{"o1 rescinded", func(p *Plan) []Decision { p.OnRescind("o1"); return nil }},
		{"controller-0 answered running", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "controller-0__1", AgentID: "a1", State: TaskRunning, Reconciliation: true})
		}},
		{"no answer yet for the rest: retry after 30s", func(p *Plan) []Decision { return p.OnTick(t0.Add(time.Hour + 31*time.Second)) }},
		{"node-0 running", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "node-0__1", AgentID: "a1", State: TaskRunning, Reconciliation: true})
		}},
		{"node-1 unknown to Mesos (lost): held offers used now", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "node-1__1", AgentID: "a2", State: TaskLost, Reconciliation: true})
		}},
		{"a stray older task is killed", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "node-1__0", AgentID: "a2", State: TaskRunning, Reconciliation: true})
		}},
		{"implicit reconciliation on the timer", func(p *Plan) []Decision { return p.OnTick(t0.Add(time.Hour + 11*time.Minute)) }},
		{"not again before the interval", func(p *Plan) []Decision { return p.OnTick(t0.Add(time.Hour + 12*time.Minute)) }},
	},
	"replace": then(deploy,
		step{"a2 lost", func(p *Plan) []Decision { return p.OnAgentLost("a2") }},
		step{"operator replaces node-1", func(p *Plan) []Decision { ds, _ := p.Replace("node-1"); return ds }},
		step{"placed anew on a3", offers(big("o7", "a3"))},
		step{"running", status("node-1", TaskRunning)},
		step{"a2 comes back with the old reservation: cleaned up", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o8", "a2", OfferedReservation{
				Framework: "sluice", Pod: "node-1", ReservationID: "node-1.r2",
				Resources: Resources{CPUs: 1, MemMB: 512}, Volume: &Volume{ID: "node-1.r2.vol", ContainerPath: "wal", SizeMB: 1024},
			})})
		}},
	),
	"controllers_first": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"one controller per agent", offers(big("o1", "a1"), big("o2", "a2"))},
		{"controller-0 running", status("controller-0", TaskRunning)},
		{"nodes wait until every controller runs", offers(big("o3", "a3"))},
		{"controller-1 running", status("controller-1", TaskRunning)},
		{"too small for a node", offers(Offer{ID: "o4", AgentID: "a3", Unreserved: Resources{CPUs: 0.9, MemMB: 4096, DiskMB: 10000}})},
		{"big enough", offers(big("o5", "a3"))},
		{"node-0 running", status("node-0", TaskRunning)},
		{"controllers 2 -> 1: killed at once", func(p *Plan) []Decision { return p.SetCounts(1, 1) }},
		{"controller-1 killed", status("controller-1", TaskKilled)},
	},
	"unreachable": then(deploy,
		step{"node-1 unreachable: waits for its agent", status("node-1", TaskUnreachable)},
		step{"controller-0 unreachable: relaunched elsewhere", status("controller-0", TaskUnreachable)},
		step{"offers", offers(big("o7", "a3"))},
		step{"new controller running", status("controller-0", TaskRunning)},
		step{"a2 back: node-1's task is gone", status("node-1", TaskGone)},
		step{"relaunched in place", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o8", "a2", reserved(p, "node-1", true))})
		}},
	),
	"gone_by_operator": then(deploy,
		step{"a2 decommissioned: node-1 replaced, its reservation forgotten", status("node-1", TaskGoneByOperator)},
		step{"placed anew on a3 with a new volume", offers(big("o7", "a3"))},
		step{"node-1 running on a3", status("node-1", TaskRunning)},
		step{"a1 decommissioned: controller-0 and node-0 replaced", func(p *Plan) []Decision {
			return append(status("controller-0", TaskGoneByOperator)(p), status("node-0", TaskGoneByOperator)(p)...)
		}},
		step{"both placed anew on a4", offers(big("o8", "a4"))},
		step{"controller-0 running on a4", status("controller-0", TaskRunning)},
		step{"node-0 placed after the controller", offers(big("o9", "a5"))},
		step{"node-0 running on a5", status("node-0", TaskRunning)},
	),
	"gone_by_operator_while_draining": then(deploy,
		step{"nodes 2 -> 1: node-1 drains", func(p *Plan) []Decision { return p.SetCounts(1, 1) }},
		step{"a2 decommissioned meanwhile", status("node-1", TaskGoneByOperator)},
		step{"drained: retired with nothing to clean up", func(p *Plan) []Decision { return p.OnDrained("node-1") }},
		step{"offers: nothing wanted", offers(big("o7", "a3"))},
	),
	"gone": then(deploy,
		step{"node-0's task gone: relaunched in place when a1 offers its reservation", status("node-0", TaskGone)},
		step{"relaunched in place", func(p *Plan) []Decision {
			return p.OnOffers([]Offer{big("o7", "a1", reserved(p, "node-0", true))})
		}},
		step{"node-0 running", status("node-0", TaskRunning)},
		step{"node-1's task gone and a2 offers without its reservation: placed anew", status("node-1", TaskGone)},
		step{"a2 offers without the reservation", offers(big("o8", "a2"))},
		step{"node-1 running", status("node-1", TaskRunning)},
	),
	"heads": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"the head waits for the controller, like the node", offers(big("o1", "a1"), big("o2", "a2"))},
		{"controller-0 running", status("controller-0", TaskRunning)},
		{"node and head placed without a reservation or volume for the head", offers(big("o3", "a1"), big("o4", "a2"))},
		{"node-0 running", status("node-0", TaskRunning)},
		{"hdfs-head-0 running", status("hdfs-head-0", TaskRunning)},
		{"the head fails", status("hdfs-head-0", TaskFailed)},
		{"relaunched on any agent: it has no volume", offers(big("o5", "a3"))},
		{"running again", status("hdfs-head-0", TaskRunning)},
		{"heads 1 -> 2", func(p *Plan) []Decision { return p.SetHeads(HDFSHead, 2) }},
		{"one head per agent", offers(big("o6", "a3"), big("o7", "a1"))},
		{"hdfs-head-1 running", status("hdfs-head-1", TaskRunning)},
		{"a3 lost: its head is relaunched elsewhere", func(p *Plan) []Decision { return p.OnAgentLost("a3") }},
		{"placed on a2", offers(big("o8", "a2"))},
		{"hdfs-head-0 running on a2", status("hdfs-head-0", TaskRunning)},
		{"heads 2 -> 0: killed at once, no drain", func(p *Plan) []Decision { return p.SetHeads(HDFSHead, 0) }},
		{"hdfs-head-0 killed", status("hdfs-head-0", TaskKilled)},
		{"hdfs-head-1 killed", status("hdfs-head-1", TaskKilled)},
		{"nothing left for heads", offers(big("o9", "a3"))},
	},
	"all_heads": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"every head waits for the controller", offers(big("o1", "a1"))},
		{"controller-0 running", status("controller-0", TaskRunning)},
		{"one head of each kind fits an agent beside the node, with its own resources", offers(big("o2", "a1"))},
		{"node-0 running", status("node-0", TaskRunning)},
		{"hdfs-head-0 running", status("hdfs-head-0", TaskRunning)},
		{"nfs-head-0 running", status("nfs-head-0", TaskRunning)},
		{"s3-head-0 running", status("s3-head-0", TaskRunning)},
		{"nfs 1 -> 2, s3 1 -> 3", func(p *Plan) []Decision {
			return append(p.SetHeads(NFSHead, 2), p.SetHeads(S3Head, 3)...)
		}},
		{"a1 has one of each: a2 takes one more of each, s3-head-2 waits for a third agent", offers(big("o3", "a1"), big("o4", "a2"))},
		{"nfs-head-1 running", status("nfs-head-1", TaskRunning)},
		{"s3-head-1 running", status("s3-head-1", TaskRunning)},
		{"s3-head-2 on a3", offers(big("o5", "a3"))},
		{"s3-head-2 running", status("s3-head-2", TaskRunning)},
		{"the NFS head on a1 fails: relaunched on a free agent", status("nfs-head-0", TaskFailed)},
		{"relaunched on the agent that offers: a3", offers(big("o6", "a3"))},
		{"nfs-head-0 running on a3", status("nfs-head-0", TaskRunning)},
		{"s3 3 -> 1: the highest killed at once", func(p *Plan) []Decision { return p.SetHeads(S3Head, 1) }},
		{"s3-head-1 killed", status("s3-head-1", TaskKilled)},
		{"s3-head-2 killed", status("s3-head-2", TaskKilled)},
		{"nfs 2 -> 0", func(p *Plan) []Decision { return p.SetHeads(NFSHead, 0) }},
		{"nfs-head-0 killed", status("nfs-head-0", TaskKilled)},
		{"nfs-head-1 killed", status("nfs-head-1", TaskKilled)},
		{"nothing left", offers(big("o7", "a2"))},
	},
	"heads_replace": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"controller offer", offers(big("o1", "a1"))},
		{"controller running", status("controller-0", TaskRunning)},
		{"node and head", offers(big("o2", "a1"), big("o3", "a2"))},
		{"node running", status("node-0", TaskRunning)},
		{"head running", status("hdfs-head-0", TaskRunning)},
		{"replace the head: killed, placed anew", func(p *Plan) []Decision { ds, _ := p.Replace("hdfs-head-0"); return ds }},
		{"killed", func(p *Plan) []Decision {
			return p.OnStatus(Status{TaskID: "hdfs-head-0__1", AgentID: "a1", State: TaskKilled})
		}},
		{"placed on a3", offers(big("o4", "a3"))},
		{"unreachable: relaunched elsewhere at once", status("hdfs-head-0", TaskUnreachable)},
		{"placed on a1", offers(big("o5", "a1"))},
	},
	"failed_accept": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"controller offer", offers(big("o1", "a1"))},
		{"controller running", status("controller-0", TaskRunning)},
		{"node-0 placed on a2", offers(big("o2", "a2"))},
		{"the offer was stale: launch dropped", status("node-0", TaskDropped)},
		{"a2 offers without the reservation: placement forgotten, placed again", offers(big("o3", "a2"))},
	},
}

func newScenarioPlan(name string) *Plan {
	if name == "failover_reconcile" {
		p := New(testSpec(1, 2))
		run(p, deploy)
		b, err := p.Marshal()
		if err != nil {
			panic(err)
		}
		q, err := Unmarshal(b)
		if err != nil {
			panic(err)
		}
		return q
	}
	if name == "controllers_first" {
		return New(testSpec(2, 1))
	}
	if name == "heads" || name == "heads_replace" {
		return New(headSpec(1))
	}
	if name == "all_heads" {
		sp := headSpec(1)
		sp.NFSHeads = HeadSpec{Count: 1, Resources: Resources{CPUs: 0.25, MemMB: 256}}
		sp.S3Heads = HeadSpec{Count: 1, Resources: Resources{CPUs: 0.75, MemMB: 768}}
		return New(sp)
	}
	if name == "failed_accept" {
		return New(testSpec(1, 1))
	}
	return New(testSpec(1, 2))
}

func run(p *Plan, steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "> %s\n", s.say)
		for _, d := range s.do(p) {
			fmt.Fprintf(&b, "%s\n", d)
		}
	}
	fmt.Fprintf(&b, "= progress %s\n", p.Progress().Status)
	for _, ph := range p.Progress().Phases {
		fmt.Fprintf(&b, "  %s %s:", ph.Name, ph.Status)
		for _, st := range ph.Steps {
			fmt.Fprintf(&b, " %s=%s", st.Pod, st.Status)
			if st.Waiting != "" {
				fmt.Fprintf(&b, "(%s)", st.Waiting)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkScenario runs steps on the plan newPlan makes and compares the
// decisions with testdata/name.golden (rewritten with -update).
func checkScenario(t *testing.T, name string, newPlan func() *Plan, steps []step) {
	t.Helper()
	got := run(newPlan(), steps)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Fatalf("decisions differ from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
	// Same events, same decisions: the plan is deterministic.
	if again := run(newPlan(), steps); again != got {
		t.Fatalf("a second run decided differently:\n%s", again)
	}
}

// roundTrip is p marshaled and unmarshaled, as a failover restores it.
func roundTrip(t *testing.T, p *Plan) *Plan {
	t.Helper()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestScenarios(t *testing.T) {
	for name, steps := range scenarios {
		t.Run(name, func(t *testing.T) {
			checkScenario(t, name, func() *Plan { return newScenarioPlan(name) }, steps)
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	p := New(testSpec(1, 2))
	run(p, then(deploy, step{"nodes 2 -> 1", func(p *Plan) []Decision { return p.SetCounts(1, 1) }}))
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Pods(), q.Pods()) || !reflect.DeepEqual(p.Spec(), q.Spec()) || !reflect.DeepEqual(p.orphans, q.orphans) || p.seq != q.seq {
		t.Fatalf("round trip changed the plan:\n%+v\n%+v", p.Pods(), q.Pods())
	}
	if _, err := Unmarshal(b[:len(b)/2]); !errors.Is(err, ErrFormat) {
		t.Fatalf("truncated: %v", err)
	}
	bad, _ := (&Plan{pods: map[string]*Pod{}}).Marshal()
	bad[2]++ // "v" -> 2 (map header, key "v" fixstr, value)
	if _, err := Unmarshal(bad); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 2: %v", err)
	}
}

// TestPlanBeforeHeads decodes a plan stored before heads existed
// (testdata/before_heads.msgpack: the deploy scenario, written by that
// code): every pod comes back, no head is wanted, UnsetHeads names
// every kind;
// SetHeads then adds one and the round trip keeps it.
func TestPlanBeforeHeads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "before_heads.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	fresh := New(testSpec(1, 2))
	run(fresh, deploy)
	freshPods := fresh.Pods()
	for i := range freshPods {
		freshPods[i].Where = nil // learnt from offers; the old plan predates the key
	}
	if !reflect.DeepEqual(p.Pods(), freshPods) || !reflect.DeepEqual(p.Spec(), fresh.Spec()) || p.seq != fresh.seq {
		t.Fatalf("old plan decoded as\n%+v\n%+v\nwant\n%+v", p.Spec(), p.Pods(), freshPods)
	}
	if fmt.Sprint(p.UnsetHeads()) != fmt.Sprint(HeadKinds) || len(fresh.UnsetHeads()) != 0 {
		t.Fatalf("UnsetHeads: old %v, new %v", p.UnsetHeads(), fresh.UnsetHeads())
	}
	if got := len(p.Progress().Phases); got != 2 {
		t.Fatalf("%d phases without heads", got)
	}
	p.SetHeadResources(HDFSHead, Resources{CPUs: 0.5, MemMB: 512})
	ds := p.SetHeads(HDFSHead, 1)
	if fmt.Sprint(p.UnsetHeads()) != fmt.Sprint([]PodKind{NFSHead, S3Head}) || len(ds) != 0 { // not suppressed: no REVIVE needed
		t.Fatalf("after SetHeads: unset %v, decisions %v", p.UnsetHeads(), ds)
	}
	got := p.OnOffers([]Offer{big("o9", "a3")})
	if len(got) == 0 || got[0].Kind != Accept || got[0].Ops[0].Pod != "hdfs-head-0" || got[0].Ops[0].Resources != (Resources{CPUs: 0.5, MemMB: 512}) {
		t.Fatalf("head launch: %v", got)
	}
	again, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.UnsetHeads()) != 0 || q.Spec().Heads != 1 || q.Spec().Head != p.Spec().Head || !reflect.DeepEqual(q.Pods(), p.Pods()) {
		t.Fatalf("round trip with heads: %+v %+v", q.Spec(), q.Pods())
	}
	if ph := q.Progress().Phases; len(ph) != 3 || ph[2].Name != "heads" || ph[2].Steps[0].Pod != "hdfs-head-0" || ph[2].Steps[0].Status != Starting {
		t.Fatalf("progress %+v", ph)
	}
}

// TestPlanBeforeNFSAndS3Heads decodes a plan stored with an HDFS head
// before NFS and S3 heads existed (testdata/before_nfs_s3_heads.msgpack,
// written by that code: a controller, a node and an HDFS head
// running): it keeps its pods and HDFS head, wants no NFS or S3 head,
// and UnsetHeads names those two kinds; setting them launches them and
// the round trip keeps them.
func TestPlanBeforeNFSAndS3Heads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "before_nfs_s3_heads.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.UnsetHeads()); got != fmt.Sprint([]PodKind{NFSHead, S3Head}) {
		t.Fatalf("UnsetHeads %s", got)
	}
	sp := p.Spec()
	if sp.Heads != 1 || sp.Head != (Resources{CPUs: 0.5, MemMB: 512}) || sp.NFSHeads != (HeadSpec{}) || sp.S3Heads != (HeadSpec{}) {
		t.Fatalf("spec %+v", sp)
	}
	var names []string
	for _, pod := range p.Pods() {
		names = append(names, pod.Name+":"+string(pod.State))
	}
	if got := strings.Join(names, " "); got != "controller-0:TASK_RUNNING node-0:TASK_RUNNING hdfs-head-0:TASK_RUNNING" {
		t.Fatalf("pods %s", got)
	}
	for _, k := range []PodKind{NFSHead, S3Head} {
		p.SetHeadResources(k, Resources{CPUs: 0.25, MemMB: 256})
		p.SetHeads(k, 1)
	}
	if len(p.UnsetHeads()) != 0 {
		t.Fatalf("still unset: %v", p.UnsetHeads())
	}
	got := p.OnOffers([]Offer{big("o9", "a3")})
	if len(got) == 0 || got[0].Kind != Accept || len(got[0].Ops) != 2 || got[0].Ops[0].Pod != "nfs-head-0" || got[0].Ops[1].Pod != "s3-head-0" {
		t.Fatalf("launches: %v", got)
	}
	again, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.UnsetHeads()) != 0 || !reflect.DeepEqual(q.Spec(), p.Spec()) || !reflect.DeepEqual(q.Pods(), p.Pods()) {
		t.Fatalf("round trip: %+v %+v", q.Spec(), q.Pods())
	}
	var phases []string
	for _, ph := range q.Progress().Phases {
		phases = append(phases, ph.Name)
	}
	if got := strings.Join(phases, " "); got != "controllers nodes heads nfs-heads s3-heads" {
		t.Fatalf("phases %s", got)
	}
}

func TestReplaceUnknownPod(t *testing.T) {
	if _, err := New(testSpec(1, 1)).Replace("node-9"); !errors.Is(err, ErrNoPod) {
		t.Fatalf("got %v", err)
	}
}

func TestProgressWhileDraining(t *testing.T) {
	p := New(testSpec(1, 2))
	run(p, deploy)
	p.SetCounts(1, 1)
	prog := p.Progress()
	if len(prog.Phases) != 3 || prog.Phases[2].Name != "decommission" || prog.Status != Starting {
		t.Fatalf("progress %+v", prog)
	}
	if st := prog.Phases[2].Steps; len(st) != 1 || st[0].Pod != "node-1" || st[0].Status != Starting {
		t.Fatalf("decommission steps %+v", st)
	}
	if pod, _ := p.Pod("node-1"); !pod.Draining || pod.Goal != GoalDecommission {
		t.Fatalf("node-1 %+v", pod)
	}
	// A drain in progress survives a failover.
	q := roundTrip(t, p)
	if ds := q.OnDrained("node-1"); len(ds) != 1 || ds[0].Kind != Kill || ds[0].TaskID != "node-1__1" {
		t.Fatalf("after failover, drained: %v", ds)
	}
}

// TestStateClasses: every state the plan names is classified; Terminal
// follows from the class. (mesosconv's test checks every Mesos enum
// value is one of these.)
func TestStateClasses(t *testing.T) {
	want := map[TaskState]StateClass{
		TaskStaging: ClassActive, TaskStarting: ClassActive, TaskRunning: ClassActive, TaskKilling: ClassActive,
		TaskFinished: ClassEnded, TaskFailed: ClassEnded, TaskKilled: ClassEnded, TaskError: ClassEnded, TaskDropped: ClassEnded,
		TaskUnreachable: ClassUnreachable,
		TaskLost:        ClassLost, TaskUnknown: ClassLost,
		TaskGone: ClassGone, TaskGoneByOperator: ClassAgentRemoved,
		TaskNone: ClassUnclassified, "TASK_SOMETHING_NEW": ClassUnclassified,
	}
	for s, c := range want {
		if got := s.Class(); got != c {
			t.Errorf("%q: class %d, want %d", s, got, c)
		}
		terminal := c == ClassEnded || c == ClassLost || c == ClassGone || c == ClassAgentRemoved
		if s.Terminal() != terminal {
			t.Errorf("%q: Terminal() = %v, want %v", s, s.Terminal(), terminal)
		}
	}
}
