package container

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sluice-streams/sluice/node/cache"
	"github.com/sluice-streams/sluice/protocol"
)

// TestReadAheadLoadsTheNextPart: a read of a part of a chunk recorded with
// marks loads the chunk's next part in the background once its own load is
// done (never before it), when the cache can hold four parts; the next
// read finds it cached, and every byte reads back as written.
func TestReadAheadLoadsTheNextPart(t *testing.T) {
	chunks := newMemChunks()
	chunks.partBytes = 60
	c := open(t, Config{Dir: t.TempDir(), Chunks: chunks, Cache: cache.New(64 << 10)})
	name := protocol.SegmentName("sc", "st", 0, 0)
	if err := c.Create(name, nil); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 40 {
		e := fmt.Sprintf("event-%02d", i)
		want = append(want, block(e)...)
		appendEvents(t, c, name, "w", int64(i+1), e)
	}
	if _, n := chunks.tier(t, c, name, 1<<20); n != int64(len(want)) {
		t.Fatalf("tiered %d bytes in one chunk, want %d", n, len(want))
	}
	c.cache = cache.New(64 << 10) // evict what tiering cached: only loads count from here
	loaded := func() []ChunkPart {
		chunks.mu.Lock()
		defer chunks.mu.Unlock()
		return append([]ChunkPart(nil), chunks.parts...)
	}
	read := func(off, n int64) {
		t.Helper()
		r, err := c.Read(t.Context(), name, off, int(n))
		if err != nil || !bytes.Equal(bytes.Join(r.Data, nil), want[off:off+n]) {
			t.Fatalf("Read(%d, %d) = %q, %v; want %q", off, n, bytes.Join(r.Data, nil), err, want[off:off+n])
		}
		r.Release()
		settleReadAhead(c)
	}
	read(0, 5)
	parts := loaded()
	if len(parts) != 2 || parts[0].Offset != 0 || parts[1].Offset != parts[0].Offset+parts[0].Length {
		t.Fatalf("a read in the first part loaded %+v; want it, then the next part", parts)
	}
	p1 := parts[1]
	read(p1.Offset, p1.Length) // from the cache; the third part is read ahead
	parts = loaded()
	if len(parts) != 3 || parts[2].Offset != p1.Offset+p1.Length {
		t.Fatalf("reading the second part loaded %+v; want only the third more", parts)
	}
	for off := int64(0); off < int64(len(want)); off += 7 {
		read(off, min(7, int64(len(want))-off))
	}
	// Each part was loaded once: nothing was read ahead twice or evicted.
	seen := map[int64]bool{}
	for _, p := range loaded() {
		if seen[p.Offset] {
			t.Fatalf("part at %d loaded twice: %+v", p.Offset, loaded())
		}
		seen[p.Offset] = true
	}
}
