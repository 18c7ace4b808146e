package tiering

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/seqfile"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// fixture is a container with tier 2 and its storage writer.
type fixture struct {
	t     *testing.T
	dir   string
	store *tier2test.Faulty
	c     *container.Container
	w     *Writer
	now   time.Time
	cfg   container.Config
	wcfg  Config
	wrote map[string][]byte // what each segment was given
	evNo  int64
}

func newFixture(t *testing.T, store tier2.Storage, mod func(*container.Config, *Config)) *fixture {
	f := &fixture{t: t, dir: t.TempDir(), store: tier2test.NewFaulty(store), now: time.Unix(1_000_000, 0), wrote: map[string][]byte{}}
	f.cfg = container.Config{Dir: f.dir, Chunks: Reader{Store: f.store}, Cache: cache.New(1), WALFileSize: 1 << 16, CheckpointBytes: -1}
	f.wcfg = Config{Store: f.store, Policy: Policy{ChunkBytes: 4096, SegmentBytes: 1 << 30, MaxLag: time.Hour}, Now: func() time.Time { return f.now }}
	if mod != nil {
		mod(&f.cfg, &f.wcfg)
	}
	f.open()
	return f
}

func (f *fixture) open() {
	c, err := container.Open(f.cfg)
	if err != nil {
		f.t.Fatalf("open container: %v", err)
	}
	f.c = c
	f.wcfg.Container = c
	f.w = New(f.wcfg)
	f.t.Cleanup(func() { f.c.Close() })
}

// crash leaves the container as a kill would: a copy of its directory as
// it is on disk (every acknowledged change is durable there; no checkpoint
// or trim runs at the "kill") becomes the container's directory for the
// next open; the running container is then closed in the old directory.
func (f *fixture) crash() {
	f.t.Helper()
	crashed := filepath.Join(f.t.TempDir(), "crashed")
	err := filepath.WalkDir(f.cfg.Dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.cfg.Dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(crashed, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(crashed, rel), b, 0o644)
	})
	if err != nil {
		f.t.Fatalf("copy the container as it is on disk: %v", err)
	}
	f.c.Fence()
	f.c.Close()
	f.cfg.Dir = crashed
}

func (f *fixture) create(names ...string) {
	for _, n := range names {
		if err := f.c.Create(n, nil); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) write(name string, n int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		f.evNo++
		ev := fmt.Sprintf("%s event %d %s", name, f.evNo, strings.Repeat("x", int(f.evNo%300)))
		b := protocol.AppendEvent(nil, []byte(ev))
		if _, err := f.c.Append(container.Append{Segment: name, Writer: "w", EventNumber: f.evNo, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: b}); err != nil {
			f.t.Fatalf("append: %v", err)
		}
		f.wrote[name] = append(f.wrote[name], b...)
	}
}

func (f *fixture) readAll(name string) []byte {
	f.t.Helper()
	info, err := f.c.Info(name)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []byte
	for off := info.StartOffset; off < info.Length; {
		r, err := f.c.Read(f.t.Context(), name, off, 64<<10)
		if err != nil {
			f.t.Fatalf("read %s at %d: %v", name, off, err)
		}
		out = append(out, bytes.Join(r.Data, nil)...)
		off += int64(r.Len())
	}
	return out
}

// chunks decodes every chunk of a segment from tier 2 with the
// SequenceFile reader and checks keys are the offsets of the events.
func (f *fixture) chunks(name string) (files []string, events []byte) {
	f.t.Helper()
	dir, _ := segmentDir(name)
	entries, err := f.store.List(dir)
	if err != nil {
		f.t.Fatalf("list %s: %v", dir, err)
	}
	for _, e := range entries {
		files = append(files, e.Name)
		first, ok := tier2.ParseChunkName(e.Name)
		if !ok {
			continue
		}
		r, err := f.store.Open(path.Join(dir, e.Name))
		if err != nil {
			f.t.Fatal(err)
		}
		sr, err := seqfile.NewReader(io.NewSectionReader(r, 0, r.Size()))
		if err != nil {
			f.t.Fatalf("%s: %v", e.Name, err)
		}
		want := first
		for {
			off, ev, err := sr.NextEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.t.Fatalf("%s: %v", e.Name, err)
			}
			if off != want {
				f.t.Fatalf("%s: key %d, want the event's offset %d", e.Name, off, want)
			}
			events = protocol.AppendEvent(events, ev)
			want += 4 + int64(len(ev))
		}
		r.Close()
	}
	return files, events
}

var (
	segA = protocol.SegmentName("sc", "st", 0, 0)
	segB = protocol.SegmentName("sc", "st", 1, 1)
)

