package node

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/node/vfs"
	"github.com/sluice-streams/sluice/node/vfs/vfstest"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// restoreRig is one container (the whole system: every segment in it) on
// nodes that share a tier 2, each on its own data directory.
type restoreRig struct {
	t     *testing.T
	store tier2.Storage
}

// node opens a cluster-mode node on dir hosting container 0 under epoch.
func (r restoreRig) node(dir string, epoch int64) *Node {
	r.t.Helper()
	n := r.open(dir, nil)
	if err := n.Host(0, epoch); err != nil {
		r.t.Fatal(err)
	}
	return n
}

func (r restoreRig) open(dir string, fs vfs.FS) *Node {
	r.t.Helper()
	n, err := Open(Config{Dir: dir, Containers: 1, Hosted: []int{}, Tier2: r.store, FS: fs, Logger: quiet()})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { n.Close() })
	return n
}

func seg(i int64) string { return protocol.SegmentName("sc", "st", i, 0) }

func ctr(t *testing.T, n *Node) *container.Container {
	t.Helper()
	c, err := n.ContainerFor(seg(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// appendEvents appends events numbered from..to-1 of writer w, one block
// each, and returns their bytes.
func appendEvents(t *testing.T, c *container.Container, name, w string, from, to int) []byte {
	t.Helper()
	var out []byte
	for i := from; i < to; i++ {
		ev := protocol.AppendEvent(nil, []byte(fmt.Sprintf("%s event %d", name, i)))
		res, err := c.Append(container.Append{Segment: name, Writer: w, EventNumber: int64(i), EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: ev})
		if err != nil {
			t.Fatal(err)
		}
		if res.Duplicate {
			t.Fatalf("%s: event %d of %s taken for a resend", name, i, w)
		}
		out = append(out, ev...)
	}
	return out
}

func readFrom(t *testing.T, c *container.Container, name string, offset int64) []byte {
	t.Helper()
	r, err := c.Read(t.Context(), name, offset, 1<<20)
	if err != nil {
		t.Fatalf("read %s at %d: %v", name, offset, err)
	}
	defer r.Release()
	return bytes.Clone(bytes.Join(r.Data, nil))
}

// loseDisk closes a node and removes its data directory, as a node whose
// volume is gone for good.
func loseDisk(t *testing.T, n *Node, dir string) {
	t.Helper()
	n.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreAfterDiskLoss: a node's disk is lost; the node comes back
// on an empty directory and rebuilds its container from tier 2 with
// everything tier 2 held (sealed, truncated and deleted segments as they
// were), loses only what was not tiered, recognises resends of what
// survived, and takes the writers' later events; and again after a
// second loss.
func TestRestoreAfterDiskLoss(t *testing.T) {
	r := restoreRig{t: t, store: tier2test.NewMem()}
	dir := t.TempDir()
	n := r.node(dir, 1)
	c := ctr(t, n)
	for i := range int64(4) {
		if err := c.Create(seg(i), map[string]int64{"k": i}); err != nil {
			t.Fatal(err)
		}
	}
	a := appendEvents(t, c, seg(0), "wa", 1, 51)
	sealed := appendEvents(t, c, seg(1), "wb", 1, 11)
	if _, err := c.Seal(seg(1)); err != nil {
		t.Fatal(err)
	}
	tr := appendEvents(t, c, seg(2), "wc", 1, 21)
	appendEvents(t, c, seg(3), "wd", 1, 5)
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	cut := int64(len(protocol.AppendEvent(nil, []byte(seg(2)+" event 1")))) * 5
	if _, err := c.Truncate(seg(2), cut); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(seg(3)); err != nil {
		t.Fatal(err)
	}
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Acknowledged, not in tier 2: lost with the disk.
	appendEvents(t, c, seg(0), "wa", 51, 61)

	loseDisk(t, n, dir)
	n = r.node(dir, 1)
	c = ctr(t, n)
	if got := readFrom(t, c, seg(0), 0); !bytes.Equal(got, a) {
		t.Fatalf("%s after the restore: %d bytes, want the %d tiered", seg(0), len(got), len(a))
	}
	if info, err := c.Info(seg(1)); err != nil || !info.Sealed || info.Length != int64(len(sealed)) {
		t.Fatalf("%s after the restore: %+v, %v; want sealed at %d", seg(1), info, err, len(sealed))
	}
	if got := readFrom(t, c, seg(1), 0); !bytes.Equal(got, sealed) {
		t.Fatalf("%s reads back differently", seg(1))
	}
	if info, err := c.Info(seg(2)); err != nil || info.StartOffset != cut || info.Length != int64(len(tr)) {
		t.Fatalf("%s after the restore: %+v, %v; want [%d, %d)", seg(2), info, err, cut, len(tr))
	}
	if got := readFrom(t, c, seg(2), cut); !bytes.Equal(got, tr[cut:]) {
		t.Fatalf("%s reads back differently", seg(2))
	}
	if _, err := c.Info(seg(3)); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("the deleted %s came back: %v", seg(3), err)
	}
	// A resend of the last event tier 2 holds is recognised; the writer's
	// later events (the lost ones resent, then new ones) are taken.
	res, err := c.Append(container.Append{Segment: seg(0), Writer: "wa", EventNumber: 50, EventCount: 1,
		ExpectedOffset: protocol.NoExpectedOffset, Data: protocol.AppendEvent(nil, []byte("resend"))})
	if err != nil || !res.Duplicate {
		t.Fatalf("a resend of event 50 after the restore: %+v, %v", res, err)
	}
	a = append(a, appendEvents(t, c, seg(0), "wa", 51, 71)...)
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}

	loseDisk(t, n, dir)
	n = r.node(dir, 1)
	c = ctr(t, n)
	if got := readFrom(t, c, seg(0), 0); !bytes.Equal(got, a) {
		t.Fatalf("%s after the second restore: %d bytes, want %d", seg(0), len(got), len(a))
	}
	recs, err := r.store.List(tier2.RecoveryDir(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) > 3 { // the kept two, and perhaps the restored node's first
		t.Fatalf("%d recovery records kept: %v", len(recs), recs)
	}
}

// TestRestartOnIntactDiskImportsNothing: a node restarting on its own
// disk opens its log, which is newer than any record (tier 2's newest
// record is even made unreadable: an import would fail).
func TestRestartOnIntactDiskImportsNothing(t *testing.T) {
	r := restoreRig{t: t, store: tier2test.NewMem()}
	dir := t.TempDir()
	n := r.node(dir, 1)
	c := ctr(t, n)
	c.Create(seg(0), nil)
	want := appendEvents(t, c, seg(0), "w", 1, 21)
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendEvents(t, c, seg(0), "w", 21, 31)...) // only in the log
	n.Close()
	damageNewestRecord(t, r.store, func(b []byte) []byte { return b[:len(b)/2] })
	n = r.node(dir, 1)
	if got := readFrom(t, ctr(t, n), seg(0), 0); !bytes.Equal(got, want) {
		t.Fatalf("after a restart on the intact disk: %d bytes, want %d", len(got), len(want))
	}
}

// damageNewestRecord replaces tier 2's newest recovery record of
// container 0 with what damage makes of it.
func damageNewestRecord(t *testing.T, st tier2.Storage, damage func([]byte) []byte) string {
	t.Helper()
	ents, err := st.List(tier2.RecoveryDir(0))
	if err != nil || len(ents) == 0 {
		t.Fatalf("recovery records: %v, %v", ents, err)
	}
	p := path.Join(tier2.RecoveryDir(0), ents[len(ents)-1].Name)
	b, err := readWhole(st, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Remove(p); err != nil {
		t.Fatal(err)
	}
	f, err := st.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(damage(bytes.Clone(b)))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestoreRefusesADamagedRecord: a damaged newest record is one clear
// error naming it; nothing is created in the container's directory, so
// once the operator removes the record, the older one is imported.
func TestRestoreRefusesADamagedRecord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-3] }},
		{"bit flip", func(b []byte) []byte { b[len(b)-5] ^= 0x10; return b }},
		{"empty", func([]byte) []byte { return nil }},
		{"header only", func(b []byte) []byte { return b[:24] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := restoreRig{t: t, store: tier2test.NewMem()}
			dir := t.TempDir()
			n := r.node(dir, 1)
			c := ctr(t, n)
			c.Create(seg(0), nil)
			want := appendEvents(t, c, seg(0), "w", 1, 11)
			if err := n.FlushTier(t.Context()); err != nil {
				t.Fatal(err)
			}
			c.Create(seg(1), nil) // a newer record, which is damaged below
			if err := n.FlushTier(t.Context()); err != nil {
				t.Fatal(err)
			}
			loseDisk(t, n, dir)
			bad := damageNewestRecord(t, r.store, tc.damage)

			n = r.open(dir, nil)
			err := n.Host(0, 1)
			if !errors.Is(err, container.ErrBadRecovery) || !strings.Contains(err.Error(), bad) {
				t.Fatalf("host with a damaged newest record: %v; want container.ErrBadRecovery naming %s", err, bad)
			}
			cdir := n.ContainerDir(0)
			if has, err := container.HasLocalState(nil, cdir); err != nil || has {
				t.Fatalf("the refused import left state in %s: %v, %v", cdir, has, err)
			}
			if err := r.store.Remove(bad); err != nil {
				t.Fatal(err)
			}
			if err := n.Host(0, 1); err != nil {
				t.Fatal(err)
			}
			if got := readFrom(t, ctr(t, n), seg(0), 0); !bytes.Equal(got, want) {
				t.Fatal("the older record restores differently")
			}
		})
	}
}

