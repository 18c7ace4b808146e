package tiering

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// A deleted segment's chunks are removed over several passes when the
// removal budget runs out (each pass removes at least one), the segment
// is forgotten only once they are all gone, and a segment made again
// under its name is not tiered into the directory being emptied: its
// events end up in tier 2 exactly once, with none of the old ones.
func TestDeletionIsPacedAcrossPasses(t *testing.T) {
	store, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, store, nil)
	f.create(segA, segB)
	f.write(segB, 300)
	f.write(segA, 5)
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	old, _ := f.chunks(segB)
	if len(old) < 4 {
		t.Fatalf("%d chunks of the segment to delete, want several", len(old))
	}
	if err := f.c.Delete(segB); err != nil {
		t.Fatal(err)
	}
	f.wrote[segB] = nil
	f.create(segB) // again, under the same name
	f.write(segB, 10)
	if _, err := f.c.Seal(segB); err != nil { // so the policy tiers it at once
		t.Fatal(err)
	}
	f.w.removeBudget = time.Nanosecond

	dir, _ := segmentDir(segB)
	left := len(old)
	passes := 0
	for slices.Contains(f.c.Gone(), segB) {
		if passes++; passes > len(old)+1 {
			t.Fatalf("%d passes and the deleted segment is still gone-pending", passes)
		}
		if err := f.w.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		entries, err := f.store.List(dir)
		if err != nil && passes < len(old) {
			t.Fatalf("pass %d: list: %v", passes, err)
		}
		if slices.Contains(f.c.Gone(), segB) {
			if len(entries) >= left {
				t.Fatalf("pass %d removed nothing: %d files left", passes, len(entries))
			}
			for _, e := range entries {
				if !slices.Contains(old, e.Name) {
					t.Fatalf("pass %d: %s in the directory being emptied, not an old chunk", passes, e.Name)
				}
			}
			left = len(entries)
		}
	}
	if passes < 2 {
		t.Fatalf("removed in %d pass, want the budget to spread it", passes)
	}
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, events := f.chunks(segB); !bytes.Equal(events, f.wrote[segB]) {
		t.Fatalf("tier 2 holds %d bytes of events of the new segment, want the %d written", len(events), len(f.wrote[segB]))
	}
	if got := f.readAll(segB); !bytes.Equal(got, f.wrote[segB]) {
		t.Fatal("the new segment reads back differently")
	}
	if got := f.readAll(segA); !bytes.Equal(got, f.wrote[segA]) {
		t.Fatal("the other segment reads back differently")
	}
}

// pacedStore's writers implement tier2.Paced and count Unpaced calls.
type pacedStore struct {
	tier2.Storage
	unpaced *atomic.Int64
	created *atomic.Int64
}

type pacedWriter struct {
	tier2.Writer
	unpaced *atomic.Int64
}

func (w pacedWriter) Unpaced() { w.unpaced.Add(1) }

func (s pacedStore) Create(p string) (tier2.Writer, error) {
	w, err := s.Storage.Create(p)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(p, "_sluice/") {
		return w, nil // a recovery record
	}
	s.created.Add(1)
	return pacedWriter{w, s.unpaced}, nil
}

// A segment tiered at half its lag bound (the age rule) is written paced;
// one whose oldest block is three quarters of the bound old is written
// unpaced, to keep the bound; Flush writes unpaced.
func TestChunksBehindTheLagBoundAreUnpaced(t *testing.T) {
	var unpaced, created atomic.Int64
	store := pacedStore{tier2test.NewMem(), &unpaced, &created}
	f := newFixture(t, store, func(_ *container.Config, w *Config) {
		w.Policy.MaxLag = time.Hour
		w.Store = store // not through the fixture's fault injector, which hides Paced
	})
	f.create(segA)
	f.write(segA, 5)
	f.now = time.Now().Add(31 * time.Minute) // extents are stamped with the real clock
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if created.Load() == 0 || unpaced.Load() != 0 {
		t.Fatalf("at half the bound: %d chunks, %d unpaced; want some, none unpaced", created.Load(), unpaced.Load())
	}
	first := created.Load()
	f.write(segA, 5)
	f.now = time.Now().Add(50 * time.Minute)
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	paced := created.Load() - unpaced.Load()
	if unpaced.Load() == 0 || paced != first {
		t.Fatalf("behind the bound: %d chunks, %d unpaced; want all %d new ones unpaced", created.Load(), unpaced.Load(), created.Load()-first)
	}
	f.write(segA, 5)
	f.now = time.Now()
	before := created.Load()
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if created.Load() == before || created.Load()-unpaced.Load() != first {
		t.Fatalf("flush: %d chunks, %d unpaced; want the new ones unpaced", created.Load(), unpaced.Load())
	}
}

// A deletion interrupted by a tier-2 failure and then by a crash (after a
// pass removed part of the chunks) is finished after the restart: the
// segment stays gone-pending in the container's log until its directory
// is empty, and the other segment's events are intact.
func TestDeletionResumesAfterFaultAndCrash(t *testing.T) {
	store, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, store, nil)
	f.create(segA, segB)
	f.write(segB, 300)
	f.write(segA, 50)
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	old, _ := f.chunks(segB)
	if err := f.c.Delete(segB); err != nil {
		t.Fatal(err)
	}
	f.w.removeBudget = time.Nanosecond
	if err := f.w.Pass(t.Context()); err != nil { // removes one file
		t.Fatal(err)
	}
	f.store.Arm(tier2test.OpRemove, tier2test.Fault{Times: 1})
	if err := f.w.Pass(t.Context()); err == nil {
		t.Fatal("a pass with a failing Remove succeeded")
	}
	dir, _ := segmentDir(segB)
	left, err := f.store.List(dir)
	if err != nil || len(left) == 0 || len(left) >= len(old) {
		t.Fatalf("after a partial removal: %d of %d files left (%v)", len(left), len(old), err)
	}
	if !slices.Contains(f.c.Gone(), segB) {
		t.Fatal("forgotten before its chunks were removed")
	}

	f.crash()
	f.store.DisarmAll()
	f.open()
	if !slices.Contains(f.c.Gone(), segB) {
		t.Fatal("the pending deletion was lost in the crash")
	}
	for i := 0; slices.Contains(f.c.Gone(), segB); i++ {
		if i > len(old) {
			t.Fatal("the deletion does not finish")
		}
		if err := f.w.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.Stat(dir); err == nil {
		t.Fatalf("%s still there after the segment was forgotten", dir)
	}
	if got := f.readAll(segA); !bytes.Equal(got, f.wrote[segA]) {
		t.Fatal("the other segment reads back differently")
	}
}
