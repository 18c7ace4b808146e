package cache

import (
	"bytes"
	"sync"
	"testing"
)

func key(i int) Key { return Key{Container: 1, File: 1, Offset: int64(i)} }

func TestEvictsLeastRecentlyUsedWithinBound(t *testing.T) {
	block := bytes.Repeat([]byte("x"), 1000)
	c := New(3 * (1000 + entryOverhead))
	for i := 0; i < 3; i++ {
		c.Put(key(i), block)
	}
	if _, ok := c.Get(key(0)); !ok { // 0 is now the most recent
		t.Fatal("block 0 missing before the cache was full")
	}
	c.Put(key(3), block) // evicts 1, the least recently used
	if _, ok := c.Get(key(1)); ok {
		t.Fatal("block 1 should have been evicted")
	}
	for _, i := range []int{0, 2, 3} {
		if got, ok := c.Get(key(i)); !ok || !bytes.Equal(got, block) {
			t.Fatalf("block %d missing", i)
		}
	}
	st := c.Stats()
	if st.Bytes > c.Max() || st.Entries != 3 || st.Evictions != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOversizeBlockIsNotKept(t *testing.T) {
	c := New(100)
	c.Put(key(1), make([]byte, 200))
	if _, ok := c.Get(key(1)); ok {
		t.Fatal("a block larger than the cache was kept")
	}
	if st := c.Stats(); st.Bytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReplaceKeepsAccounting(t *testing.T) {
	c := New(10000)
	c.Put(key(1), make([]byte, 100))
	c.Put(key(1), make([]byte, 300))
	if st := c.Stats(); st.Bytes != 300+entryOverhead || st.Entries != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConcurrentUseStaysBounded(t *testing.T) {
	c := New(50 * 1024)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := Key{Container: uint32(g), Offset: int64(i % 300)}
				if _, ok := c.Get(k); !ok {
					c.Put(k, make([]byte, 512))
				}
			}
		}(g)
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > c.Max() {
		t.Fatalf("cache holds %d bytes, bound %d", st.Bytes, c.Max())
	}
}

// countRef counts holds; it fails the test if released more than held.
type countRef struct {
	t    *testing.T
	mu   sync.Mutex
	held int
}

func (r *countRef) Retain() { r.mu.Lock(); r.held++; r.mu.Unlock() }
func (r *countRef) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held--; r.held < 0 {
		r.t.Error("released more often than held")
	}
}
func (r *countRef) holds() int { r.mu.Lock(); defer r.mu.Unlock(); return r.held }

// TestRefsAreHeldWhileCachedAndRead: the cache holds one reference while
// a block is cached and GetRef one per reader; eviction, replacement and
// refusal release the cache's, never a reader's.
func TestRefsAreHeldWhileCachedAndRead(t *testing.T) {
	c := New(2 * (100 + entryOverhead))
	a := &countRef{t: t, held: 1} // the caller's hold, handed to the cache
	c.PutRef(key(1), make([]byte, 100), a)
	data, ref, ok := c.GetRef(key(1))
	if !ok || len(data) != 100 || ref != a || a.holds() != 2 {
		t.Fatalf("GetRef: ok %v, ref %v, holds %d; want the block and 2 holds", ok, ref, a.holds())
	}
	if !c.Has(key(1)) || c.Has(key(9)) {
		t.Fatal("Has disagrees with the contents")
	}
	// Evicted by two newer blocks: the cache's hold goes, the reader's stays.
	c.PutRef(key(2), make([]byte, 100), &countRef{t: t, held: 1})
	c.Put(key(3), make([]byte, 100))
	if c.Has(key(1)) || a.holds() != 1 {
		t.Fatalf("after eviction: cached %v, holds %d; want gone with the reader's hold", c.Has(key(1)), a.holds())
	}
	ref.Release()
	if a.holds() != 0 {
		t.Fatalf("holds %d after the reader's release", a.holds())
	}
	// Replaced: the old block's hold goes.
	b, b2 := &countRef{t: t, held: 1}, &countRef{t: t, held: 1}
	c.PutRef(key(4), make([]byte, 10), b)
	c.PutRef(key(4), make([]byte, 10), b2)
	if b.holds() != 0 || b2.holds() != 1 {
		t.Fatalf("after replacement: old holds %d, new %d", b.holds(), b2.holds())
	}
	// Too large to keep: released at once.
	big := &countRef{t: t, held: 1}
	c.PutRef(key(5), make([]byte, 1000), big)
	if big.holds() != 0 || c.Has(key(5)) {
		t.Fatalf("an oversize block: holds %d, cached %v", big.holds(), c.Has(key(5)))
	}
	// A plain block has no ref.
	if _, ref, ok := c.GetRef(key(3)); !ok || ref != nil {
		t.Fatalf("plain block: ok %v, ref %v", ok, ref)
	}
}

// A block that is a short slice of a large buffer counts the buffer: the
// cache bounds the memory it keeps alive, not the bytes it serves.
func TestBlockCountsTheMemoryItKeepsAlive(t *testing.T) {
	c := New(1 << 20)
	buf := make([]byte, 100, 64<<10)
	c.Put(key(1), buf)
	if st := c.Stats(); st.Bytes != 64<<10+entryOverhead {
		t.Fatalf("a 100-byte slice of a 64 KiB buffer counts %d bytes, want %d", st.Bytes, 64<<10+entryOverhead)
	}
	// Sixteen such blocks hold 1 MiB: the cache keeps fewer.
	for i := 2; i <= 16; i++ {
		c.Put(key(i), make([]byte, 100, 64<<10))
	}
	if st := c.Stats(); st.Bytes > c.Max() || st.Entries >= 16 || st.Evictions == 0 {
		t.Fatalf("stats %+v: want at most %d bytes held, so fewer than 16 entries", st, c.Max())
	}
	// Replacing a block with a smaller buffer gives the difference back.
	c.Put(key(16), make([]byte, 100))
	if got, ok := c.Get(key(16)); !ok || len(got) != 100 {
		t.Fatalf("key 16: %d bytes, %v", len(got), ok)
	}
	want := int64(0)
	for i := 1; i <= 16; i++ {
		if d, ok := c.Get(key(i)); ok {
			want += int64(cap(d)) + entryOverhead
		}
	}
	if st := c.Stats(); st.Bytes != want {
		t.Fatalf("stats %+v, want %d bytes: the replaced block's buffer not given back", st, want)
	}
}
