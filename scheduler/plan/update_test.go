package plan

import (
	"reflect"
	"strings"
	"testing"
)

// grown is testSpec(1, 2) with nodes of 2 cpus and 1024 MB.
func grown() Spec {
	s := testSpec(1, 2)
	s.Node.CPUs, s.Node.MemMB = 2, 1024
	return s
}

// targets: the deployed pods ran configuration "c1" (controllers) and
// "n1" (nodes); the update wants nodes on "n2".
func setTargets(node string, handover bool) func(*Plan) []Decision {
	return func(p *Plan) []Decision {
		return p.SetTargets(map[PodKind]string{Controller: "c1", Node: node}, map[PodKind]string{Controller: "c1", Node: "n1"}, handover)
	}
}

func ready(pod string) func(*Plan) []Decision {
	return func(p *Plan) []Decision {
		pd, _ := p.Pod(pod)
		return p.OnReady(pod, pd.TaskID)
	}
}

func drained(pod string) func(*Plan) []Decision {
	return func(p *Plan) []Decision { return p.OnDrained(pod) }
}

// ownOffer is a big offer from pod's agent carrying its reservation and
// volume, as Mesos offers it back.
func ownOffer(id, pod string) func(*Plan) []Decision {
	return func(p *Plan) []Decision {
		pd, _ := p.Pod(pod)
		return p.OnOffers([]Offer{big(id, pd.AgentID, reserved(p, pod, true))})
	}
}

var updateScenarios = map[string][]step{
	// A package update raised the nodes' cpus and mem: the nodes are
	// rolled one at a time, each drained, killed, relaunched in place on
	// a grown reservation, and checked ready before the next starts.
	"update_rolling": then(deploy,
		step{"configured: nodes of 2 cpus, 1024 MB", func(p *Plan) []Decision { return p.SetSpec(grown()) }},
		step{"targets: node-0 is drained first", setTargets("n2", true)},
		step{"node-1 waits while node-0 drains", offers(big("o7", "a2"))},
		step{"node-0 drained: killed", drained("node-0")},
		step{"killed", status("node-0", TaskKilled)},
		step{"its agent offers the reservation: grown by RESERVE, relaunched", ownOffer("o8", "node-0")},
		step{"node-0 running: readiness checked", status("node-0", TaskRunning)},
		step{"a stale readiness answer changes nothing", func(p *Plan) []Decision { return p.OnReady("node-0", "node-0__1") }},
		step{"node-0 ready: node-1 drains", ready("node-0")},
		step{"node-1 drained", drained("node-1")},
		step{"node-1 killed", status("node-1", TaskKilled)},
		step{"node-1 relaunched in place, grown", ownOffer("o9", "node-1")},
		step{"node-1 running", status("node-1", TaskRunning)},
		step{"node-1 ready: done", ready("node-1")},
	),
	// Without tier 2 a node is not drained; a smaller node shrinks its
	// reservation by UNRESERVE. A failure before readiness relaunches it
	// and the next pod still waits.
	"update_shrink_no_handover": then(deploy,
		step{"configured: nodes of 512 MB -> 256 MB", func(p *Plan) []Decision {
			s := testSpec(1, 2)
			s.Node.MemMB = 256
			return p.SetSpec(s)
		}},
		step{"targets: node-0 killed at once", setTargets("n2", false)},
		step{"killed", status("node-0", TaskKilled)},
		step{"relaunched in place, shrunk by UNRESERVE", ownOffer("o7", "node-0")},
		step{"running", status("node-0", TaskRunning)},
		step{"fails before it is ready", status("node-0", TaskFailed)},
		step{"relaunched: already the right size", ownOffer("o8", "node-0")},
		step{"running again: checked again", status("node-0", TaskRunning)},
		step{"ready: node-1 next", ready("node-0")},
	),
	// Pause stops the update after the pod in progress; resume goes on.
	"update_pause": then(deploy,
		step{"configured: bigger nodes", func(p *Plan) []Decision { return p.SetSpec(grown()) }},
		step{"targets: node-0 drains", setTargets("n2", true)},
		step{"paused", func(p *Plan) []Decision { p.Pause(); return nil }},
		step{"node-0's step goes on", drained("node-0")},
		step{"killed", status("node-0", TaskKilled)},
		step{"relaunched", ownOffer("o7", "node-0")},
		step{"running", status("node-0", TaskRunning)},
		step{"ready: node-1 does not start", ready("node-0")},
		step{"resumed: node-1 drains", func(p *Plan) []Decision { return p.Resume() }},
	),
	// A rolling restart of every pod: controllers first, then nodes,
	// one at a time.
	"restart_rolling": then(deploy,
		step{"targets unchanged", setTargets("n1", true)},
		step{"restart every pod: controller-0 first", func(p *Plan) []Decision { _, ds := p.Restart(""); return ds }},
		step{"killed", status("controller-0", TaskKilled)},
		step{"placed where resources fit", offers(big("o7", "a3"))},
		step{"running", status("controller-0", TaskRunning)},
		step{"ready: node-0 drains", ready("controller-0")},
		step{"drained", drained("node-0")},
		step{"killed", status("node-0", TaskKilled)},
		step{"relaunched in place, same size", ownOffer("o8", "node-0")},
		step{"running", status("node-0", TaskRunning)},
		step{"ready: node-1 drains", ready("node-0")},
	),
	// A paused plan places no new pod; a failed one is still relaunched.
	"pause_placements": {
		{"start", func(p *Plan) []Decision { return p.Start(t0) }},
		{"paused", func(p *Plan) []Decision { p.Pause(); return nil }},
		{"offers: nothing placed", offers(big("o1", "a1"))},
		{"resumed", func(p *Plan) []Decision { return p.Resume() }},
		{"placed", offers(big("o2", "a1"))},
		{"controller-0 running", status("controller-0", TaskRunning)},
		{"paused again", func(p *Plan) []Decision { p.Pause(); return nil }},
		{"controller-0 fails", status("controller-0", TaskFailed)},
		{"relaunched though paused; node-0 not placed", offers(big("o3", "a2"))},
	},
}

