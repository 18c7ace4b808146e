// Package cache is the node's bounded block cache: the bytes of recent
// append blocks, shared by all containers of a node, evicted least recently
// used first once their total passes a configured size. A block counts
// the memory its slice keeps alive, its capacity rather than its length,
// so that the bound is on memory held, not on bytes served: the node's
// memory limit (embed/noderole) is the cache size plus a fixed margin.
//
// It is a few dozen lines over container/list rather than a library: the
// node needs eviction by bytes (not entry count) and immutable slices handed
// out without copying; the common LRU libraries count entries, and the
// cost-based ones admit probabilistically, which would make read latency
// hard to reason about.
//
// Cached slices are never modified, by the cache or by its users; an
// evicted slice stays valid for whoever still holds it. A block put with
// PutRef is the exception that makes memory reusable: its owner counts
// holders (Ref), the cache holds one while the block is cached and
// GetRef retains one for each reader; once the count falls to zero the
// owner may reuse the memory, so a reader must not touch the slice after
// its Release.
package cache