// TestRestoreRefusals: with no local state, a container whose newest
// record is of a later epoch is refused (a newer owner has it); one
// tier 2 cannot list is refused (never opened empty over a record it
// could not read); one tier 2 holds nothing of opens empty.
func TestRestoreRefusals(t *testing.T) {
	store := tier2test.NewFaulty(tier2test.NewMem())
	r := restoreRig{t: t, store: store}
	n := r.node(t.TempDir(), 1)
	c := ctr(t, n)
	c.Create(seg(0), nil)
	appendEvents(t, c, seg(0), "w", 1, 4)
	if err := n.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	n.Close()

	dir := t.TempDir()
	n = r.open(dir, nil)
	if err := n.Host(0, 0); !errors.Is(err, container.ErrStaleEpoch) {
		t.Fatalf("host under epoch 0 over a record of epoch 1: %v; want container.ErrStaleEpoch", err)
	}
	store.Arm(tier2test.OpList, tier2test.Fault{})
	if err := n.Host(0, 2); !errors.Is(err, tier2test.ErrInjected) {
		t.Fatalf("host while tier 2 cannot list: %v; want the listing's error", err)
	}
	if has, _ := container.HasLocalState(nil, n.ContainerDir(0)); has {
		t.Fatal("a container was opened empty while tier 2 could not be read")
	}
	store.DisarmAll()
	if err := n.Host(0, 2); err != nil {
		t.Fatal(err)
	}
	if info, err := ctr(t, n).Info(seg(0)); err != nil || info.Length == 0 {
		t.Fatalf("after the restore: %+v, %v", info, err)
	}

	empty := restoreRig{t: t, store: tier2test.NewMem()}
	n = empty.node(t.TempDir(), 1)
	if _, err := ctr(t, n).Info(seg(0)); !errors.Is(err, protocol.ErrNoSuchSegment) {
		t.Fatalf("a container tier 2 holds nothing of: %v", err)
	}
}

