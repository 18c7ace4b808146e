package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

const svcA, svcB = "aaaaaaaa00000001", "bbbbbbbb00000002"

// svcReserved is reserved() as Mesos offers a reservation made with
// the service id label svc.
func svcReserved(p *Plan, pod, svc string, withVolume bool) OfferedReservation {
	r := reserved(p, pod, withVolume)
	r.Service = svc
	return r
}

// deployed returns testSpec(1, 2) with service id svc, deployed.
func deployed(t *testing.T, svc string) *Plan {
	t.Helper()
	sp := testSpec(1, 2)
	sp.ServiceID = svc
	p := New(sp)
	run(p, deploy)
	return p
}

func TestServiceIDInReservationIDs(t *testing.T) {
	p := deployed(t, svcA)
	n, _ := p.Pod("node-0")
	if n.ReservationID != svcA+".node-0.r1" || n.Volume.ID != svcA+".node-0.r1.vol" {
		t.Fatalf("node-0: reservation %q volume %q", n.ReservationID, n.Volume.ID)
	}
	for _, bad := range []string{"", "short", "UPPERCASE00000000", "has.dot00000000", "a/b00000000", strings.Repeat("a", 33)} {
		if ValidServiceID(bad) {
			t.Errorf("ValidServiceID(%q) = true", bad)
		}
		q := New(testSpec(1, 1))
		if err := q.SetServiceID(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("SetServiceID(%q): %v", bad, err)
		}
	}
	// An id once set is never changed.
	if err := p.SetServiceID(svcB); err != nil || p.Spec().ServiceID != svcA {
		t.Fatalf("SetServiceID on a plan with an id: %v, id %q", err, p.Spec().ServiceID)
	}
}

// A reservation with this pod's id but another service's label is not
// this service's: the pod is not relaunched on it.
func TestOtherServicesReservationIgnored(t *testing.T) {
	p := deployed(t, svcA)
	run(p, []step{{"node-0 failed", status("node-0", TaskFailed)}})
	other := svcReserved(p, "node-0", svcB, true)
	ds := p.OnOffers([]Offer{{ID: "x1", AgentID: "a1", Reservations: []OfferedReservation{other}}})
	for _, d := range ds {
		if d.Kind == Accept {
			t.Fatalf("used another service's reservation: %v", d)
		}
	}
	ds = p.OnOffers([]Offer{{ID: "x2", AgentID: "a1", Reservations: []OfferedReservation{svcReserved(p, "node-0", svcA, true)}}})
	if len(ds) == 0 || ds[0].Kind != Accept || ds[0].Ops[0].Kind != OpLaunch {
		t.Fatalf("own reservation: %v", ds)
	}
}

// TestMigrateV1 reads testdata/v1_plan.msgpack, written by the release
// before format 2 (1 controller, nodes 3 -> 2: node-0 and node-1 run on
// reservations node-0.r1 and node-1.r2, node-2.r3 on a3 is an orphan).
func TestMigrateV1(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "v1_plan.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		V int `msgpack:"v"`
	}
	if err := msgpack.Unmarshal(b, &head); err != nil || head.V != 1 {
		t.Fatalf("golden file is not version 1: %d %v", head.V, err)
	}
	p, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec().ServiceID != "" || p.Uninstalling() {
		t.Fatalf("migrated: service id %q uninstalling %v", p.Spec().ServiceID, p.Uninstalling())
	}
	n0, _ := p.Pod("node-0")
	if n0.ReservationID != "node-0.r1" || n0.Volume.ID != "node-0.r1.vol" || n0.State != TaskRunning {
		t.Fatalf("node-0 after migration: %+v", n0)
	}
	if len(p.orphans) != 1 || p.orphans[0].ReservationID != "node-2.r3" {
		t.Fatalf("orphans: %+v", p.orphans)
	}
	if err := p.SetServiceID(svcA); err != nil {
		t.Fatal(err)
	}
	// Old, unlabelled reservations are still the plan's: node-0 is
	// relaunched on its own, the orphan released.
	run(p, []step{{"node-0 failed", status("node-0", TaskFailed)}})
	ds := p.OnOffers([]Offer{
		{ID: "m1", AgentID: "a1", Reservations: []OfferedReservation{reserved(p, "node-0", true)}},
		{ID: "m2", AgentID: "a3", Reservations: []OfferedReservation{{Framework: "sluice", Pod: "node-2", ReservationID: "node-2.r3", Resources: Resources{CPUs: 1, MemMB: 512}, Volume: &Volume{ID: "node-2.r3.vol", ContainerPath: "wal", SizeMB: 1024}}}},
	})
	got := ""
	for _, d := range ds {
		got += d.String() + "\n"
	}
	if !strings.Contains(got, "[LAUNCH pod=node-0 res=node-0.r1") || !strings.Contains(got, "[DESTROY pod=node-2 res=node-2.r3 vol=node-2.r3.vol") || !strings.Contains(got, "[UNRESERVE pod=node-2 res=node-2.r3") {
		t.Fatalf("decisions after migration:\n%s", got)
	}
	// A new reservation carries the service id.
	p.SetCounts(1, 3)
	ds = p.OnOffers([]Offer{big("m3", "a4")})
	if len(ds) == 0 || ds[0].Kind != Accept || ds[0].Ops[0].ReservationID != svcA+".node-2.r4" {
		t.Fatalf("new node after migration: %v", ds)
	}
	// Stored again, it is version 2 with the id.
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := msgpack.Unmarshal(out, &head); err != nil || head.V != 2 {
		t.Fatalf("stored version %d %v", head.V, err)
	}
	q, err := Unmarshal(out)
	if err != nil || q.Spec().ServiceID != svcA {
		t.Fatalf("round trip: %v %q", err, q.Spec().ServiceID)
	}
}

// A plan of a newer format is refused with one error naming both
// versions and the way out; so is one older than any release wrote.
func TestNewerVersionRefused(t *testing.T) {
	for _, v := range []int{3, 0} {
		b, err := msgpack.Marshal(map[string]any{"v": v, "spec": Spec{Framework: "sluice"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Unmarshal(b)
		if !errors.Is(err, ErrVersion) {
			t.Fatalf("version %d: %v", v, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "format version "+string(rune('0'+v))) || !strings.Contains(msg, "versions 1 to 2") {
			t.Fatalf("version %d: message %q", v, msg)
		}
		if v == 3 && !strings.Contains(msg, "--package-version") {
			t.Fatalf("no way out in %q", msg)
		}
	}
	b, _ := msgpack.Marshal(map[string]any{"v": 2, "spec": map[string]any{"framework": "sluice", "serviceId": "Not/Valid"}})
	if _, err := Unmarshal(b); !errors.Is(err, ErrFormat) {
		t.Fatalf("bad stored service id: %v", err)
	}
}
