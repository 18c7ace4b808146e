package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParsePlacement(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: the parsed form, or "error" and a part of the message
		errPart  string
	}{
		{in: "", want: ""},
		{in: "hostname:UNIQUE", want: "hostname:UNIQUE"},
		{in: "@hostname:unique", want: "hostname:UNIQUE"},
		{in: "hostname:CLUSTER:h1, @zone:GROUP_BY:2", want: "hostname:CLUSTER:h1,@zone:GROUP_BY:2"},
		{in: `[["hostname","UNIQUE"],["rack","LIKE","r[12]"]]`, want: "hostname:UNIQUE,rack:LIKE:r[12]"},
		{in: `["@region","IS","eu"]`, want: "@region:IS:eu"},
		{in: `[["hostname","LIKE","a:b,c"]]`, want: "hostname:LIKE:a:b,c"},
		{in: "hostname:LIKE:a:b", want: "hostname:LIKE:a:b"},
		{in: "rack:MAX_PER:2", want: "rack:MAX_PER:2"},
		{in: "@zone:GROUP_BY", want: "@zone:GROUP_BY"},
		{in: "hostname", want: "error", errPart: "want field:OPERATOR"},
		{in: "hostname:UNIQUE:x", want: "error", errPart: "UNIQUE takes no value"},
		{in: "hostname:NEAR", want: "error", errPart: "unknown operator"},
		{in: "hostname:LIKE:(", want: "error", errPart: "bad regular expression"},
		{in: "hostname:LIKE", want: "error", errPart: "needs a regular expression"},
		{in: "rack:MAX_PER", want: "error", errPart: "needs a count"},
		{in: "rack:MAX_PER:0", want: "error", errPart: "1 or more"},
		{in: "rack:GROUP_BY:x", want: "error", errPart: "1 or more"},
		{in: "rack:IS", want: "error", errPart: "IS needs a value"},
		{in: "@rack:IS:x", want: "error", errPart: "unknown field"},
		{in: ":UNIQUE", want: "error", errPart: "no field"},
		{in: "[[1]]", want: "error", errPart: "neither"},
		{in: "[]", want: "error", errPart: "no clause"},
	} {
		pl, err := ParsePlacement(tc.in)
		if tc.want == "error" {
			if !errors.Is(err, ErrPlacement) || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("%q: error %v, want ErrPlacement with %q", tc.in, err, tc.errPart)
			}
			continue
		}
		if err != nil || pl.String() != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, pl.String(), err, tc.want)
		}
	}
}

func FuzzParsePlacement(f *testing.F) {
	for _, s := range []string{"hostname:UNIQUE", `[["@zone","GROUP_BY","2"]]`, "rack:LIKE:r.*,hostname:MAX_PER:1", "a:b:c:d", "[", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pl, err := ParsePlacement(s)
		if err != nil {
			if !errors.Is(err, ErrPlacement) {
				t.Fatalf("%q: error %v is not ErrPlacement", s, err)
			}
			return
		}
		// Whatever parses can be evaluated, and the colon form of a
		// constraint whose values hold no ',' parses to itself.
		pl.Allows(&Where{Hostname: "h"}, []*Where{{Hostname: "h", Attributes: map[string]string{"rack": "r"}}})
		if !strings.Contains(s, "[") && !strings.Contains(pl.String(), ",,") {
			again, err := ParsePlacement(pl.String())
			if err != nil || again.String() != pl.String() {
				t.Fatalf("%q -> %q -> %q, %v", s, pl.String(), again.String(), err)
			}
		}
	})
}