// TestCrashDuringRestore: a crash at each step of an import leaves either
// no local state (the next start imports again) or the whole import.
func TestCrashDuringRestore(t *testing.T) {
	for _, step := range []string{"checkpoint write", "log file", "rename into place", "directory sync"} {
		t.Run(step, func(t *testing.T) {
			r := restoreRig{t: t, store: tier2test.NewMem()}
			dir := t.TempDir()
			n := r.node(dir, 1)
			c := ctr(t, n)
			c.Create(seg(0), nil)
			want := appendEvents(t, c, seg(0), "w", 1, 21)
			if err := n.FlushTier(t.Context()); err != nil {
				t.Fatal(err)
			}
			loseDisk(t, n, dir)

			efs := vfstest.New(vfs.Default)
			efs.SetInjector(func(op vfstest.Op, p string) error {
				switch {
				case step == "checkpoint write" && op == vfstest.OpRename && strings.Contains(p, ".import") && strings.Contains(p, "checkpoint-"):
					return vfstest.ErrInjected
				case step == "log file" && op == vfstest.OpSync && strings.Contains(p, ".import") && strings.HasSuffix(p, ".wal"):
					return vfstest.ErrInjected
				case step == "rename into place" && op == vfstest.OpRename && strings.HasSuffix(p, "container-0000"):
					return vfstest.ErrInjected
				case step == "directory sync" && op == vfstest.OpSyncDir && p == dir:
					return vfstest.ErrInjected
				}
				return nil
			})
			n = r.open(dir, efs)
			if err := n.Host(0, 1); err == nil {
				t.Fatalf("the import survived a fault at the %s", step)
			}
			n.Close()
			efs.SetInjector(nil)
			n = r.node(dir, 1)
			if got := readFrom(t, ctr(t, n), seg(0), 0); !bytes.Equal(got, want) {
				t.Fatalf("after a crash at the %s and a restart: %d bytes, want %d", step, len(got), len(want))
			}
		})
	}
}

