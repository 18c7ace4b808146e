package tiering

import (
	"bytes"
	"fmt"
	"path"
	"testing"

	"github.com/sluice-streams/sluice/node/container"
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2"
	"github.com/sluice-streams/sluice/tier2/fs"
	"github.com/sluice-streams/sluice/tier2/tier2test"
)

// appendBlock appends one block of count events of size bytes each.
func (f *fixture) appendBlock(name string, count, size int) {
	f.t.Helper()
	var b []byte
	for i := 0; i < count; i++ {
		ev := []byte(fmt.Sprintf("%0*d", size, f.evNo*1000+int64(i)))
		b = protocol.AppendEvent(b, ev[len(ev)-size:])
	}
	f.evNo += int64(count)
	if _, err := f.c.Append(container.Append{Segment: name, Writer: "w", EventNumber: f.evNo, EventCount: int32(count),
		ExpectedOffset: protocol.NoExpectedOffset, Data: b}); err != nil {
		f.t.Fatalf("append: %v", err)
	}
	f.wrote[name] = append(f.wrote[name], b...)
}

// chunkSizes returns the size of each chunk file of the segment.
func (f *fixture) chunkSizes(name string) map[string]int64 {
	f.t.Helper()
	dir, _ := segmentDir(name)
	entries, err := f.store.List(dir)
	if err != nil {
		f.t.Fatalf("list %s: %v", dir, err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		if _, ok := tier2.ParseChunkName(e.Name); ok {
			fi, err := f.store.Stat(path.Join(dir, e.Name))
			if err != nil {
				f.t.Fatal(err)
			}
			out[e.Name] = fi.Size
		}
	}
	return out
}

// A chunk file stays within Policy.ChunkBytes however small the events
// (their records' keys and lengths once took 8-byte events' chunks to
// 2.3 times the bound), and a block larger than the bound is a chunk of
// its own.
func TestChunkFilesRespectTheBound(t *testing.T) {
	const bound = 4096
	for _, backend := range []struct {
		name string
		new  func(t *testing.T) tier2.Storage
	}{
		{"mem", func(*testing.T) tier2.Storage { return tier2test.NewMem() }},
		{"fs", func(t *testing.T) tier2.Storage {
			s, err := fs.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			f := newFixture(t, backend.new(t), func(_ *container.Config, w *Config) { w.Policy.ChunkBytes = bound })
			f.create(segA, segB)
			for i := 0; i < 40; i++ {
				f.appendBlock(segA, 20, 8) // 240 bytes framed, 560 as records
			}
			f.appendBlock(segB, 1, 100)
			f.appendBlock(segB, 1, 3*bound) // one block past the bound
			f.appendBlock(segB, 1, 100)
			if err := f.w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			sizes := f.chunkSizes(segA)
			if len(sizes) < 2 {
				t.Fatalf("%s: %d chunks", segA, len(sizes))
			}
			for name, size := range sizes {
				if size > bound {
					t.Errorf("%s: chunk %s is %d bytes, over the bound %d (%.1fx)", segA, name, size, bound, float64(size)/bound)
				}
			}
			big := 0
			for _, size := range f.chunkSizes(segB) {
				if size > bound {
					big++
				}
			}
			if big != 1 {
				t.Errorf("%s: %d chunks over the bound, want the one holding the large block", segB, big)
			}
			for _, n := range []string{segA, segB} {
				if _, events := f.chunks(n); !bytes.Equal(events, f.wrote[n]) {
					t.Fatalf("%s: tier 2 holds %d bytes of events, want the %d written", n, len(events), len(f.wrote[n]))
				}
				if got := f.readAll(n); !bytes.Equal(got, f.wrote[n]) {
					t.Fatalf("%s reads back differently from tier 2", n)
				}
			}
		})
	}
}
