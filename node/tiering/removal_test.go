package tiering

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
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

// goneStore calls onWrite before the first Write of each chunk (not of
// recovery records) and counts how chunk writers end: Abort or Close.
type goneStore struct {
	tier2.Storage
	onWrite         func(path string)
	aborted, closed atomic.Int64
	written         atomic.Int64 // bytes written to chunks
}

type goneWriter struct {
	tier2.Writer
	s     *goneStore
	path  string
	wrote bool
}

func (s *goneStore) Create(p string) (tier2.Writer, error) {
	w, err := s.Storage.Create(p)
	if err != nil || strings.HasPrefix(p, "_sluice/") {
		return w, err
	}
	return &goneWriter{Writer: w, s: s, path: p}, nil
}

func (w *goneWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		w.s.onWrite(w.path)
	}
	w.s.written.Add(int64(len(b)))
	return w.Writer.Write(b)
}

func (w *goneWriter) Close() error { w.s.closed.Add(1); return w.Writer.Close() }

func (w *goneWriter) Abort() error { w.s.aborted.Add(1); return tier2.Abort(w.Writer) }

// A segment deleted while its chunk is being written (a stream deleted
// right after a burst) has the chunk given up after at most
// goneCheckBytes more, without the Close that would make it durable, and
// no file of it is left; a segment tiered beside it is not disturbed.
func TestChunkOfADeletedSegmentIsAbandoned(t *testing.T) {
	store := &goneStore{Storage: tier2test.NewMem()}
	f := newFixture(t, store, func(c *container.Config, w *Config) {
		c.WALFileSize = 16 << 20
		w.Policy.ChunkBytes = 16 << 20
		w.Store = store // not through the fixture's fault injector, which hides Abort
	})
	f.create(segA, segB)
	ev := protocol.AppendEvent(nil, bytes.Repeat([]byte("e"), 64<<10))
	for i := 0; i < 64; i++ { // 4 MiB each: one chunk
		for _, seg := range []string{segA, segB} {
			f.evNo++
			if _, err := f.c.Append(container.Append{Segment: seg, Writer: "w", EventNumber: f.evNo, EventCount: 1,
				ExpectedOffset: protocol.NoExpectedOffset, Data: ev}); err != nil {
				t.Fatal(err)
			}
		}
	}
	dirA, _ := segmentDir(segA)
	store.onWrite = func(p string) {
		if strings.HasPrefix(p, dirA+"/") {
			if err := f.c.Delete(segA); err != nil {
				t.Errorf("delete %s: %v", segA, err)
			}
		}
	}
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if store.aborted.Load() != 1 || store.closed.Load() != 1 {
		t.Fatalf("chunk writers: %d aborted, %d closed; want the deleted segment's aborted, the other's closed",
			store.aborted.Load(), store.closed.Load())
	}
	segBytes := int64(64 * len(ev))
	if over := store.written.Load() - segBytes; over > 2*goneCheckBytes+(4<<10) {
		t.Fatalf("%d bytes of the deleted segment's chunk were written, want at most about %d", over, 2*goneCheckBytes)
	}
	if entries, err := store.List(dirA); err == nil && len(entries) != 0 {
		t.Fatalf("files of the deleted segment left: %v", entries)
	}
	if files, events := f.chunks(segB); len(files) != 1 || int64(len(events)) != segBytes {
		t.Fatalf("the other segment: chunks %v with %d bytes of events, want one of %d", files, len(events), segBytes)
	}
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if g := f.c.Gone(); len(g) != 0 {
		t.Fatalf("Gone() = %v after a pass", g)
	}
}
