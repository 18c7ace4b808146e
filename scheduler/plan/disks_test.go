package plan

import (
	"strings"
	"testing"
)

// TestNodeDiskType: a node's volume comes from the root disk (ROOT) or
// from one disk of the type asked for: part of a PATH disk, the whole
// of the smallest MOUNT disk that is big enough. Root disk never
// serves a PATH or MOUNT ask, nor those disks a ROOT one.
func TestNodeDiskType(t *testing.T) {
	disks := []Disk{
		{Source: DiskSource{Type: DiskMount, Root: "/mnt/big"}, SizeMB: 5000},
		{Source: DiskSource{Type: DiskMount, Root: "/mnt/small"}, SizeMB: 500},
		{Source: DiskSource{Type: DiskMount, Root: "/mnt/fit"}, SizeMB: 2000},
		{Source: DiskSource{Type: DiskPath, Root: "/srv/p"}, SizeMB: 3000},
	}
	for _, tc := range []struct {
		typ        DiskType
		rootDiskMB float64
		disks      []Disk
		want       string // the RESERVE and CREATE, or "DECLINE"
	}{
		{"", 10000, disks, "[RESERVE pod=node-0 res=node-0.r1 cpus:1 mem:512 disk:1024] [CREATE pod=node-0 res=node-0.r1 vol=node-0.r1.vol:wal:1024]"},
		{DiskRoot, 1000, disks, "DECLINE"},
		{DiskPath, 10000, disks, "[RESERVE pod=node-0 res=node-0.r1 cpus:1 mem:512 disk:1024 disk=PATH:/srv/p] [CREATE pod=node-0 res=node-0.r1 vol=node-0.r1.vol:wal:1024@PATH:/srv/p]"},
		{DiskPath, 10000, disks[:3], "DECLINE"},
		{DiskMount, 0, disks, "[RESERVE pod=node-0 res=node-0.r1 cpus:1 mem:512 disk:2000 disk=MOUNT:/mnt/fit] [CREATE pod=node-0 res=node-0.r1 vol=node-0.r1.vol:wal:2000@MOUNT:/mnt/fit]"},
		{DiskMount, 10000, disks[1:2], "DECLINE"},
	} {
		spec := testSpec(0, 1)
		spec.NodeDiskType = tc.typ
		p := New(spec)
		p.Start(t0)
		o := Offer{ID: "o1", AgentID: "a1", Unreserved: Resources{CPUs: 4, MemMB: 4096, DiskMB: tc.rootDiskMB}, Disks: tc.disks}
		var got []string
		for _, d := range p.OnOffers([]Offer{o}) {
			s := d.String()
			if d.Kind == Accept {
				s = s[strings.Index(s, "["):strings.Index(s, " [LAUNCH")]
			}
			if d.Kind == Accept || d.Kind == Decline {
				got = append(got, s)
			}
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%q with %g MB root disk and %d disks: %q, want %q", tc.typ, tc.rootDiskMB, len(tc.disks), got, tc.want)
		}
	}
}
