package mesostest

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// onDisk puts r on the PATH or MOUNT disk at root.
func onDisk(r mesos.Resource, typ mesos.Resource_DiskInfo_Source_Type, root string) mesos.Resource {
	src := &mesos.Resource_DiskInfo_Source{Type: typ}
	if typ == mesos.Resource_DiskInfo_Source_MOUNT {
		src.Mount = &mesos.Resource_DiskInfo_Source_Mount{Root: strPtr(root)}
	} else {
		src.Path = &mesos.Resource_DiskInfo_Source_Path{Root: strPtr(root)}
	}
	d := mesos.Resource_DiskInfo{}
	if r.Disk != nil {
		d = *r.Disk
	}
	d.Source = src
	r.Disk = &d
	return r
}

// TestDiskRules: an agent's PATH and MOUNT disks are offered with their
// Source; RESERVE and CREATE must name a disk the agent has, take a
// MOUNT disk whole, and keep the reserved disk's Source on the volume.
func TestDiskRules(t *testing.T) {
	const (
		path  = mesos.Resource_DiskInfo_Source_PATH
		mount = mesos.Resource_DiskInfo_Source_MOUNT
	)
	for _, tc := range []struct {
		name    string
		reserve mesos.Resource // the disk reserved
		volume  mesos.Resource // the volume made of it (before volume())
		wantErr string         // in the operation errors; "" none
	}{
		{"part of a PATH disk", onDisk(scalar("disk", 300), path, "/srv/p"), onDisk(scalar("disk", 300), path, "/srv/p"), ""},
		{"a whole MOUNT disk", onDisk(scalar("disk", 500), mount, "/mnt/m"), onDisk(scalar("disk", 500), mount, "/mnt/m"), ""},
		{"part of a MOUNT disk", onDisk(scalar("disk", 200), mount, "/mnt/m"), onDisk(scalar("disk", 200), mount, "/mnt/m"), "a MOUNT disk is used whole"},
		{"no disk at the root", onDisk(scalar("disk", 300), path, "/srv/other"), onDisk(scalar("disk", 300), path, "/srv/other"), `has no PATH disk at "/srv/other"`},
		{"PATH asked of a MOUNT disk", onDisk(scalar("disk", 500), path, "/mnt/m"), onDisk(scalar("disk", 500), path, "/mnt/m"), `has no PATH disk at "/mnt/m"`},
		{"root disk beyond the root disk", scalar("disk", 300), scalar("disk", 300), "resources not in the offer"},
		{"volume without the disk's Source", onDisk(scalar("disk", 300), path, "/srv/p"), scalar("disk", 300), "CREATE: resources not in the offer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMaster(t, Options{})
			if err := m.AddAgent(AgentSpec{ID: "a1", CPUs: 4, MemMB: 1024, DiskMB: 100, Disks: []AgentDisk{
				{Type: path, Root: "/srv/p", SizeMB: 800}, {Type: mount, Root: "/mnt/m", SizeMB: 500},
			}}); err != nil {
				t.Fatal(err)
			}
			s := subscribe(t, m, "", codecs.MediaTypeProtobuf)
			o := s.nextOffer(func(o mesos.Offer) bool { return o.AgentID.Value == "a1" })
			var offered []string
			for _, r := range o.Resources {
				if r.Name == "disk" {
					offered = append(offered, r.String())
				}
			}
			if got := strings.Join(offered, " "); !strings.Contains(got, "PATH") || !strings.Contains(got, "/srv/p") || !strings.Contains(got, "MOUNT") || !strings.Contains(got, "/mnt/m") {
				t.Fatalf("offered disks %s: want the PATH and MOUNT disks with their roots", got)
			}
			vol := volume(reserve(tc.volume, "node-0"), "vol-node-0", "data")
			if tc.volume.Disk != nil {
				vol.Disk.Source = tc.volume.Disk.Source
			}
			s.call(calls.Accept(calls.OfferOperations{calls.OpReserve(reserve(tc.reserve, "node-0")), calls.OpCreate(vol)}.WithOffers(o.ID)))

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
			if got := len(av.Volumes) == 1; got != (tc.wantErr == "") {
				t.Fatalf("volumes %+v", av.Volumes)
			}
			if len(av.Volumes) == 1 && !av.Volumes[0].Resource.GetDisk().GetSource().Equal(tc.reserve.GetDisk().GetSource()) {
				t.Fatalf("volume %v: want it on %v", av.Volumes[0].Resource, tc.reserve.GetDisk().GetSource())
			}
		})
	}
}
