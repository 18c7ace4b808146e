package mesostest

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// byPrincipal sets the principal of r's reservation ("" leaves it
// unset) and, for a volume, of its disk.persistence (vol; "" unset).
func byPrincipal(r mesos.Resource, res, vol string) mesos.Resource {
	r.Reservations = append([]mesos.Resource_ReservationInfo(nil), r.Reservations...)
	if res != "" {
		r.Reservations[0].Principal = strPtr(res)
	}
	if r.Disk != nil {
		d := *r.Disk
		p := *d.Persistence
		if vol != "" {
			p.Principal = strPtr(vol)
		}
		d.Persistence = &p
		r.Disk = &d
	}
	return r
}

// TestPrincipalRules: a framework that subscribed with a principal may
// RESERVE only resources whose reservation carries that principal, and
// CREATE only volumes whose disk.persistence does (Mesos'
// src/master/validation.cpp); a framework without one may do either.
func TestPrincipalRules(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		framework                string // FrameworkInfo.principal
		reservation, volume      string // the principals in the operations
		wantErr                  string // in the operation errors; "" none
		wantReserved, wantVolume bool
	}{
		{"all match", "sluice-principal", "sluice-principal", "sluice-principal", "", true, true},
		{"no framework principal", "", "", "", "", true, true},
		{"reservation without principal", "sluice-principal", "", "sluice-principal", "RESERVE by principal \"sluice-principal\" of a resource whose reservation has no principal", false, false},
		{"reservation by another", "sluice-principal", "other", "sluice-principal", "reserved with principal \"other\"", false, false},
		{"volume without principal", "sluice-principal", "sluice-principal", "", "CREATE by principal \"sluice-principal\" of a volume with no principal", true, false},
		{"volume by another", "sluice-principal", "sluice-principal", "other", "volume with principal \"other\"", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMaster(t, Options{})
			if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 1000}); err != nil {
				t.Fatal(err)
			}
			info := &mesos.FrameworkInfo{User: "test", Name: "sluice", Roles: []string{"sluice"},
				Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
			if tc.framework != "" {
				info.Principal = strPtr(tc.framework)
			}
			s := subscribeWith(t, m, info)
			o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
			reserved, vol, _ := podResources()
			for i := range reserved {
				reserved[i] = byPrincipal(reserved[i], tc.reservation, "")
			}
			vol = byPrincipal(vol, tc.reservation, tc.volume)
			s.call(calls.Accept(calls.OfferOperations{calls.OpReserve(reserved...), calls.OpCreate(vol)}.WithOffers(o.ID)))

			errs := strings.Join(m.OperationErrors(), "\n")
			if tc.wantErr == "" && errs != "" {
				t.Fatalf("operation errors %s", errs)
			}
			if !strings.Contains(errs, tc.wantErr) {
				t.Fatalf("operation errors %q, want one with %q", errs, tc.wantErr)
			}
			av, err := m.Agent("a1")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(av.Reserved) > 0; got != tc.wantReserved {
				t.Fatalf("reserved %v, want reserved %v", av.Reserved, tc.wantReserved)
			}
			if got := len(av.Volumes) > 0; got != tc.wantVolume {
				t.Fatalf("volumes %+v, want a volume %v", av.Volumes, tc.wantVolume)
			}
		})
	}
}
