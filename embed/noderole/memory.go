package noderole

import (
	"os"
	"runtime/debug"

	"github.com/sluice-streams/sluice/node"
	"github.com/sluice-streams/sluice/node/server"
)

// The node's memory is its block cache, the request memory of its server
// and a fixed rest; the Go runtime is told that sum as its soft memory
// limit (runtime/debug.SetMemoryLimit), so that the garbage collector
// runs before the heap's garbage takes it past the sum instead of letting
// the heap grow to twice what is live (GOGC=100): with a 256 MiB cache
// full, that was 520-680 MB of RSS for under 300 MB live.
const (
	// DefaultRequestMemory is the node role's server.Options.RequestMemory
	// (`--request-memory`): 32 MiB, an eighth of the server's own
	// default (one peer's share is still 16 MiB, a whole frame, as it is
	// at 64 MiB), so that the node's memory with the default limit stays
	// within the cache plus 128 MiB. An append is cached when it is
	// logged, so bytes waiting for their fsync are mostly the cache's
	// too; the request memory is for what is still being read.
	DefaultRequestMemory = 32 << 20
	// FixedMemory is the Go memory a node holds beside its cache and its
	// request memory (48 MiB): the WAL's write slabs (about 28 MiB under
	// load for four containers), the idle buffers of the catch-up part
	// pool (at most an eighth of the cache, package node), tiering's reads,
	// goroutine stacks and the runtime's own. The limit does not cover
	// memory outside Go's (the binary's code and data, about 20 MB of
	// RSS): with the defaults the process's RSS stays within the cache
	// plus about 100 MiB, and within the cache plus 128 MiB even when the
	// request memory and the part pool are full at once.
	FixedMemory = 48 << 20
)

// GoMemoryLimit is the Go soft memory limit for a process running this
// node role: Config.MemoryLimit if positive, else CacheSize plus the
// server's request memory plus FixedMemory.
func (c Config) GoMemoryLimit() int64 {
	if c.MemoryLimit > 0 {
		return c.MemoryLimit
	}
	cache := c.CacheSize
	if cache <= 0 {
		cache = node.DefaultCacheSize
	}
	req := c.Server.RequestMemory
	if req <= 0 {
		req = server.DefaultRequestMemory // what the server takes for 0
	}
	return cache + req + FixedMemory
}

// MemoryLimitSource says where the limit ApplyMemoryLimit sets comes
// from, for the log.
type MemoryLimitSource string

const (
	// MemoryLimitFlag: Config.MemoryLimit (`--memory-limit`).
	MemoryLimitFlag MemoryLimitSource = "--memory-limit"
	// MemoryLimitEnv: GOMEMLIMIT in the environment, which the runtime
	// applied at start; ApplyMemoryLimit leaves it.
	MemoryLimitEnv MemoryLimitSource = "GOMEMLIMIT"
	// MemoryLimitDerived: the cache, the request memory and FixedMemory.
	MemoryLimitDerived MemoryLimitSource = "cache + request memory + fixed"
)

// ApplyMemoryLimit sets the process's Go soft memory limit for a node
// role of cfg and returns the limit in force and where it comes from:
// Config.MemoryLimit if positive; else GOMEMLIMIT, if the environment
// sets it (GOMEMLIMIT=off turns the limit off); else cfg.GoMemoryLimit().
// The limit is the process's: call it once, from the program that runs
// the role (`sluice node`, `sluice standalone`), not from Start, which
// tests call for many nodes in one process.
func ApplyMemoryLimit(cfg Config) (int64, MemoryLimitSource) {
	if cfg.MemoryLimit <= 0 {
		if os.Getenv("GOMEMLIMIT") != "" {
			return debug.SetMemoryLimit(-1), MemoryLimitEnv
		}
	}
	limit, from := cfg.GoMemoryLimit(), MemoryLimitDerived
	if cfg.MemoryLimit > 0 {
		from = MemoryLimitFlag
	}
	debug.SetMemoryLimit(limit)
	return limit, from
}