func TestPlacementAllows(t *testing.T) {
	w := func(host, zone string, attrs ...string) *Where {
		out := &Where{Hostname: host, Zone: zone, Region: "r1"}
		if len(attrs) > 0 {
			out.Attributes = map[string]string{}
			for i := 0; i+1 < len(attrs); i += 2 {
				out.Attributes[attrs[i]] = attrs[i+1]
			}
		}
		return out
	}
	a1, a2, b1 := w("a1", "za", "rack", "r1"), w("a2", "za", "rack", "r2"), w("b1", "zb")
	for _, tc := range []struct {
		c      string
		at     *Where
		placed []*Where
		ok     bool
	}{
		{"hostname:UNIQUE", a1, nil, true},
		{"hostname:UNIQUE", a1, []*Where{a2}, true},
		{"hostname:UNIQUE", a1, []*Where{a1}, false},
		{"hostname:CLUSTER:a1", a1, nil, true},
		{"hostname:CLUSTER:a1", a2, nil, false},
		{"hostname:CLUSTER", a2, nil, true},
		{"hostname:CLUSTER", a2, []*Where{a1}, false},
		{"hostname:LIKE:a.*", a2, nil, true},
		{"hostname:LIKE:a", a2, nil, false}, // anchored: the whole value
		{"hostname:UNLIKE:b.*", a2, nil, true},
		{"hostname:UNLIKE:b.*", b1, nil, false},
		{"hostname:MAX_PER:2", a1, []*Where{a1}, true},
		{"hostname:MAX_PER:2", a1, []*Where{a1, a1}, false},
		{"rack:IS:r1", a1, nil, true},
		{"rack:IS:r1", a2, nil, false},
		{"rack:IS:r1", b1, nil, false},    // no such attribute
		{"rack:UNLIKE:r1", b1, nil, true}, // no attribute matches nothing
		{"rack:UNIQUE", a2, []*Where{a1}, true},
		{"rack:UNIQUE", a1, []*Where{a1}, false},
		{"@zone:IS:zb", b1, nil, true},
		{"@region:IS:r2", b1, nil, false},
		{"@zone:GROUP_BY:2", a2, []*Where{a1}, false}, // zb holds none yet
		{"@zone:GROUP_BY:2", b1, []*Where{a1}, true},
		{"@zone:GROUP_BY:2", a2, []*Where{a1, b1}, true},
		{"@zone:GROUP_BY:2", b1, []*Where{a1, a2, b1}, true},
		{"@zone:GROUP_BY:2", a1, []*Where{a1, a2, b1}, false},
		{"@zone:GROUP_BY", a2, []*Where{a1}, true}, // one value known: it is the least used
		{"@zone:GROUP_BY", a2, []*Where{a1, b1, b1}, true},
		{"@zone:GROUP_BY", b1, []*Where{a1, b1, b1}, false},
		{"hostname:UNIQUE,rack:IS:r2", a2, []*Where{a1}, true},
		{"hostname:UNIQUE,rack:IS:r2", a2, []*Where{a2}, false},
	} {
		pl, err := ParsePlacement(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		ok, why := pl.Allows(tc.at, tc.placed)
		if ok != tc.ok || (!ok && why == "") {
			t.Errorf("%s at %s with %d placed: %v (%s), want %v", tc.c, tc.at.Hostname, len(tc.placed), ok, why, tc.ok)
		}
	}
}

func TestPickPorts(t *testing.T) {
	p := New(testSpec(1, 1))
	p.SetPorts(map[PodKind][]int{Controller: {9090}, Node: {0}, HDFSHead: {8020, 0, 0}})
	offered := []PortRange{{Begin: 31000, End: 31002}, {Begin: 9090, End: 9090}}
	for _, tc := range []struct {
		kind  PodKind
		taken []int
		want  string // ports, or "no"
	}{
		{Controller, nil, "[9090]"},
		{Controller, []int{9090}, "no"},
		{Node, nil, "[31000]"},
		{Node, []int{31000, 31001, 31002}, "[9090]"}, // a fixed port only when nothing else is left
		{Node, []int{31000, 31001, 31002, 9090}, "no"},
		{HDFSHead, nil, "no"}, // 8020 is not offered
		{S3Head, nil, "[]"},   // no port needs
	} {
		taken := map[int]bool{}
		for _, q := range tc.taken {
			taken[q] = true
		}
		before := len(taken)
		got, ok, why := p.pickPorts(tc.kind, offered, taken)
		s := fmt.Sprint(got)
		if got == nil {
			s = "[]"
		}
		if !ok {
			s = "no"
			if why == "" || len(taken) != before {
				t.Errorf("%s: refused without a reason (%q) or took ports", tc.kind, why)
			}
		}
		if s != tc.want {
			t.Errorf("%s taken %v: %s (%s), want %s", tc.kind, tc.taken, s, why, tc.want)
		}
	}
}

// TestPlacementInPlan: constraints, ports and regions decide where new
// pods go; an offer they refuse is declined with the reason, which
// Progress shows.
func TestPlacementInPlan(t *testing.T) {
	spec := testSpec(1, 2)
	spec.Placement = map[PodKind]string{Controller: "hostname:LIKE:ctl-.*", Node: "@zone:GROUP_BY:2"}
	spec.Ports = map[PodKind][]int{Controller: {9090}, Node: {0}}
	p := New(spec)
	p.Start(t0)
	offer := func(id, host, zone string, ports ...PortRange) Offer {
		o := big(id, "agent-"+host)
		o.Hostname, o.Region, o.Zone, o.Ports = host, "r1", zone, ports
		return o
	}
	wide := PortRange{Begin: 9000, End: 9100}
	// The controller: not on w-1 (name), not on ctl-2 (no port 9090).
	ds := p.OnOffers([]Offer{offer("o1", "w-1", "za", wide), offer("o2", "ctl-2", "za", PortRange{Begin: 31000, End: 31010})})
	if len(ds) != 2 || ds[0].Kind != Decline || ds[1].Kind != Decline ||
		!strings.Contains(ds[0].Reason, "hostname:LIKE:ctl-.*") || !strings.Contains(ds[1].Reason, "port 9090 is not offered") {
		t.Fatalf("decisions %v reasons %q %q", ds, ds[0].Reason, ds[len(ds)-1].Reason)
	}
	if w := p.Progress().Phases[0].Steps[0].Waiting; !strings.Contains(w, "port 9090") {
		t.Fatalf("progress waiting %q", w)
	}
	ds = p.OnOffers([]Offer{offer("o3", "ctl-1", "za", wide)})
	if len(ds) != 1 || ds[0].Kind != Accept || fmt.Sprint(ds[0].Ops[0].Ports) != "[9090]" {
		t.Fatalf("controller launch %v", ds)
	}
	status("controller-0", TaskRunning)(p)
	// Nodes: one per zone. node-0 takes za; node-1 refuses another za
	// agent and waits for zb.
	ds = p.OnOffers([]Offer{offer("o4", "w-1", "za", wide), offer("o5", "w-2", "za", wide)})
	if len(ds) != 2 || ds[0].Kind != Accept || ds[1].Kind != Decline || !strings.Contains(ds[1].Reason, "GROUP_BY") {
		t.Fatalf("nodes in za: %v (%q)", ds, ds[len(ds)-1].Reason)
	}
	launch := ds[0].Ops[2]
	if launch.Kind != OpLaunch || fmt.Sprint(launch.Ports) != "[9000]" {
		t.Fatalf("node launch %+v", launch)
	}
	// An agent of another region is not used without a @region clause.
	remote := offer("o6", "far-1", "zc", wide)
	remote.Region, remote.Remote = "r2", true
	ds = p.OnOffers([]Offer{remote})
	if len(ds) != 1 || ds[0].Kind != Decline || !strings.Contains(ds[0].Reason, "region r2") {
		t.Fatalf("remote %v (%q)", ds, ds[0].Reason)
	}
	ds = p.OnOffers([]Offer{offer("o7", "w-3", "zb", wide)})
	if len(ds) == 0 || ds[0].Kind != Accept {
		t.Fatalf("node in zb %v", ds)
	}
	pod, _ := p.Pod("node-1")
	if pod.Where == nil || pod.Where.Zone != "zb" {
		t.Fatalf("node-1 where %+v", pod.Where)
	}
	// Where survives the round trip; ports do not (configuration).
	q := roundTrip(t, p)
	if pod, _ := q.Pod("node-1"); pod.Where == nil || pod.Where.Zone != "zb" || q.Spec().Placement[Node] != "@zone:GROUP_BY:2" || q.Spec().Ports != nil {
		t.Fatalf("after round trip: %+v, spec %+v", pod.Where, q.Spec())
	}
	if err := q.SetPlacement(Node, "zone:NEAR"); !errors.Is(err, ErrPlacement) || q.Spec().Placement[Node] != "@zone:GROUP_BY:2" {
		t.Fatalf("bad SetPlacement: %v, kept %q", err, q.Spec().Placement[Node])
	}
}

// TestRegionConstraintPlacesRemote: a @region clause lets pods go to an
// agent outside the master's region.
func TestRegionConstraintPlacesRemote(t *testing.T) {
	spec := testSpec(1, 1)
	spec.Placement = map[PodKind]string{Controller: "@region:IS:r2"}
	p := New(spec)
	p.Start(t0)
	o := big("o1", "a1")
	o.Hostname, o.Region, o.Zone, o.Remote = "far", "r2", "z", true
	if ds := p.OnOffers([]Offer{o}); len(ds) != 1 || ds[0].Kind != Accept {
		t.Fatalf("%v", ds)
	}
}

// TestNodePortsReserved: a new node reserves its ports with the rest of
// its reservation, is relaunched in place on them (whatever the
// unreserved ports), waits when its reservation lacks them, and gives
// them back with the reservation. A node stored before its ports were
// reserved takes them unreserved.
func TestNodePortsReserved(t *testing.T) {
	spec := testSpec(1, 1)
	spec.Ports = map[PodKind][]int{Controller: {0}, Node: {7000}}
	p := New(spec)
	p.Start(t0)
	o := big("o1", "a1")
	o.Ports = []PortRange{{Begin: 7000, End: 7001}}
	ds := p.OnOffers([]Offer{o})
	if len(ds) == 0 || ds[0].Kind != Accept || fmt.Sprint(ds[0].Ops[0].Ports) != "[7001]" || ds[0].Ops[0].ReservedPorts {
		t.Fatalf("controller: %v", ds) // 7000 is a node's fixed port: left alone
	}
	status("controller-0", TaskRunning)(p)
	o = big("o2", "a1")
	o.Ports = []PortRange{{Begin: 7000, End: 7000}}
	ds = p.OnOffers([]Offer{o})
	if len(ds) == 0 || ds[0].Kind != Accept || len(ds[0].Ops) != 3 {
		t.Fatalf("node: %v", ds)
	}
	reserve, launch := ds[0].Ops[0], ds[0].Ops[2]
	if reserve.Kind != OpReserve || fmt.Sprint(reserve.Ports) != "[7000]" || !launch.ReservedPorts || fmt.Sprint(launch.Ports) != "[7000]" {
		t.Fatalf("reserve %+v launch %+v", reserve, launch)
	}
	status("node-0", TaskFailed)(p)
	r := reserved(p, "node-0", true)
	again := big("o3", "a1", r)
	again.Ports = nil // another framework holds 7000 unreserved: not ours to need
	ds = p.OnOffers([]Offer{again})
	if len(ds) == 0 || ds[0].Kind != Decline || !strings.Contains(ds[0].Reason, "not its [7000]") {
		t.Fatalf("reservation without its ports: %v", ds)
	}
	r.Ports = []PortRange{{Begin: 7000, End: 7000}}
	ds = p.OnOffers([]Offer{big("o4", "a1", r)})
	if len(ds) == 0 || ds[0].Kind != Accept || ds[0].Ops[0].Kind != OpLaunch || !ds[0].Ops[0].ReservedPorts || fmt.Sprint(ds[0].Ops[0].Ports) != "[7000]" {
		t.Fatalf("relaunch in place: %v", ds)
	}
	if _, err := p.Replace("node-0"); err != nil {
		t.Fatal(err)
	}
	ds = p.OnOffers([]Offer{big("o5", "a1", r)})
	var unreserve *Op
	for _, d := range ds {
		for i, op := range d.Ops {
			if op.Kind == OpUnreserve {
				unreserve = &d.Ops[i]
			}
		}
	}
	if unreserve == nil || fmt.Sprint(unreserve.Ports) != "[7000]" {
		t.Fatalf("orphan released: %v", ds)
	}

	// A node from before: a reservation without ports, Pod.Ports empty.
	old := New(spec)
	old.Start(t0)
	o = big("o1", "a1")
	o.Ports = []PortRange{{Begin: 7000, End: 7001}}
	old.OnOffers([]Offer{o})
	status("controller-0", TaskRunning)(old)
	o = big("o2", "a2")
	o.Ports = []PortRange{{Begin: 7000, End: 7000}}
	old.OnOffers([]Offer{o})
	old.pods["node-0"].Ports = nil // as Unmarshal leaves a plan stored before the key
	status("node-0", TaskFailed)(old)
	r = reserved(old, "node-0", true)
	o = big("o3", "a2", r)
	o.Ports = []PortRange{{Begin: 7000, End: 7000}}
	ds = old.OnOffers([]Offer{o})
	if len(ds) == 0 || ds[0].Kind != Accept || ds[0].Ops[0].ReservedPorts || fmt.Sprint(ds[0].Ops[0].Ports) != "[7000]" {
		t.Fatalf("old node relaunched: %v", ds)
	}
}
