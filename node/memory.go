package node

import "github.com/sluice-streams/sluice/node/container"

// partPoolBuffers is how many idle catch-up part buffers the node's pool
// keeps for a cache of cacheSize bytes: an eighth of the cache in
// buffers of container.MaxReadSize, at least two (a part being read and
// the one read ahead, or a part and the next, larger one) and at most
// container.DefaultPartPoolBuffers (reached at the default 256 MiB
// cache). The idle buffers are memory beside the cache; a small cache
// says the node's memory is small, and a catch-up reader of a small cache
// has fewer parts in flight anyway (the read-ahead wants four parts to
// fit in the cache).
func partPoolBuffers(cacheSize int64) int {
	n := cacheSize / (8 * container.MaxReadSize)
	return int(min(max(n, 2), container.DefaultPartPoolBuffers))
}