func TestUpdateScenarios(t *testing.T) {
	for name, steps := range updateScenarios {
		t.Run(name, func(t *testing.T) {
			newPlan := func() *Plan {
				if name == "pause_placements" {
					return New(testSpec(1, 1))
				}
				return New(testSpec(1, 2))
			}
			checkScenario(t, name, newPlan, steps)
		})
	}
}

// TestUpdateOneAtATime: through a whole rolling update, at no point is
// more than one pod in a step, and never are two nodes down at once.
func TestUpdateOneAtATime(t *testing.T) {
	p := New(testSpec(1, 3))
	p.Start(t0)
	p.OnOffers([]Offer{big("o1", "a1")})
	status("controller-0", TaskRunning)(p)
	p.OnOffers([]Offer{big("o2", "a1"), big("o3", "a2"), big("o4", "a3")})
	for _, n := range []string{"node-0", "node-1", "node-2"} {
		status(n, TaskRunning)(p)
	}
	s := testSpec(1, 3)
	s.Node.CPUs = 1.5
	pending := p.SetSpec(s)
	pending = append(pending, p.SetTargets(map[PodKind]string{Node: "n2"}, map[PodKind]string{Node: "n1"}, true)...)
	offerN := 10
	check := func() {
		t.Helper()
		var inStep, down []string
		for _, pod := range p.Pods() {
			if pod.Step != StepNone {
				inStep = append(inStep, pod.Name)
			}
			if pod.Kind == Node && (pod.State != TaskRunning || pod.Draining) {
				down = append(down, pod.Name)
			}
		}
		if len(inStep) > 1 || len(down) > 1 {
			t.Fatalf("in a step %v, down or draining %v", inStep, down)
		}
	}
	for rounds := 0; len(pending) > 0; rounds++ {
		if rounds > 50 {
			t.Fatalf("no end: %v", pending)
		}
		d := pending[0]
		pending = pending[1:]
		check()
		switch d.Kind {
		case Drain:
			pending = append(pending, p.OnDrained(d.Pod)...)
		case Kill:
			pd, _ := p.Pod(d.Pod)
			pending = append(pending, p.OnStatus(Status{TaskID: pd.TaskID, AgentID: pd.AgentID, State: TaskKilled})...)
			offerN++
			pending = append(pending, ownOffer("o"+strings.Repeat("x", offerN), d.Pod)(p)...)
		case Accept:
			for _, op := range d.Ops {
				if op.Kind == OpLaunch {
					pending = append(pending, status(op.Pod, TaskRunning)(p)...)
				}
			}
		case CheckReady:
			pending = append(pending, p.OnReady(d.Pod, d.TaskID)...)
		}
	}
	check()
	for _, pod := range p.Pods() {
		if pod.Kind == Node && (pod.Config != "n2" || pod.Reserved.CPUs != 1.5 || pod.Attempts != 2) {
			t.Fatalf("%s not updated: %+v", pod.Name, pod)
		}
	}
	if st := p.Progress().Status; st != Complete {
		t.Fatalf("progress %s", st)
	}
}