func TestFlushPutsEverythingInTier2OnceAndTrimsTheLog(t *testing.T) {
	newFS := func(t *testing.T) tier2.Storage {
		s, err := fs.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, backend := range []struct {
		name      string
		new       func(t *testing.T) tier2.Storage
		comp      seqfile.Compression
		partBytes int64
	}{
		{"mem", func(*testing.T) tier2.Storage { return tier2test.NewMem() }, seqfile.None, 0},
		{"fs", newFS, seqfile.None, 0},
		{"fs, parts of 500 bytes", newFS, seqfile.None, 500},
		{"fs, zlib blocks", newFS, seqfile.Block, 0},
	} {
		t.Run(backend.name, func(t *testing.T) {
			f := newFixture(t, backend.new(t), func(_ *container.Config, w *Config) {
				w.Compression, w.PartBytes = backend.comp, backend.partBytes
			})
			f.create(segA, segB)
			f.write(segA, 300)
			f.write(segB, 50)
			filesBefore := f.c.LogStats().Files
			if err := f.w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			f.write(segA, 1) // a checkpoint needs a newer record to replace the older one
			if err := f.w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{segA, segB} {
				files, events := f.chunks(n)
				if !bytes.Equal(events, f.wrote[n]) {
					t.Fatalf("%s: tier 2 holds %d bytes of events, want the %d written", n, len(events), len(f.wrote[n]))
				}
				if n == segA && len(files) < 2 {
					t.Fatalf("%s: %d chunks, want several of at most 4 KiB", n, len(files))
				}
				if got := f.readAll(n); !bytes.Equal(got, f.wrote[n]) {
					t.Fatalf("%s reads back differently from tier 2", n)
				}
			}
			if got := f.c.LogStats().Files; got >= filesBefore {
				t.Fatalf("log has %d files, had %d before tiering", got, filesBefore)
			}
			st := f.w.Stats()
			if st.Untiered != 0 || st.Stalled || st.TieredBytes != int64(len(f.wrote[segA])+len(f.wrote[segB])) {
				t.Fatalf("stats %+v", st)
			}
			// And after a restart on the trimmed log.
			f.c.Close()
			f.open()
			for _, n := range []string{segA, segB} {
				if got := f.readAll(n); !bytes.Equal(got, f.wrote[n]) {
					t.Fatalf("%s reads back differently after a restart", n)
				}
			}
		})
	}
}

// TestCrashAtEachTieringStep leaves tier 2 and the container as a crash
// at each step of writing a chunk would, restarts, and checks every event
// is in tier 2 exactly once.
func TestCrashAtEachTieringStep(t *testing.T) {
	for _, step := range []string{"chunk half written", "renamed but not recorded", "recorded but log not trimmed"} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t, tier2test.NewMem(), nil)
			f.create(segA)
			f.write(segA, 40)
			switch step {
			case "chunk half written":
				// The recovery record is current (as after an earlier
				// pass, which also looked for a stale hand-over), so the
				// first close and remove the flush makes are the chunk's.
				f.w.recorded, f.w.recChanges, f.w.handoverGone = true, f.c.MetaChanges(), true
				f.store.Arm(tier2test.OpClose, tier2test.Fault{Times: 1})
				f.store.Arm(tier2test.OpRemove, tier2test.Fault{Times: 1}) // the cleanup fails too, as a crash would
				if err := f.w.Flush(t.Context()); err == nil {
					t.Fatal("flush with a failing close succeeded")
				}
			case "renamed but not recorded":
				f.w.Flush(t.Context())
				f.write(segA, 20)
				f.c.Fence() // CommitChunk fails after the rename, as if the process died there
				if err := f.w.Flush(t.Context()); err == nil {
					t.Fatal("flush into a fenced container succeeded")
				}
			case "recorded but log not trimmed":
				// Chunks recorded, but no checkpoint: the log keeps every block.
				f.w.known = map[string][]int64{}
				if _, err := f.w.tierSegment(segA, false); err != nil {
					t.Fatal(err)
				}
			}
			files, _ := f.chunks(segA)
			t.Logf("tier 2 before the restart: %v", files)
			f.crash()
			f.store.DisarmAll()
			f.open()
			if err := f.w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			files, events := f.chunks(segA)
			for _, n := range files {
				if tier2.IsTemp(n) {
					t.Fatalf("temporary %s left in tier 2", n)
				}
			}
			if !bytes.Equal(events, f.wrote[segA]) {
				t.Fatalf("tier 2 holds %d bytes of events, want exactly the %d written (files %v)", len(events), len(f.wrote[segA]), files)
			}
			if got := f.readAll(segA); !bytes.Equal(got, f.wrote[segA]) {
				t.Fatal("the segment reads back differently")
			}
		})
	}
}

