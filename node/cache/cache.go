package cache

import (
	"container/list"
	"sync"
)

// entryOverhead approximates the bookkeeping bytes of one entry, so that a
// cache of many small blocks is bounded too.
const entryOverhead = 96

// Key names a block: the container it belongs to and where its record
// starts in that container's log.
type Key struct {
	Container uint32
	File      uint64
	Offset    int64
}

// Stats are the cache's counters.
type Stats struct {
	Bytes     int64 // bytes held now, overhead included
	Entries   int
	Hits      uint64
	Misses    uint64
	Evictions uint64
}

// Cache is a byte-bounded LRU cache of immutable blocks, safe for
// concurrent use.
type Cache struct {
	max int64
	mu  struct {
		sync.Mutex
		lru     list.List // front = most recently used; values are *entry
		byKey   map[Key]*list.Element
		size    int64
		hits    uint64
		misses  uint64
		evicted uint64
	}
}

type entry struct {
	key  Key
	data []byte
	ref  Ref // nil for memory the garbage collector reclaims
}

// Ref counts the holders of a block's memory, so that its owner can reuse
// the memory once nobody holds it (a pool). Retain adds a holder; Release
// drops one.
type Ref interface {
	Retain()
	Release()
}

// New makes a cache that holds at most maxBytes.
func New(maxBytes int64) *Cache {
	c := &Cache{max: maxBytes}
	c.mu.byKey = make(map[Key]*list.Element)
	return c
}

// Get returns the block under k. The slice must not be modified. For a
// block put with PutRef, use GetRef.
func (c *Cache) Get(k Key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.byKey[k]
	if !ok {
		c.mu.misses++
		return nil, false
	}
	c.mu.hits++
	c.mu.lru.MoveToFront(el)
	return el.Value.(*entry).data, true
}

// GetRef returns the block under k and, if it was put with a Ref, that
// Ref retained for the caller, who must Release it once done with the
// slice (the memory may be reused after). ref is nil for a block put with
// Put.
func (c *Cache) GetRef(k Key) (data []byte, ref Ref, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.byKey[k]
	if !ok {
		c.mu.misses++
		return nil, nil, false
	}
	c.mu.hits++
	c.mu.lru.MoveToFront(el)
	e := el.Value.(*entry)
	if e.ref != nil {
		e.ref.Retain()
	}
	return e.data, e.ref, true
}

// Has reports whether a block is cached under k, without counting a hit
// or a miss.
func (c *Cache) Has(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.mu.byKey[k]
	return ok
}

// Put stores a block under k, evicting the least recently used blocks to
// stay within the bound. A block larger than the whole cache is not kept.
// The cache takes the slice as it is: the caller must not modify it after.
func (c *Cache) Put(k Key, data []byte) { c.PutRef(k, data, nil) }

// PutRef is Put for memory counted by ref: the cache takes over one of
// the caller's holds and releases it when the block leaves the cache
// (evicted, replaced, or not kept at all).
func (c *Cache) PutRef(k Key, data []byte, ref Ref) {
	var released []Ref
	defer func() { // outside the lock: a release may return memory to a pool
		for _, r := range released {
			r.Release()
		}
	}()
	cost := blockCost(data)
	if cost > c.max {
		if ref != nil {
			released = append(released, ref)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.mu.byKey[k]; ok {
		e := el.Value.(*entry)
		c.mu.size += cost - blockCost(e.data)
		if e.ref != nil {
			released = append(released, e.ref)
		}
		e.data, e.ref = data, ref
		c.mu.lru.MoveToFront(el)
	} else {
		c.mu.byKey[k] = c.mu.lru.PushFront(&entry{key: k, data: data, ref: ref})
		c.mu.size += cost
	}
	for c.mu.size > c.max {
		el := c.mu.lru.Back()
		e := el.Value.(*entry)
		c.mu.lru.Remove(el)
		delete(c.mu.byKey, e.key)
		c.mu.size -= blockCost(e.data)
		c.mu.evicted++
		if e.ref != nil {
			released = append(released, e.ref)
		}
	}
}

// blockCost is what a cached block counts against the bound: the memory
// the slice keeps alive from its start to the end of its capacity (a
// block that is a slice of a larger buffer, a frame's or a pooled part's,
// keeps all of that reachable), plus the entry's bookkeeping.
func blockCost(data []byte) int64 { return int64(cap(data)) + entryOverhead }

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Bytes:     c.mu.size,
		Entries:   c.mu.lru.Len(),
		Hits:      c.mu.hits,
		Misses:    c.mu.misses,
		Evictions: c.mu.evicted,
	}
}

// Max is the bound the cache keeps to.
func (c *Cache) Max() int64 { return c.max }
