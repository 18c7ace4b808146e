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