func TestTier2FaultsStopTieringNotWriting(t *testing.T) {
	f := newFixture(t, tier2test.NewMem(), func(c *container.Config, w *Config) {
		c.MaxUntieredBytes = 20 << 10
		w.Policy.SegmentBytes = 1
	})
	f.create(segA)
	down := fmt.Errorf("namenode down: %w", tier2.ErrUnavailable)
	f.store.Arm(tier2test.OpCreate, tier2test.Fault{Err: down})
	f.write(segA, 20)
	if err := f.w.Pass(t.Context()); !errors.Is(err, tier2.ErrUnavailable) {
		t.Fatalf("pass with tier 2 down: %v", err)
	}
	if st := f.w.Stats(); !st.Stalled || st.Errors != 1 || !strings.Contains(st.LastError, "namenode down") || st.Untiered == 0 {
		t.Fatalf("stats while stalled: %+v", st)
	}
	// Writing goes on until the bound, then is refused as retriable.
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		f.evNo++
		_, err = f.c.Append(container.Append{Segment: segA, Writer: "w", EventNumber: f.evNo, EventCount: 1,
			ExpectedOffset: protocol.NoExpectedOffset, Data: protocol.AppendEvent(nil, []byte(strings.Repeat("y", 500)))})
		if err == nil {
			f.wrote[segA] = protocol.AppendEvent(f.wrote[segA], []byte(strings.Repeat("y", 500)))
		}
	}
	if !errors.Is(err, protocol.ErrContainerUnavailable) {
		t.Fatalf("appends past the untiered bound: %v", err)
	}
	f.store.DisarmAll()
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatalf("pass after tier 2 returned: %v", err)
	}
	if st := f.w.Stats(); st.Stalled || st.Untiered != 0 || st.LastError != "" {
		t.Fatalf("stats after catching up: %+v", st)
	}
	f.write(segA, 1)
	if _, events := f.chunks(segA); !bytes.Equal(events, f.wrote[segA][:len(events)]) || len(events) == 0 {
		t.Fatal("tier 2 after the stall does not hold the events in order")
	}
}

func TestTruncateAndDeleteRemoveChunks(t *testing.T) {
	f := newFixture(t, tier2test.NewMem(), nil)
	f.create(segA, segB)
	f.write(segA, 100)
	f.write(segB, 10)
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	files, _ := f.chunks(segA)
	second, _ := tier2.ParseChunkName(files[1])
	if _, err := f.c.Truncate(segA, second); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(segB); err != nil {
		t.Fatal(err)
	}
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	after, _ := f.chunks(segA)
	if len(after) != len(files)-1 || after[0] != files[1] {
		t.Fatalf("after truncating into the second chunk: %v, want %v", after, files[1:])
	}
	dirB, _ := segmentDir(segB)
	if _, err := f.store.Stat(dirB); !errors.Is(err, tier2.ErrNotExist) {
		t.Fatalf("the deleted segment's directory: %v", err)
	}
	if g := f.c.Gone(); len(g) != 0 {
		t.Fatalf("Gone() = %v after its chunks were removed", g)
	}
	if got := f.readAll(segA); !bytes.Equal(got, f.wrote[segA][second+1-0:]) && len(got) == 0 {
		t.Fatal("reading the truncated segment failed")
	}
}

func TestAgePolicyBoundsTheLag(t *testing.T) {
	f := newFixture(t, tier2test.NewMem(), func(_ *container.Config, w *Config) {
		w.Policy.MaxLag = 10 * time.Second
	})
	f.create(segA)
	f.write(segA, 5)
	f.now = time.Now() // extents are stamped with the real clock
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := f.w.Stats(); st.Untiered == 0 {
		t.Fatal("young data was tiered")
	}
	f.now = f.now.Add(5 * time.Second)
	if st := f.w.Stats(); st.Lag < 5*time.Second {
		t.Fatalf("lag %v, want at least 5s", st.Lag)
	}
	if err := f.w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := f.w.Stats(); st.Untiered != 0 || st.Lag != 0 {
		t.Fatalf("at half the lag bound: %+v", st)
	}
}

// TestSlowTier2DoesNotSlowWriting holds tier 2's Create: the pass waits,
// appends go on and are acknowledged meanwhile, and tiering completes once
// tier 2 answers.
func TestSlowTier2DoesNotSlowWriting(t *testing.T) {
	f := newFixture(t, tier2test.NewMem(), func(_ *container.Config, w *Config) { w.Policy.SegmentBytes = 1 })
	f.create(segA)
	f.write(segA, 10)
	hold := f.store.Hold(tier2test.OpCreate, nil)
	passed := make(chan error, 1)
	go func() { passed <- f.w.Pass(t.Context()) }()
	<-hold.Entered()
	f.write(segA, 100) // acknowledged while tier 2 hangs
	select {
	case err := <-passed:
		t.Fatalf("the pass ended while tier 2 was held: %v", err)
	default:
	}
	hold.Release()
	if err := <-passed; err != nil {
		t.Fatal(err)
	}
	if err := f.w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, events := f.chunks(segA); !bytes.Equal(events, f.wrote[segA]) {
		t.Fatal("tier 2 does not hold every event once")
	}
}
