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
}

// New makes a cache that holds at most maxBytes.
func New(maxBytes int64) *Cache {
	c := &Cache{max: maxBytes}
	c.mu.byKey = make(map[Key]*list.Element)
	return c
}

// Get returns the block under k. The slice must not be modified.
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

// Put stores a block under k, evicting the least recently used blocks to
// stay within the bound. A block larger than the whole cache is not kept.
// The cache takes the slice as it is: the caller must not modify it after.
func (c *Cache) Put(k Key, data []byte) {
	cost := int64(len(data)) + entryOverhead
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.mu.byKey[k]; ok {
		e := el.Value.(*entry)
		c.mu.size += int64(len(data)) - int64(len(e.data))
		e.data = data
		c.mu.lru.MoveToFront(el)
	} else {
		c.mu.byKey[k] = c.mu.lru.PushFront(&entry{key: k, data: data})
		c.mu.size += cost
	}
	for c.mu.size > c.max {
		el := c.mu.lru.Back()
		e := el.Value.(*entry)
		c.mu.lru.Remove(el)
		delete(c.mu.byKey, e.key)
		c.mu.size -= int64(len(e.data)) + entryOverhead
		c.mu.evicted++
	}
}

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
