package tiering

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/tier2/fs"
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