func TestMergeSpec(t *testing.T) {
	stored := testSpec(1, 2)
	stored.Heads, stored.Head = 1, Resources{CPUs: 0.5, MemMB: 256}
	for _, tc := range []struct {
		name    string
		change  func(*Spec)
		last    *Spec
		want    func(*Spec)
		refused []string // Refusal.Field
	}{
		{"nothing", func(*Spec) {}, nil, func(*Spec) {}, nil},
		{"cpus, mem and head resources are taken", func(s *Spec) {
			s.Node.CPUs, s.Node.MemMB, s.Controller.MemMB, s.Head.CPUs = 2, 2048, 1024, 1
		}, nil, func(s *Spec) { s.Node.CPUs, s.Node.MemMB, s.Controller.MemMB, s.Head.CPUs = 2, 2048, 1024, 1 }, nil},
		{"disk, disk type, volume path, role and name are refused", func(s *Spec) {
			s.Node.DiskMB, s.NodeDiskType, s.VolumePath, s.Role, s.Framework = 4096, DiskMount, "data", "other", "sluice2"
		}, nil, func(*Spec) {}, []string{"framework name", "role", "node disk", "node disk type", "node volume path"}},
		{"a count changed through the API wins over an unchanged configuration", func(s *Spec) {},
			func() *Spec { s := testSpec(1, 5); return &s }(), func(*Spec) {}, nil},
		{"a count the configuration changed is taken", func(s *Spec) { s.Nodes, s.Heads = 4, 2 },
			func() *Spec { s := stored; return &s }(), func(s *Spec) { s.Nodes, s.Heads = 4, 2 }, nil},
		{"without the last configuration counts stay", func(s *Spec) { s.Nodes = 4 }, nil, func(*Spec) {}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			configured := stored
			tc.change(&configured)
			want := stored
			tc.want(&want)
			got, refused := MergeSpec(stored, configured, tc.last)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("merged %+v, want %+v", got, want)
			}
			var fields []string
			for _, r := range refused {
				fields = append(fields, r.Field)
				if !strings.Contains(r.String(), "cannot change") {
					t.Fatalf("refusal %q", r)
				}
			}
			if !reflect.DeepEqual(fields, tc.refused) {
				t.Fatalf("refused %v, want %v", fields, tc.refused)
			}
		})
	}
}

// TestUpdateStateSurvives: the pause, each pod's configuration id,
// restart flag and step survive Marshal and Unmarshal.
func TestUpdateStateSurvives(t *testing.T) {
	p := New(testSpec(1, 2))
	for _, s := range deploy {
		s.do(p)
	}
	p.SetSpec(grown())
	setTargets("n2", true)(p)
	p.Restart(Controller)
	p.Pause()
	q := roundTrip(t, p)
	if !q.Paused() || !reflect.DeepEqual(q.Pods(), p.Pods()) {
		t.Fatalf("restored paused=%v pods %+v, want %+v", q.Paused(), q.Pods(), p.Pods())
	}
	n0, _ := q.Pod("node-0")
	c0, _ := q.Pod("controller-0")
	if n0.Step != StepDrain || n0.Config != "n1" || !c0.Restart {
		t.Fatalf("node-0 %+v controller-0 %+v", n0, c0)
	}
	// Started again after a failover, the step goes on: the drain is the
	// driver's to resume (Draining); nothing else starts meanwhile.
	ds := q.Start(t0)
	for _, d := range ds {
		if d.Kind == Drain || d.Kind == Kill {
			t.Fatalf("Start decided %v", d)
		}
	}
}