// TestRestoreAfterHandOver: a node takes a container over (a hand-over
// under epoch 1, hosted under 2), writes to it, then loses its disk. Come
// back on an empty directory and asked again to host it from the
// hand-over, it restores from its own newer recovery records, not the
// older hand-over.
func TestRestoreAfterHandOver(t *testing.T) {
	r := restoreRig{t: t, store: tier2test.NewMem()}
	a := r.node(t.TempDir(), 1)
	c := ctr(t, a)
	c.Create(seg(0), nil)
	want := appendEvents(t, c, seg(0), "w", 1, 11)
	if err := a.Release(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := r.open(dir, nil)
	if err := b.HostFrom(0, 2, 1); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendEvents(t, ctr(t, b), seg(0), "w", 11, 21)...)
	if err := b.FlushTier(t.Context()); err != nil {
		t.Fatal(err)
	}
	loseDisk(t, b, dir)
	b = r.open(dir, nil)
	if err := b.HostFrom(0, 2, 1); err != nil {
		t.Fatal(err)
	}
	if got := readFrom(t, ctr(t, b), seg(0), 0); !bytes.Equal(got, want) {
		t.Fatalf("after the disk loss: %d bytes, want %d", len(got), len(want))
	}
}

// TestHostFromRefusesAnOlderState: told to build a container from the
// hand-over of epoch 1, a node with no state of its own never takes an
// older state from tier 2 in its place (the owner's recovery records of
// epoch 1 come before its hand-over): with the hand-over missing, it
// fails as it did before records existed, and imports nothing.
func TestHostFromRefusesAnOlderState(t *testing.T) {
	r := restoreRig{t: t, store: tier2test.NewMem()}
	a := r.node(t.TempDir(), 1)
	c := ctr(t, a)
	c.Create(seg(0), nil)
	appendEvents(t, c, seg(0), "w", 1, 11)
	if err := a.FlushTier(t.Context()); err != nil { // a record of epoch 1
		t.Fatal(err)
	}
	if err := a.Release(t.Context(), 0); err != nil { // and its hand-over
		t.Fatal(err)
	}
	if err := r.store.Remove(tier2.HandoverPath(0, 1)); err != nil {
		t.Fatal(err)
	}
	b := r.open(t.TempDir(), nil)
	if err := b.HostFrom(0, 2, 1); err == nil || !strings.Contains(err.Error(), "hand-over of epoch 1") {
		t.Fatalf("HostFrom with the hand-over missing: %v, want the hand-over's read error", err)
	}
}