// TestResizeWaitsForWholeReservation: the old task's executor may still
// hold its share of a node's reservation when the agent offers the rest
// back. The relaunch waits for the whole reservation, and the RESERVE
// grows it by the difference from its known size, not from what that
// offer shows free: else the reservation ends up bigger than the target.
func TestResizeWaitsForWholeReservation(t *testing.T) {
	target := grown1()
	p, partial, pd := resizeStep(t, testSpec(1, 1), target)
	partial.Resources = partial.Resources.minus(Resources{CPUs: 0.1, MemMB: 32}) // the old executor's share
	for _, d := range p.OnOffers([]Offer{big("o10", pd.AgentID, partial)}) {
		if d.Kind == Accept {
			t.Fatalf("relaunched on a reservation not all free: %v", d)
		}
	}
	var grow *Op
	for _, d := range p.OnOffers([]Offer{big("o11", pd.AgentID, reserved(p, "node-0", true))}) {
		for i, op := range d.Ops {
			if op.Kind == OpReserve {
				grow = &d.Ops[i]
			}
		}
	}
	want := target.Node
	if grow == nil || grow.Resources != (Resources{CPUs: want.CPUs - pd.Reserved.CPUs, MemMB: want.MemMB - pd.Reserved.MemMB}) {
		t.Fatalf("RESERVE %+v, want the difference between %s and %s", grow, pd.Reserved, want)
	}
	// Known to have taken effect once the relaunched task runs.
	if got, _ := p.Pod("node-0"); got.Reserved != pd.Reserved || got.Resizing == nil || *got.Resizing != (Resources{CPUs: want.CPUs, MemMB: want.MemMB}) {
		t.Fatalf("node-0 reserved %s resizing %v after the ACCEPT, want %s and the target", got.Reserved, got.Resizing, pd.Reserved)
	}
	status("node-0", TaskRunning)(p)
	if got, _ := p.Pod("node-0"); got.Reserved != (Resources{CPUs: want.CPUs, MemMB: want.MemMB}) || got.Resizing != nil {
		t.Fatalf("node-0 reserved %s (resizing %v) once running, want cpus %g mem %g", got.Reserved, got.Resizing, want.CPUs, want.MemMB)
	}
}

// TestMergeSpecInstall: the settings fixed at install are refused, the
// HDFS configuration URL staying with a refused tier 2 and taken when
// tier 2 is unchanged; a plan stored before they were kept takes the
// configured ones.
func TestMergeSpecInstall(t *testing.T) {
	stored := testSpec(1, 2)
	stored.Install = &Install{Containers: 4, Tier2: "hdfs://ns/sluice", HDFSConfigURL: "http://hdfs-a/v1/endpoints"}
	for _, tc := range []struct {
		name    string
		in      *Install // configured
		want    Install
		refused []string
	}{
		{"containers and tier 2 refused, the URL kept with tier 2",
			&Install{Containers: 8, Tier2: "file:///mnt/sluice"},
			*stored.Install, []string{"containers", "tier 2"}},
		{"the URL alone is taken",
			&Install{Containers: 4, Tier2: "hdfs://ns/sluice", HDFSConfigURL: "http://hdfs-b/v1/endpoints"},
			Install{Containers: 4, Tier2: "hdfs://ns/sluice", HDFSConfigURL: "http://hdfs-b/v1/endpoints"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			configured := stored
			configured.Install = tc.in
			got, refused := MergeSpec(stored, configured, nil)
			var fields []string
			for _, r := range refused {
				fields = append(fields, r.Field)
			}
			if got.Install == nil || *got.Install != tc.want || !reflect.DeepEqual(fields, tc.refused) {
				t.Fatalf("install %+v refused %v, want %+v and %v", got.Install, fields, tc.want, tc.refused)
			}
			if *stored.Install != (Install{Containers: 4, Tier2: "hdfs://ns/sluice", HDFSConfigURL: "http://hdfs-a/v1/endpoints"}) {
				t.Fatalf("the stored spec changed: %+v", stored.Install)
			}
		})
	}
	before := testSpec(1, 2) // stored before Install was kept
	configured := before
	configured.Install = &Install{Containers: 8, Tier2: "file:///mnt/sluice"}
	if got, refused := MergeSpec(before, configured, nil); got.Install == nil || *got.Install != *configured.Install || len(refused) != 0 {
		t.Fatalf("a plan stored before: install %+v, refused %v", got.Install, refused)
	}
}
